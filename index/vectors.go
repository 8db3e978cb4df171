package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Embeddings of exchanges, one per exchange and embedder identity. The
// identity names whatever makes two vectors comparable (provider, model,
// dimensions); vectors of other identities are ignored by the searches
// and removed by PruneVectors. A vector is stored as float32
// little-endian.

// EmbedItem is an exchange to embed.
type EmbedItem struct {
	Row  int64  // events.id
	Text string // user and ai, trimmed, joined by a blank line
}

// EmbedText is the text embedded for an exchange: user and ai trimmed,
// separated by a blank line when both are present.
func EmbedText(user, ai string) string {
	user, ai = strings.TrimSpace(user), strings.TrimSpace(ai)
	switch {
	case user == "":
		return ai
	case ai == "":
		return user
	}
	return user + "\n\n" + ai
}

// PendingEmbeddings returns up to limit exchanges (all when limit <= 0)
// that have no vector for identity, oldest row first.
//
// The embed worker calls it again and again while it catches up; to keep
// each call proportional to limit and not to the size of the index, db
// remembers per identity a row below which every exchange has a vector
// (the first pending row it returned) and starts there next time. That
// holds until rows or vectors are deleted, which is why DeleteSession
// and PruneVectors bump a counter (counterPendingEpoch) that invalidates
// the remembered rows, in this process and any other.
func (db *DB) PendingEmbeddings(ctx context.Context, identity string, limit int) (items []EmbedItem, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: pending embeddings for %s: %w", identity, err)
		}
	}()
	if limit <= 0 {
		limit = -1
	}
	// One read transaction: the epoch, the rows and the new hint come
	// from the same snapshot.
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var epoch int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT value FROM counters WHERE name = ?), 0)`,
		counterPendingEpoch).Scan(&epoch); err != nil {
		return nil, err
	}
	from := db.pendingFrom(identity, epoch)
	rows, err := tx.QueryContext(ctx, pendingEmbeddingsSQL, from, identity, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var it EmbedItem
		var user, ai string
		if err := rows.Scan(&it.Row, &user, &ai); err != nil {
			return nil, err
		}
		it.Text = EmbedText(user, ai)
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if len(items) > 0 {
		from = items[0].Row
	} else {
		// Nothing pending: every row stored so far is done; new ones
		// will come after the last.
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM events`).Scan(&from); err != nil {
			return nil, err
		}
	}
	db.setPendingFrom(identity, epoch, from)
	return items, nil
}

// pendingEmbeddingsSQL lists the exchanges from a row id on (parameter 1)
// without a vector of an identity (2), at most a number (3).
//
// It walks row ids in events_meta and reads a row (its texts) only for
// one it returns: whether an exchange has its vector and whether an event
// is not an exchange are both decided from indexes (vectors' key,
// events_other), and SQLite reads a row only for the columns it returns.
// A test on the type itself would read every row from the start (and the
// start is row 0 in a new process). typecounts_test.go checks the plan.
const pendingEmbeddingsSQL = `SELECT id, coalesce(user, ''), coalesce(ai, '') FROM events INDEXED BY events_meta
	WHERE id >= ?
	AND NOT EXISTS (SELECT 1 FROM vectors WHERE event = events.id AND embedder = ` + embedderKeySQL + `)
	AND id NOT IN (` + otherIDsSQL + `)
	ORDER BY id LIMIT ?`

// embedderKeySQL is the integer key of the identity given as parameter
// (NULL when it has none yet: then it matches no vector).
const embedderKeySQL = `(SELECT id FROM embedders WHERE identity = ?)`

// counterPendingEpoch counts the operations that may make exchanges
// pending again below a row PendingEmbeddings remembered: deleting
// events (their row ids may be reused) and deleting vectors.
const counterPendingEpoch = "pending_epoch"

type pendingHint struct {
	epoch, from int64
}

func (db *DB) pendingFrom(identity string, epoch int64) int64 {
	db.hintMu.Lock()
	defer db.hintMu.Unlock()
	if h, ok := db.hints[identity]; ok && h.epoch == epoch {
		return h.from
	}
	return 0
}

func (db *DB) setPendingFrom(identity string, epoch, from int64) {
	db.hintMu.Lock()
	defer db.hintMu.Unlock()
	if db.hints == nil {
		db.hints = map[string]pendingHint{}
	}
	// Two calls may finish out of order; with the same epoch both rows
	// are right, and the higher one saves more.
	if h, ok := db.hints[identity]; ok && h.epoch == epoch && h.from > from {
		return
	}
	db.hints[identity] = pendingHint{epoch: epoch, from: from}
}

// bumpPendingEpoch is called in the transactions that delete events or
// vectors.
func bumpPendingEpoch(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, addCounterSQL, counterPendingEpoch, 1)
	return err
}

