package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Vector heads (schema version 13): for each row of the vectors table, in
// vector_signs, what a large vector space keeps in memory of it: each
// vector's scale (float32 little-endian) and its sign code (one bit per
// component, set when the int8 component is positive: SignCode; uint64
// words, little-endian), per·(4 + 8·⌈dim/64⌉) bytes, 136 for two vectors
// of 512 components against the row's 1,032.
//
// It is not a second copy of the vectors: a sign code cannot give back a
// score, only which vectors are worth scoring (package vectors,
// preselect.go). It is derived from the vectors table, like an index of
// it: StoreVectors writes both in one transaction, a trigger deletes a
// head with its vector (forgets, edits and drops delete vectors, by
// cascade or not), and the migration to version 13 derives the heads of
// the vectors stored before. A space past its memory threshold is loaded
// from these heads (about 140 MB at 1M exchanges instead of the 1 GB of
// codes) and reads the int8 codes of its candidates from the vectors
// table at query time (VectorCodes).

// SignCode sets the bits of dst (len(code)/64 words, rounded up) to the
// signs of code: bit j is set when component j is positive.
func SignCode(dst []uint64, code []int8) {
	for w := range dst {
		part := code[min(64*w, len(code)):min(64*w+64, len(code))]
		var x uint64
		for k, c := range part {
			// 1 when c > 0, else 0, without a branch (signs are random).
			x |= uint64((int32(c)-1)>>31+1) << k
		}
		dst[w] = x
	}
}

// SignWords is how many uint64 words the sign code of a vector of dim
// components takes.
func SignWords(dim int) int { return (dim + 63) / 64 }

// appendHeads appends to buf the heads of a stored vector blob (per
// vectors, vectorcodec.go): each vector's scale bytes as they are, then
// its sign code.
func appendHeads(buf, blob []byte, per int) ([]byte, error) {
	if per <= 0 || len(blob)%per != 0 || len(blob)/per <= 4 {
		return nil, fmt.Errorf("%d bytes are not %d quantised vectors", len(blob), per)
	}
	dim := len(blob)/per - 4
	words := make([]uint64, SignWords(dim))
	for k := range per {
		o := k * (4 + dim)
		buf = append(buf, blob[o:o+4]...)
		SignCode(words, int8s(blob[o+4:o+4+dim]))
		for _, w := range words {
			buf = binary.LittleEndian.AppendUint64(buf, w)
		}
	}
	return buf, nil
}

// Heads is an exchange's vector heads: Per vectors' scales and sign codes
// (Words uint64 each, one after the other).
type Heads struct {
	Words  int
	Scales []float32
	Signs  []uint64
}

// decodeHeads reads a stored heads blob of per vectors into h, whose
// slices are reused.
func decodeHeads(h *Heads, b []byte, per int) error {
	if per <= 0 || len(b)%per != 0 || (len(b)/per-4)%8 != 0 || len(b)/per <= 4 {
		return fmt.Errorf("%d bytes are not the heads of %d vectors", len(b), per)
	}
	h.Words = (len(b)/per - 4) / 8
	h.Scales, h.Signs = h.Scales[:0], h.Signs[:0]
	for k := range per {
		o := k * (4 + 8*h.Words)
		h.Scales = append(h.Scales, math.Float32frombits(binary.LittleEndian.Uint32(b[o:])))
		for w := range h.Words {
			h.Signs = append(h.Signs, binary.LittleEndian.Uint64(b[o+4+8*w:]))
		}
	}
	return nil
}

// vectorSignsSQL is schema version 13's table and trigger.
const vectorSignsSQL = `
CREATE TABLE vector_signs (
	event    INTEGER NOT NULL,
	embedder INTEGER NOT NULL,
	heads    BLOB    NOT NULL,
	PRIMARY KEY (event, embedder)
) WITHOUT ROWID;
CREATE TRIGGER vectors_heads_delete AFTER DELETE ON vectors BEGIN
	DELETE FROM vector_signs WHERE event = old.event AND embedder = old.embedder;
END;
`