// CountPending returns how many exchanges have no vector for identity.
func (db *DB) CountPending(ctx context.Context, identity string) (int64, error) {
	// Vectors are only stored for exchanges and leave with them, so the
	// difference of two index-only counts is exact.
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT `+countExchangesSQL+`
		- (SELECT count(*) FROM vectors WHERE embedder = `+embedderKeySQL+`)`, identity).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("index: count pending embeddings for %s: %w", identity, err)
	}
	return n, nil
}

// StoreVectors stores vecs[i] as the vector of exchange rows[i] for
// identity, replacing any, in one transaction, quantised (vectorcodec.go).
// vecs[i] may hold several vectors of the space one after the other
// (VectorsPerIdentity: the prompt's and the answer's), each quantised with
// its own scale; the index counts them as one per exchange. Rows that are not (or no
// longer) exchanges in the index are skipped: an exchange may be deleted
// while it is being embedded. All vectors of an identity have the same
// dimension; a vector of another length is an error and nothing is stored.
func (db *DB) StoreVectors(ctx context.Context, identity string, rows []int64, vecs [][]float32) (err error) {
	w, err := db.writer()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: store vectors for %s: %w", identity, err)
		}
	}()
	if identity == "" {
		return errors.New("empty embedder identity")
	}
	if len(rows) != len(vecs) {
		return fmt.Errorf("%d rows but %d vectors", len(rows), len(vecs))
	}
	if len(rows) == 0 {
		return nil
	}
	dim := len(vecs[0])
	per := VectorsPerIdentity(identity)
	for i, v := range vecs {
		if len(v) == 0 || len(v) != dim {
			return fmt.Errorf("vector for row %d has %d dimensions, want %d", rows[i], len(v), dim)
		}
	}
	if dim%per != 0 {
		return fmt.Errorf("vectors of %d components are not %d vectors of one dimension", dim, per)
	}
	blobLen := int64(dim + 4*per) // per × (scale + dim/per codes)

	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO embedders (identity) VALUES (?) ON CONFLICT (identity) DO NOTHING`, identity); err != nil {
		return err
	}
	var key int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM embedders WHERE identity = ?`, identity).Scan(&key); err != nil {
		return err
	}
	var stored sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT length(vec) FROM vectors WHERE embedder = ? LIMIT 1`, key).
		Scan(&stored); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if stored.Valid && stored.Int64 != blobLen {
		return fmt.Errorf("vectors of %d dimensions, but the stored ones have %d", dim, stored.Int64-int64(4*per))
	}
	c := context.WithoutCancel(ctx)
	check, err := tx.PrepareContext(c, `SELECT EXISTS (SELECT 1 FROM events WHERE id = ? AND type = 'exchange')`)
	if err != nil {
		return err
	}
	defer check.Close()
	// A single-row VALUES insert: unlike INSERT ... SELECT it needs no
	// statement journal.
	ins, err := tx.PrepareContext(c, `INSERT INTO vectors (event, embedder, vec) VALUES (?, ?, ?)
		ON CONFLICT (event, embedder) DO UPDATE SET vec = excluded.vec`)
	if err != nil {
		return err
	}
	defer ins.Close()
	insHeads, err := tx.PrepareContext(c, `INSERT INTO vector_signs (event, embedder, heads) VALUES (?, ?, ?)
		ON CONFLICT (event, embedder) DO UPDATE SET heads = excluded.heads`)
	if err != nil {
		return err
	}
	defer insHeads.Close()
	buf := make([]byte, 0, blobLen)
	var heads []byte
	for i, row := range rows {
		var ok bool
		if err := check.QueryRowContext(c, row).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			continue
		}
		buf = encodeQuantized(buf[:0], vecs[i], per)
		if _, err := ins.ExecContext(c, row, key, buf); err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		// Its heads (vectorsigns.go), in the same transaction.
		if heads, err = appendHeads(heads[:0], buf, per); err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		if _, err := insHeads.ExecContext(c, row, key, heads); err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
	}
	return tx.Commit()
}

// EachVector calls fn for every vector of identity, by row id, with the
// exchange's session ("" when it has none) and timestamp (unix
// nanoseconds). It reads one row at a time; q (the exchange's
// VectorsPerIdentity vectors) is valid only until fn returns. An error
// from fn stops the walk and is returned as is.
func (db *DB) EachVector(ctx context.Context, identity string, fn func(row int64, session string, ts int64, q Quantized) error) error {
	return db.EachVectorIn(ctx, identity, 0, math.MaxInt64, fn)
}

// VectorRows returns the smallest and largest row that has a vector of
// identity (0, 0 when none does): two index lookups, so that a caller can
// cut the rows into ranges read in parallel (EachVectorIn).
func (db *DB) VectorRows(ctx context.Context, identity string) (lo, hi int64, err error) {
	err = db.r.QueryRowContext(ctx, `SELECT coalesce((SELECT min(event) FROM vectors WHERE embedder = `+embedderKeySQL+`), 0),
		coalesce((SELECT max(event) FROM vectors WHERE embedder = `+embedderKeySQL+`), 0)`, identity, identity).Scan(&lo, &hi)
	if err != nil {
		return 0, 0, fmt.Errorf("index: vector rows of %s: %w", identity, err)
	}
	return lo, hi, nil
}

// VectorsUpTo returns how many vectors identity has for rows up to upTo,
// and the counter that deleting events or vectors bumps: together they
// tell whether a copy of the vectors taken when they had these values is
// still the index's (search's snapshot of the vector space).
func (db *DB) VectorsUpTo(ctx context.Context, identity string, upTo int64) (count, epoch int64, err error) {
	err = db.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vectors WHERE embedder = `+embedderKeySQL+` AND event <= ?),
		coalesce((SELECT value FROM counters WHERE name = ?), 0)`, identity, upTo, counterPendingEpoch).Scan(&count, &epoch)
	if err != nil {
		return 0, 0, fmt.Errorf("index: vectors of %s up to row %d: %w", identity, upTo, err)
	}
	return count, epoch, nil
}

// EachVectorIn is EachVector for the rows from <= row < to.
func (db *DB) EachVectorIn(ctx context.Context, identity string, from, to int64, fn func(row int64, session string, ts int64, q Quantized) error) error {
	return eachStoredWithMeta(ctx, db, `SELECT v.event, e.session_id, e.ts, v.vec
		FROM vectors v JOIN events e INDEXED BY events_meta ON e.id = v.event
		WHERE v.embedder = `+embedderKeySQL+` AND v.event >= ? AND v.event < ? ORDER BY v.event`,
		[]any{identity, from, to}, identity, "vectors", decodeQuantized, fn)
}

// eachStoredWithMeta runs query with args (it selects row, session, time
// and a blob of identity's rows, in row order), decodes each row's
// blob into one reused T (valid only until fn returns) and calls fn with
// it, the row's session and time: the stream of EachVectorIn and
// EachVectorHeadIn, which a start reads whole. what names the data in
// errors.
func eachStoredWithMeta[T any](ctx context.Context, db *DB, query string, args []any, identity, what string,
	decode func(*T, []byte, int) error, fn func(row int64, session string, ts int64, v T) error) error {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("index: %s of %s: %w", what, identity, err)
	}
	defer rows.Close()
	per := VectorsPerIdentity(identity)
	var (
		session    string // the previous row's: consecutive rows mostly share it
		rawSession sql.RawBytes
		raw        sql.RawBytes
		v          T
	)
	for rows.Next() {
		var row, ts int64
		if err := rows.Scan(&row, &rawSession, &ts, &raw); err != nil {
			return fmt.Errorf("index: %s of %s: %w", what, identity, err)
		}
		if string(rawSession) != session {
			session = string(rawSession)
		}
		if err := decode(&v, raw, per); err != nil {
			return fmt.Errorf("index: %s of row %d for %s: %w", what, row, identity, err)
		}
		if err := fn(row, session, ts, v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("index: %s of %s: %w", what, identity, err)
	}
	return nil
}

// PruneVectors deletes the vectors of every identity but keepIdentity and
// returns how many it deleted.
func (db *DB) PruneVectors(ctx context.Context, keepIdentity string) (int64, error) {
	n, err := db.deleteVectors(ctx, `embedder IS NOT `+embedderKeySQL, keepIdentity)
	if err != nil {
		return 0, fmt.Errorf("index: prune vectors but %s: %w", keepIdentity, err)
	}
	return n, nil
}

// DropVectors deletes the vectors of identity (another embedder's, kept
// until the user removes them) and returns how many it deleted.
func (db *DB) DropVectors(ctx context.Context, identity string) (int64, error) {
	n, err := db.deleteVectors(ctx, `embedder = `+embedderKeySQL, identity)
	if err != nil {
		return 0, fmt.Errorf("index: drop the vectors of %s: %w", identity, err)
	}
	return n, nil
}

// deleteVectors deletes the vectors matching where (with arg).
func (db *DB) deleteVectors(ctx context.Context, where string, arg any) (int64, error) {
	w, err := db.writer()
	if err != nil {
		return 0, err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE `+where, arg)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return 0, err
	}
	if err := bumpPendingEpoch(ctx, tx); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// VectorSet is what the index stores of one embedder's vectors.
type VectorSet struct {
	Identity string `json:"embedder"`
	Vectors  int64  `json:"vectors"`
	Bytes    int64  `json:"bytes"` // of the vectors themselves, int8 with their scales (the table's rows take a little more)
}

// VectorSets lists the stored vectors by embedder identity, by identity.
func (db *DB) VectorSets(ctx context.Context) ([]VectorSet, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT e.identity, count(*), coalesce(sum(length(v.vec)), 0) FROM vectors v JOIN embedders e ON e.id = v.embedder
		GROUP BY e.identity ORDER BY e.identity`)
	if err != nil {
		return nil, fmt.Errorf("index: vector sets: %w", err)
	}
	defer rows.Close()
	var out []VectorSet
	for rows.Next() {
		var v VectorSet
		if err := rows.Scan(&v.Identity, &v.Vectors, &v.Bytes); err != nil {
			return nil, fmt.Errorf("index: vector sets: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