// deriveVectorSigns (version 13) writes the heads of every stored vector.
func deriveVectorSigns(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT v.event, v.embedder, e.identity, v.vec FROM vectors v
		JOIN embedders e ON e.id = v.embedder ORDER BY v.event, v.embedder`)
	if err != nil {
		return fmt.Errorf("read vectors: %w", err)
	}
	defer rows.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO vector_signs (event, embedder, heads) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	var (
		raw sql.RawBytes
		buf []byte
	)
	for rows.Next() {
		var event, key int64
		var identity string
		if err := rows.Scan(&event, &key, &identity, &raw); err != nil {
			return fmt.Errorf("read vectors: %w", err)
		}
		if buf, err = appendHeads(buf[:0], raw, VectorsPerIdentity(identity)); err != nil {
			return fmt.Errorf("vector of row %d for %s: %w", event, identity, err)
		}
		if _, err := ins.ExecContext(ctx, event, key, buf); err != nil {
			return fmt.Errorf("store the heads of row %d: %w", event, err)
		}
	}
	return rows.Err()
}

// VectorDim returns the dimension of identity's vectors (0 when it has
// none).
func (db *DB) VectorDim(ctx context.Context, identity string) (int, error) {
	var n sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT length(vec) FROM vectors WHERE embedder = `+embedderKeySQL+` LIMIT 1`, identity).Scan(&n)
	if err != nil && err != sql.ErrNoRows {
		return 0, fmt.Errorf("index: vector dimension of %s: %w", identity, err)
	}
	if !n.Valid {
		return 0, nil
	}
	return int(n.Int64)/VectorsPerIdentity(identity) - 4, nil
}

// CountVectors returns how many exchanges have a vector of identity.
func (db *DB) CountVectors(ctx context.Context, identity string) (int64, error) {
	var n int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM vectors WHERE embedder = `+embedderKeySQL, identity).Scan(&n); err != nil {
		return 0, fmt.Errorf("index: count the vectors of %s: %w", identity, err)
	}
	return n, nil
}

// EachVectorHeadIn calls fn for the heads of every vector of identity of
// the rows from <= row < to, by row id, with the exchange's session and
// timestamp, as EachVectorIn does for the vectors; h is valid only until
// fn returns.
func (db *DB) EachVectorHeadIn(ctx context.Context, identity string, from, to int64, fn func(row int64, session string, ts int64, h Heads) error) error {
	return eachStoredWithMeta(ctx, db, `SELECT s.event, e.session_id, e.ts, s.heads
		FROM vector_signs s JOIN events e INDEXED BY events_meta ON e.id = s.event
		WHERE s.event >= ? AND s.event < ? AND s.embedder = `+embedderKeySQL+` ORDER BY s.event`,
		[]any{from, to, identity}, identity, "vector heads", decodeHeads, fn)
}

// VectorCodes calls fn with the stored vectors of identity of each of
// rows (ascending, distinct), in that order; a row without one (deleted
// meanwhile) is skipped. q's codes are valid only until fn returns. One
// statement for all: its rows are sought in the vectors' index one after
// the other.
func (db *DB) VectorCodes(ctx context.Context, identity string, rows []int64, fn func(row int64, q Quantized) error) error {
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.Grow(len(rows) * 8)
	b.WriteByte('[')
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(r, 10))
	}
	b.WriteByte(']')
	res, err := db.r.QueryContext(ctx, `SELECT event, vec FROM vectors
		WHERE embedder = `+embedderKeySQL+` AND event IN (SELECT value FROM json_each(?)) ORDER BY event`, identity, b.String())
	if err != nil {
		return fmt.Errorf("index: vectors of %d rows of %s: %w", len(rows), identity, err)
	}
	defer res.Close()
	per := VectorsPerIdentity(identity)
	var (
		raw sql.RawBytes
		q   Quantized
	)
	for res.Next() {
		var row int64
		if err := res.Scan(&row, &raw); err != nil {
			return fmt.Errorf("index: vectors of %s: %w", identity, err)
		}
		if err := decodeQuantized(&q, raw, per); err != nil {
			return fmt.Errorf("index: vector of row %d for %s: %w", row, identity, err)
		}
		if err := fn(row, q); err != nil {
			return err
		}
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("index: vectors of %s: %w", identity, err)
	}
	return nil
}
