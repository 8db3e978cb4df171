package index

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/watcher"
)

// Counter names in the counters table.
const (
	// CounterDuplicatesSkipped counts lines not stored because an event
	// with the same producer id is already stored.
	CounterDuplicatesSkipped = "duplicates_skipped"
	// CounterUnknownTypes counts stored events of a type this version of
	// the protocol does not know.
	CounterUnknownTypes = "unknown_types"
	// CounterUnknownFields counts stored events with at least one
	// top-level field this version of the protocol does not know.
	CounterUnknownFields = "unknown_fields"
	// CounterForgottenSkipped counts valid lines not stored because their
	// session was deleted with DeleteSession.
	CounterForgottenSkipped = "forgotten_skipped"
	// CounterTimestampsNoOffset counts stored events whose timestamp had no
	// UTC offset and was read in the daemon's local time zone.
	CounterTimestampsNoOffset = "timestamps_without_offset"
	// CounterTimestampsAhead counts stored events dated after the moment
	// they were read (by more than AheadTolerance): a producer's clock
	// ahead, or local time written with "Z".
	CounterTimestampsAhead = "timestamps_ahead"
	// CounterAIFromAlias counts stored exchanges whose answer was given as
	// "assistant", the alias of "ai".
	CounterAIFromAlias = "ai_from_alias"
	// CounterUnknownFieldPrefix, followed by a field name, counts the
	// stored events of a known type carrying that unknown top-level field
	// (names up to 64 bytes): status names them, so that an answer written
	// as "response" does not go unnoticed.
	CounterUnknownFieldPrefix = "unknown_field:"
	// CounterBOMsSkipped counts the UTF-8 byte order marks skipped at
	// the start of a file (watcher.Line.BOM).
	CounterBOMsSkipped = "byte_order_marks_skipped"
	// CounterEventSeq is the highest event row id ever given.
	CounterEventSeq = "event_seq"
)

const (
	insertRejectSQL = `INSERT INTO rejects (generation, file, line, start_offset, end_offset, reason, kind, excerpt, created_at, hash, line_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`
	upsertSessionSQL = `INSERT INTO sessions (id, first_ts, last_ts, exchanges, resets, events)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			first_ts  = min(first_ts, excluded.first_ts),
			last_ts   = max(last_ts, excluded.last_ts),
			exchanges = exchanges + excluded.exchanges,
			resets    = resets + excluded.resets,
			events    = events + excluded.events`
	insertLinkSQL = `INSERT INTO session_links (previous, new, event, ts) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING`
	addCounterSQL = `INSERT INTO counters (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = value + excluded.value`
)

// sessionDelta accumulates one batch's changes to a sessions row.
type sessionDelta struct {
	first, last               int64
	exchanges, resets, events int64
}

// commitTx holds the statements of one Commit transaction, prepared on
// first use.
type commitTx struct {
	db    *DB
	ctx   context.Context
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	// seq is the highest event row id given so far (CounterEventSeq);
	// each stored event gets the next.
	seq int64
	// events holds the event inserts prepared so far, by shape
	// (eventShape).
	events map[eventShape]*sql.Stmt
	args   []any // insertEvent's, reused
}

func (c *commitTx) exec(query string, args ...any) (sql.Result, error) {
	s, ok := c.stmts[query]
	if !ok {
		var err error
		if s, err = c.tx.PrepareContext(c.ctx, query); err != nil {
			return nil, err
		}
		c.stmts[query] = s
	}
	return s.ExecContext(c.ctx, args...)
}

func (c *commitTx) close() {
	for _, s := range c.stmts {
		s.Close()
	}
	for _, s := range c.events {
		s.Close()
	}
}

// Commit stores the batch's lines and advances the generation to b.Gen in
// one transaction: after a crash either both happened or neither.
//
// Each line becomes an event, or a reject when it is oversize or invalid.
// A line is stored at most once: lines that end at or before the
// generation's stored offset were handled by an earlier commit and are
// skipped outright (so a replayed batch changes nothing, counters
// included), and a line whose (generation, start offset) is already
// stored is skipped too. A valid line whose producer id is already stored
// is not stored again and counts in CounterDuplicatesSkipped. A valid line
// of a session deleted by DeleteSession, without a timestamp or with one at
// or before the deletion, is not stored: it counts in
// CounterForgottenSkipped and is recorded as a reject of KindForgotten,
// without excerpt. Lines of that session timestamped after the deletion
// are stored as usual.
//
// Events get row ids above any ever given (CounterEventSeq), never a
// deleted event's: the full-text index (fulltext.go), built after the
// commit, follows new events by row id.
//
// The generation's offset, line, fingerprints, path, dev and ino are set
// from b.Gen; Gone is left alone. A stale batch (b.Gen.Offset behind the
// stored offset) leaves the generation as it is.
func (db *DB) Commit(ctx context.Context, b watcher.Batch) (err error) {
	w, err := db.writer()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: commit batch for %s (generation %d): %w", b.Gen.Path, b.Gen.ID, err)
		}
	}()

	ckpt := db.ckpt.Load()
	if ckpt != nil {
		ckpt.beforeCommit(w)
	}
	// Before the transaction: a deletion that starts after this makes
	// the feed's segment unusable (fulltext_feed.go).
	feed, deleting := db.ftFeed.Load(), db.ftDeleting.Load()
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The transaction is bound to ctx (cancelling it rolls back); the
	// statements are not, which spares go-sqlite3 a goroutine per call.
	c := &commitTx{db: db, ctx: context.WithoutCancel(ctx), tx: tx, stmts: map[string]*sql.Stmt{}}
	defer c.close()

	cb, err := c.startBatch(ctx, b, db.now())
	if err != nil {
		return err
	}
	cb.feeding = feed != nil
	// Parsing, validating and redacting the lines runs ahead on another
	// goroutine (another core) while this one stores them: in a backfill
	// it is a large share of the work of a commit.
	cb.prep = db.prepareLines(b, cb.stored, cb.kept, cb.now)
	defer cb.prep.stop()
	for i := range b.Lines {
		if err := cb.storeLine(i); err != nil {
			return err
		}
	}
	if err := cb.finish(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if feed != nil {
		feed.publish(ftSegment{after: cb.firstSeq, last: cb.seq, deleting: deleting, todo: cb.ftTodo})
	}
	if ckpt != nil && len(b.Lines) > 0 {
		ckpt.committed(b.Lines[len(b.Lines)-1].End - b.Lines[0].Start)
	}
	return nil
}

// commitBatch is one Commit's work on its transaction: the lines it
// stores, and what they add up to (sessions, counters), written once
// every line is stored.
type commitBatch struct {
	*commitTx
	gen      watcher.Generation
	lines    []watcher.Line
	prep     *linePrep // the lines parsed, validated and redacted
	stored   int64     // the generation's offset before the batch
	firstSeq int64     // seq before the batch
	now      time.Time
	nowNano  int64

	sessions     map[string]*sessionDelta
	sessionOrder []string // sessions' keys, in the order met
	counts       batchCounts
	unknownNames map[string]int64 // CounterUnknownFieldPrefix counts
	forgotten    forgottenSessions
	// kept are the start offsets, past stored, of lines the generation
	// already holds: an edit of the log kept them (edit.go). Nil for
	// nearly every batch.
	kept map[int64]bool
	// more and modTime are the batch's (watcher.Batch); prev the time of
	// the generation's last event stored so far (prevKnown: looked up),
	// next the index of the batch's next dated line from a line on: what
	// places a line without a timestamp (undatedTime).
	more      bool
	modTime   time.Time
	prev      int64
	prevKnown bool
	hasPrev   bool
	next      int
	// occ counts, per logformat.LineKey met in the batch, the lines of
	// the generation with it so far (occurrence).
	occ map[int64]int64
	// feeding: the exchanges stored go to the full-text feed too, in
	// ftTodo (fulltext_feed.go).
	feeding bool
	ftTodo  []ftExchange
}

// batchCounts are a batch's additions to the counters.
type batchCounts struct {
	duplicates, unknownTypes, unknownFields, forgottenSkipped, redactions, noOffset, aliases, ahead int64
	boms                                                                                            int64
}

// forgottenSessions looks up when sessions were forgotten, once each per
// batch.
type forgottenSessions struct {
	// any is false when nothing was ever forgotten (most databases):
	// then no line needs a look-up.
	any bool
	// at maps a session looked up to when it was forgotten (unix
	// nanoseconds); 0: not forgotten.
	at map[string]int64
}

// startBatch reads what the batch's commit starts from: the generation's
// stored offset, the event sequence, whether any session was forgotten.
func (c *commitTx) startBatch(ctx context.Context, b watcher.Batch, now time.Time) (*commitBatch, error) {
	cb := &commitBatch{commitTx: c, gen: b.Gen, lines: b.Lines, now: now, nowNano: now.UnixNano(),
		sessions: map[string]*sessionDelta{}, unknownNames: map[string]int64{},
		forgotten: forgottenSessions{at: map[string]int64{}}, more: b.More, modTime: b.ModTime, next: -1}
	switch err := c.tx.QueryRowContext(ctx, `SELECT "offset" FROM generations WHERE id = ?`, b.Gen.ID).Scan(&cb.stored); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("no generation %d", b.Gen.ID)
	case err != nil:
		return nil, err
	}
	if err := c.tx.QueryRowContext(ctx, `SELECT max(coalesce((SELECT value FROM counters WHERE name = ?), 0),
		coalesce((SELECT max(id) FROM events), 0))`, CounterEventSeq).Scan(&c.seq); err != nil {
		return nil, err
	}
	cb.firstSeq = c.seq
	if err := c.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM forgotten)`).Scan(&cb.forgotten.any); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, c.tx, `SELECT start_offset FROM events WHERE generation = ?1 AND start_offset >= ?2
		UNION ALL SELECT start_offset FROM rejects WHERE generation = ?1 AND start_offset >= ?2`, func(rows *sql.Rows) error {
		var start int64
		if cb.kept == nil {
			cb.kept = map[int64]bool{}
		}
		err := rows.Scan(&start)
		cb.kept[start] = true
		return err
	}, b.Gen.ID, cb.stored); err != nil {
		return nil, err
	}
	return cb, nil
}

// storeLine stores line i of the batch as an event or a reject, or skips
// it (already committed, a replay, a duplicate, a forgotten session's).
func (cb *commitBatch) storeLine(i int) error {
	l := &cb.lines[i]
	if l.End <= cb.stored || cb.kept[l.Start] {
		return nil // committed by an earlier batch, or kept by an edit
	}
	if l.BOM {
		cb.counts.boms++
	}
	if l.Oversize {
		return cb.reject(cb.gen, l, logformat.KindTooLarge,
			logformat.OversizeReason(l.End-l.Start-1, l.Limit), cb.nowNano)
	}
	pl := cb.prep.line(i)
	if pl.err != nil {
		kind := "invalid"
		var le *logformat.Error
		if errors.As(pl.err, &le) && le.Kind != "" {
			kind = le.Kind
		}
		return cb.reject(cb.gen, l, kind, pl.err.Error(), cb.nowNano)
	}
	ev := &pl.ev
	if ev.TimestampInferred {
		t, err := cb.undated(i, l)
		if err != nil {
			return fmt.Errorf("line %d: %w", l.Number, err)
		}
		ev.Timestamp = t
	}
	id := lineID{id: ev.ID}
	if id.id == "" {
		// No producer id: the line's own (logformat.DeriveID), from its
		// session, its content and its place among the identical lines
		// of its session in this file.
		id.key = logformat.LineKey(ev.SessionID, pl.raw)
		n, err := cb.occurrence(l, id.key)
		if err != nil {
			return fmt.Errorf("line %d: %w", l.Number, err)
		}
		id.id, id.keyed = logformat.DeriveID(ev.SessionID, n, pl.raw), true
	}
	if at, err := cb.stillForgotten(ev.SessionID, ev); err != nil {
		return fmt.Errorf("line %d: %w", l.Number, err)
	} else if at != 0 {
		// Not stored, but listed (without its text) and counted.
		cb.counts.forgottenSkipped++
		return cb.forgottenReject(cb.gen, l, ev.SessionID, at, cb.nowNano, id.keyOrNil())
	}

	cb.counts.redactions += int64(pl.redacted)
	rowID, inserted, err := cb.insertEvent(cb.gen, l, ev, id, pl.stored, cb.nowNano)
	if err != nil {
		return fmt.Errorf("line %d: %w", l.Number, err)
	}
	if !inserted {
		return cb.notInserted(l, ev, id, pl.raw)
	}
	if cb.feeding && ev.Type == logformat.TypeExchange {
		files, err := jsonOrNil(ev.Files)
		if err != nil {
			return fmt.Errorf("line %d: %w", l.Number, err)
		}
		cb.ftTodo = feedExchange(cb.ftTodo, rowID, ev, files)
	}
	cb.count(ev)
	ts := eventTime(ev.Timestamp, cb.now)
	cb.prev, cb.prevKnown, cb.hasPrev = ts, true, true
	cb.addToSession(ev, ts)
	return cb.link(l, ev, rowID, ts)
}

// undated is the time of line i (l), which has none of its own: among the
// lines an edit kept (amongKept), else among its neighbours in the file
// (undatedTime).
func (cb *commitBatch) undated(i int, l *watcher.Line) (time.Time, error) {
	ts, placed, err := cb.amongKept(l)
	if err != nil || placed {
		return time.Unix(0, ts).UTC(), err
	}
	t, err := cb.undatedTime(i)
	if err != nil {
		return t, err
	}
	// Plus its place in the batch in nanoseconds, never reaching the next
	// dated line: the undated lines of a batch are in file order by time
	// too (events are ordered by time, then by row), so that a line an
	// edit changes later, which gets a new row and the time of the line
	// before it (amongKept), stays before the lines that followed it.
	u := t.Add(time.Duration(i))
	if next, ok := cb.nextDated(i); !ok || u.Before(next) {
		t = u
	}
	return t, nil
}

// undatedTime places line i, which has no timestamp, among its
// neighbours in the file: the time it was read (or the file's last
// modification, when earlier: a log read long after it was written), but
// never before the event stored before it in the file, nor after the next
// dated line of the batch; when the file goes on past the batch (a
// backfill cut into batches) and no dated line follows in it, the time
// of the event before it. So a context_reset written without a timestamp
// in an old log falls between the exchanges around it, not at the time of
// a backfill (protocol.md, section 3).
func (cb *commitBatch) undatedTime(i int) (time.Time, error) {
	t := cb.now
	if !cb.modTime.IsZero() && cb.modTime.Before(t) {
		t = cb.modTime
	}
	if !cb.prevKnown {
		err := cb.tx.QueryRowContext(cb.ctx, `SELECT ts FROM events WHERE generation = ? AND start_offset < ?
			ORDER BY start_offset DESC LIMIT 1`, cb.gen.ID, cb.lines[i].Start).Scan(&cb.prev)
		switch {
		case err == nil:
			cb.hasPrev = true
		case !errors.Is(err, sql.ErrNoRows):
			return time.Time{}, fmt.Errorf("time of the line before: %w", err)
		}
		cb.prevKnown = true
	}
	prev := time.Unix(0, cb.prev).UTC()
	if next, ok := cb.nextDated(i); ok {
		t = minTime(t, next)
	} else if cb.more && cb.hasPrev {
		t = prev
	}
	if cb.hasPrev && t.Before(prev) {
		t = prev
	}
	return t.UTC(), nil
}

// nextDated returns the time of the first line after line i of the batch
// that is stored with a timestamp of its own, if any.
func (cb *commitBatch) nextDated(i int) (time.Time, bool) {
	if cb.next <= i {
		cb.next = len(cb.lines)
		for j := i + 1; j < len(cb.lines); j++ {
			l := &cb.lines[j]
			if l.End <= cb.stored || l.Oversize || cb.kept[l.Start] {
				continue
			}
			if pl := cb.prep.line(j); pl.err == nil && !pl.ev.TimestampInferred {
				cb.next = j
				break
			}
		}
	}
	if cb.next >= len(cb.lines) {
		return time.Time{}, false
	}
	return cb.prep.line(cb.next).ev.Timestamp, true
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// amongKept places line l, which has no timestamp, when it was read
// between lines the generation already holds (a line changed or inserted
// by an edit of the log, read after the edit): the time of the event
// before it in the file (after which its row puts it), or just before the
// event after it. It then stays where it was in its session, before a
// context reset that followed it. placed is false when no stored line
// follows it (appended lines: undatedTime places them).
func (cb *commitBatch) amongKept(l *watcher.Line) (ts int64, placed bool, err error) {
	if cb.kept == nil {
		return 0, false, nil // nothing stored past the batch's start: appended lines
	}
	var next int64
	switch err := cb.tx.QueryRowContext(cb.ctx, `SELECT ts FROM events WHERE generation = ? AND start_offset > ?
		ORDER BY start_offset LIMIT 1`, cb.gen.ID, l.Start).Scan(&next); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil // after every stored line
	case err != nil:
		return 0, false, fmt.Errorf("the time of the line after it: %w", err)
	}
	var prev int64
	switch err := cb.tx.QueryRowContext(cb.ctx, `SELECT ts FROM events WHERE generation = ? AND start_offset < ?
		ORDER BY start_offset DESC LIMIT 1`, cb.gen.ID, l.Start).Scan(&prev); {
	case errors.Is(err, sql.ErrNoRows):
		return next - 1, true, nil
	case err != nil:
		return 0, false, fmt.Errorf("the time of the line before it: %w", err)
	}
	return prev, true, nil
}

// Kinds of the rejects of lines not stored because their producer id is
// already stored (protocol.md, section 3).
const (
	// KindDuplicate: the line is the same as the one stored under its
	// id (a producer retrying): an identical replay, listed without
	// counting against the producer.
	KindDuplicate = "duplicate"
	// KindDuplicateID: another line, with other content, already used
	// the id; this one is not indexed.
	KindDuplicateID = "duplicate_id"
)

// lineID is the id a line is stored under: its producer's, or derived
// from it (keyed: logformat.DeriveID, key its logformat.LineKey).
type lineID struct {
	id    string
	key   int64
	keyed bool
}

func (id lineID) keyOrNil() any {
	if !id.keyed {
		return nil
	}
	return id.key
}

// occurrence is how many lines of the batch's generation before l have
// the key (logformat.LineKey: the same session and content), stored as
// events or as rejects (a copy's line already indexed, a forgotten
// session's): l's place among them, which its derived id holds. The
// first look-up of a key per batch asks the index; the batch counts on.
func (cb *commitBatch) occurrence(l *watcher.Line, key int64) (int64, error) {
	if n, ok := cb.occ[key]; ok {
		cb.occ[key] = n + 1
		return n, nil
	}
	if cb.occ == nil {
		cb.occ = map[int64]int64{}
	}
	var n int64
	if cb.stored > 0 || cb.kept != nil {
		if err := cb.tx.QueryRowContext(cb.ctx, `SELECT
			(SELECT count(*) FROM events INDEXED BY events_line_key
				WHERE generation = ?1 AND line_key = ?2 AND line_key IS NOT NULL AND start_offset < ?3) +
			(SELECT count(*) FROM rejects INDEXED BY rejects_line_key
				WHERE generation = ?1 AND line_key = ?2 AND line_key IS NOT NULL AND start_offset < ?3)`,
			cb.gen.ID, key, l.Start).Scan(&n); err != nil {
			return 0, fmt.Errorf("count identical lines before it: %w", err)
		}
	}
	cb.occ[key] = n + 1
	return n, nil
}

// notInserted handles an event the index already holds under its id:
// nothing when it is this very line (a replay of the batch), else a
// reject naming the line that first used the id, of kind KindDuplicate
// when the stored line is the same (redacted) bytes (the same event: a
// producer's retry, or a line of a copy of a log, such as a sync tool's
// conflict copy or a merge, indexed once), of kind KindDuplicateID when
// it differs. Both count in CounterDuplicatesSkipped.
func (cb *commitBatch) notInserted(l *watcher.Line, ev *logformat.Event, id lineID, raw []byte) error {
	var gen, start, line int64
	var file string
	var first []byte
	var user, ai sql.NullString
	switch err := cb.tx.QueryRowContext(cb.ctx, `SELECT e.generation, e.start_offset, coalesce(g.path, e.file), e.line, e.raw, e.user, e.ai
		FROM events e LEFT JOIN generations g ON g.id = e.generation WHERE e.event_id = ?`, id.id).Scan(&gen, &start, &file, &line, &first, &user, &ai); {
	case errors.Is(err, sql.ErrNoRows):
		return nil // another line at this position: a replay
	case err != nil:
		return err
	}
	if gen == cb.gen.ID && start == l.Start {
		return nil
	}
	cb.counts.duplicates++
	if id.keyed {
		// Its id is its session, content and place: the same line.
		return cb.keyedReject(cb.gen, l, KindDuplicate, fmt.Sprintf(
			"the same line as %s:%d (same session, same content, same place among identical lines): a copy of the log (a sync tool's conflict copy, a merge, a file replaced), indexed once", file, line),
			cb.nowNano, id.key)
	}
	eid := excerpt([]byte(ev.ID))
	first, err := unpackLine(first, user, ai)
	if err != nil {
		return fmt.Errorf("event %s: %w", id.id, err)
	}
	if bytes.Equal(logformat.LineContent(first), logformat.LineContent(raw)) {
		return cb.reject(cb.gen, l, KindDuplicate, fmt.Sprintf(
			"duplicate of %s:%d (same id %q, same content): a replay or a copy of the log, indexed once", file, line, eid), cb.nowNano)
	}
	return cb.reject(cb.gen, l, KindDuplicateID, fmt.Sprintf(
		"id %q reused with different content: first used at %s:%d; this line is not indexed (an id names one event in all the logs: give each event its own, such as a UUID)",
		eid, file, line), cb.nowNano)
}

// count adds a stored event to the counters of producer mistakes and
// protocol extensions.
func (cb *commitBatch) count(ev *logformat.Event) {
	if !ev.KnownType {
		cb.counts.unknownTypes++
	}
	if len(ev.UnknownFields) > 0 {
		cb.counts.unknownFields++
		if ev.KnownType {
			for _, f := range ev.UnknownFields {
				if len(f) <= 64 {
					cb.unknownNames[f]++
				}
			}
		}
	}
	if ev.TimestampNoOffset {
		cb.counts.noOffset++
	}
	if !ev.TimestampInferred && ev.Timestamp.UnixNano() > cb.nowNano+int64(AheadTolerance) {
		cb.counts.ahead++
	}
	if ev.AIFromAlias {
		cb.counts.aliases++
	}
}

// addToSession adds a stored event of time ts to its session's row.
func (cb *commitBatch) addToSession(ev *logformat.Event, ts int64) {
	if ev.SessionID == "" {
		return
	}
	d := cb.sessions[ev.SessionID]
	if d == nil {
		d = &sessionDelta{first: ts, last: ts}
		cb.sessions[ev.SessionID] = d
		cb.sessionOrder = append(cb.sessionOrder, ev.SessionID)
	}
	d.first, d.last = min(d.first, ts), max(d.last, ts)
	d.events++
	switch ev.Type {
	case logformat.TypeExchange:
		d.exchanges++
	case logformat.TypeContextReset:
		d.resets++
	}
}

// link records the session link of a stored session_resume event. A
// link from a forgotten session is not made again (the event stays: it
// belongs to its own session). A link to a forgotten session goes through
// it, to the sessions it resumed (forgotten_links, and on through those
// forgotten too): forgetting the middle of a chain does not cut it.
func (cb *commitBatch) link(l *watcher.Line, ev *logformat.Event, rowID, ts int64) error {
	if ev.Type != logformat.TypeSessionResume || ev.PreviousSession == "" || ev.NewSession == "" {
		return nil
	}
	fn, err := cb.stillForgotten(ev.NewSession, ev)
	if err != nil || fn != 0 {
		return err
	}
	prevs, err := cb.resumedThrough(ev.PreviousSession, ev)
	if err != nil {
		return fmt.Errorf("line %d: %w", l.Number, err)
	}
	for _, p := range prevs {
		if p == ev.NewSession {
			continue
		}
		if _, err := cb.exec(insertLinkSQL, p, ev.NewSession, rowID, ts); err != nil {
			return fmt.Errorf("line %d: link sessions: %w", l.Number, err)
		}
	}
	return nil
}

// resumedThrough is the sessions a link to session reaches: session
// itself, or, when the event's link to it belongs to what was forgotten
// of it, the sessions it resumed, through those forgotten as well.
func (cb *commitBatch) resumedThrough(session string, ev *logformat.Event) ([]string, error) {
	var out []string
	seen := map[string]bool{session: true}
	for todo := []string{session}; len(todo) > 0; {
		s := todo[0]
		todo = todo[1:]
		at, err := cb.stillForgotten(s, ev)
		if err != nil {
			return nil, err
		}
		if at == 0 {
			out = append(out, s)
			continue
		}
		if err := eachRow(cb.ctx, cb.tx, `SELECT previous FROM forgotten_links WHERE session = ? ORDER BY previous`, func(rows *sql.Rows) error {
			var p string
			if err := rows.Scan(&p); err != nil {
				return err
			}
			if !seen[p] {
				seen[p] = true
				todo = append(todo, p)
			}
			return nil
		}, s); err != nil {
			return nil, fmt.Errorf("sessions resumed by forgotten %s: %w", s, err)
		}
	}
	return out, nil
}

// forgottenAt returns when session was forgotten (unix nanoseconds), 0 if
// it was not.
func (cb *commitBatch) forgottenAt(session string) (int64, error) {
	if !cb.forgotten.any || session == "" {
		return 0, nil
	}
	at, ok := cb.forgotten.at[session]
	if !ok {
		err := cb.tx.QueryRowContext(cb.ctx, `SELECT coalesce((SELECT at FROM forgotten WHERE session = ?), 0)`, session).Scan(&at)
		if err != nil {
			return 0, fmt.Errorf("look up forgotten session: %w", err)
		}
		cb.forgotten.at[session] = at
	}
	return at, nil
}

// stillForgotten reports when the session of an event was forgotten, if
// the event belongs to what was forgotten: it has no timestamp of its
// own, or one at or before the forget. Later events are new work in that
// session and are indexed.
func (cb *commitBatch) stillForgotten(session string, ev *logformat.Event) (int64, error) {
	at, err := cb.forgottenAt(session)
	if err != nil || at == 0 {
		return 0, err
	}
	if ev.TimestampInferred || ev.Timestamp.UnixNano() <= at {
		return at, nil
	}
	return 0, nil
}

// finish writes what the batch's lines add up to: the sessions' rows, the
// counters, the event sequence, and the generation's new offset.
func (cb *commitBatch) finish() error {
	for _, id := range cb.sessionOrder {
		d := cb.sessions[id]
		if _, err := cb.exec(upsertSessionSQL, id, d.first, d.last, d.exchanges, d.resets, d.events); err != nil {
			return fmt.Errorf("update session %s: %w", id, err)
		}
	}
	if err := cb.writeCounters(); err != nil {
		return err
	}
	if cb.seq > cb.firstSeq {
		if _, err := cb.exec(`INSERT INTO counters (name, value) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)`, CounterEventSeq, cb.seq); err != nil {
			return fmt.Errorf("count %s: %w", CounterEventSeq, err)
		}
	}
	if g := cb.gen; g.Offset >= cb.stored {
		if _, err := cb.exec(`UPDATE generations SET "offset" = ?, line = ?, head_len = ?, head_sum = ?,
			tail_len = ?, tail_sum = ?, path = ?, dev = ?, ino = ?, updated_at = ? WHERE id = ?`,
			g.Offset, g.Line, g.Head.Len, int64(g.Head.Sum), g.Tail.Len, int64(g.Tail.Sum),
			g.Path, int64(g.Dev), int64(g.Ino), cb.nowNano, g.ID); err != nil {
			return fmt.Errorf("advance generation: %w", err)
		}
	}
	return nil
}

// writeCounters adds the batch's counts to the counters table.
func (cb *commitBatch) writeCounters() error {
	n := cb.counts
	for _, ctr := range []struct {
		name string
		n    int64
	}{
		{CounterDuplicatesSkipped, n.duplicates},
		{CounterUnknownTypes, n.unknownTypes},
		{CounterUnknownFields, n.unknownFields},
		{CounterForgottenSkipped, n.forgottenSkipped},
		{CounterRedactions, n.redactions},
		{CounterTimestampsNoOffset, n.noOffset},
		{CounterTimestampsAhead, n.ahead},
		{CounterAIFromAlias, n.aliases},
		{CounterBOMsSkipped, n.boms},
	} {
		if ctr.n == 0 {
			continue
		}
		if _, err := cb.exec(addCounterSQL, ctr.name, ctr.n); err != nil {
			return fmt.Errorf("count %s: %w", ctr.name, err)
		}
	}
	for name, n := range cb.unknownNames {
		if _, err := cb.exec(addCounterSQL, CounterUnknownFieldPrefix+name, n); err != nil {
			return fmt.Errorf("count unknown field %q: %w", name, err)
		}
	}
	return nil
}

// insertEvent stores ev; inserted is false when a uniqueness constraint
// (position, producer id) already holds it.
func (c *commitTx) insertEvent(g watcher.Generation, l *watcher.Line, ev *logformat.Event, id lineID, raw []byte, now int64) (rowID int64, inserted bool, err error) {
	eventID := id.id
	files, err := jsonOrNil(ev.Files)
	if err != nil {
		return 0, false, err
	}
	unknown, err := jsonOrNil(ev.UnknownFields)
	if err != nil {
		return 0, false, err
	}
	var metadata any
	if len(ev.Metadata) > 0 {
		metadata = string(ev.Metadata)
	}
	vals := [...]any{c.seq + 1,
		eventID, nullString(ev.ID), g.ID, l.Start, l.End, l.Number, g.Path,
		ev.V, ev.Type, nullString(ev.SessionID), ev.SessionFromFile,
		eventTime(ev.Timestamp, time.Unix(0, now)), ev.TimestampInferred,
		nullString(ev.User), nullString(ev.AI), nullString(ev.Reason),
		nullString(ev.PreviousSession), nullString(ev.NewSession),
		files, metadata, unknown, raw, now, id.keyOrNil()}
	stmt, args, err := c.eventInsert(vals[:])
	if err != nil {
		return 0, false, err
	}
	res, err := stmt.ExecContext(c.ctx, args...)
	if err != nil {
		return 0, false, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return 0, false, err
	}
	c.seq++
	return c.seq, true, nil
}

// insertColumns are the columns of events an insert gives, in the order of
// insertEvent's values.
var insertColumns = [...]string{"id", "event_id", "producer_id", "generation", "start_offset", "end_offset", "line", "file",
	"v", "type", "session_id", "session_from_file", "ts", "ts_inferred", "user", "ai", "reason", "previous_session", "new_session",
	"files", "metadata", "unknown_fields", "raw", "ingested_at", "line_key"}

// Columns whose value is the same for every event of a batch, and the
// producer id, which is the event id whenever it is given.
const (
	colEventID    = 1
	colProducerID = 2
	colGeneration = 3
	colFile       = 7
	colIngestedAt = 23
)

// eventShape says how an insert gives each column: bit 2i set when value
// i is written in the statement itself (a NULL, a boolean, or a value
// the same for the whole batch), bit 2i+1 holding the boolean. The other
// values are parameters, and a producer id equal to the event id is the
// event id's parameter again.
//
// Why: go-sqlite3 binds each parameter with a call into C, and binding
// was a large share of inserting a row of 24 parameters; most values of a
// typical exchange are NULL (reason, files...), false, or the batch's
// (generation, file, time of ingest). A statement per shape (a handful
// per batch, prepared once) binds 12 instead.
type eventShape uint64

// eventInsert returns the insert of an event with these values (in the
// order of insertColumns) and its arguments (reusing c.args).
func (c *commitTx) eventInsert(vals []any) (*sql.Stmt, []any, error) {
	var shape eventShape
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
			shape |= 1 << (2 * i)
		case bool:
			shape |= 1 << (2 * i)
			if v {
				shape |= 1 << (2*i + 1)
			}
		}
	}
	shape |= 1<<(2*colGeneration) | 1<<(2*colFile) | 1<<(2*colIngestedAt)
	sameID := vals[colProducerID] != nil // then it is vals[colEventID]
	c.args = c.args[:0]
	for i, v := range vals {
		if shape&(1<<(2*i)) == 0 && !(i == colProducerID && sameID) {
			c.args = append(c.args, v)
		}
	}
	if s, ok := c.events[shape]; ok {
		return s, c.args, nil
	}
	var b strings.Builder
	b.WriteString("INSERT INTO events (")
	b.WriteString(strings.Join(insertColumns[:], ", "))
	b.WriteString(") VALUES (")
	n := 0
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case i == colProducerID && sameID:
			b.WriteString("?2") // the event id's parameter (id is ?1)
		case shape&(1<<(2*i)) == 0:
			n++
			fmt.Fprintf(&b, "?%d", n)
		case v == nil:
			b.WriteString("NULL")
		case i == colFile:
			b.WriteString(sqlString(v.(string)))
		case i == colGeneration || i == colIngestedAt:
			fmt.Fprintf(&b, "%d", v.(int64))
		case shape&(1<<(2*i+1)) != 0:
			b.WriteString("1")
		default:
			b.WriteString("0")
		}
	}
	b.WriteString(") ON CONFLICT DO NOTHING")
	s, err := c.tx.PrepareContext(c.ctx, b.String())
	if err != nil {
		return nil, nil, err
	}
	if c.events == nil {
		c.events = map[eventShape]*sql.Stmt{}
	}
	c.events[shape] = s
	return s, c.args, nil
}

// sqlString is s as an SQL string literal.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// maxStoredTime is the latest event time the index stores: times are
// int64 Unix nanoseconds (2262-04-11T23:47:16.854775807Z).
var maxStoredTime = time.Unix(0, math.MaxInt64).UTC()

// reject stores an invalid or oversize line.
func (c *commitTx) reject(g watcher.Generation, l *watcher.Line, kind, reason string, now int64) error {
	return c.keyedReject(g, l, kind, reason, now, nil)
}

// keyedReject stores a reject of a line with its logformat.LineKey (nil
// for none).
func (c *commitTx) keyedReject(g watcher.Generation, l *watcher.Line, kind, reason string, now int64, key any) error {
	red := c.db.redactBytes(l.Data)
	if _, err := c.exec(insertRejectSQL, g.ID, g.Path, l.Number, l.Start, l.End, reason, kind, excerpt(red), now, storedKey(l, red), key); err != nil {
		return fmt.Errorf("line %d: store reject: %w", l.Number, err)
	}
	return nil
}

// KindForgotten is the kind of a reject that is a valid line of a
// forgotten session: not indexed again, listed without its text.
const KindForgotten = "forgotten"

// forgottenReject records a line of a forgotten session that was not
// stored: file, line and why, but no excerpt (its text was to be gone).
func (c *commitTx) forgottenReject(g watcher.Generation, l *watcher.Line, session string, at, now int64, key any) error {
	reason := fmt.Sprintf("session %q was forgotten at %s ('continuity forget'): this line, from before then, is not indexed again (lines timestamped after it are)",
		session, time.Unix(0, at).UTC().Format(time.RFC3339))
	if _, err := c.exec(insertRejectSQL, g.ID, g.Path, l.Number, l.Start, l.End, reason, KindForgotten, "", now,
		storedKey(l, c.db.redactBytes(l.Data)), key); err != nil {
		return fmt.Errorf("line %d: store reject: %w", l.Number, err)
	}
	return nil
}

// eventTime is t in unix nanoseconds, or now for a zero time (Parse always
// sets one; this keeps a NOT NULL column honest if it ever does not).
func eventTime(t, now time.Time) int64 {
	if t.IsZero() {
		t = now
	}
	return t.UnixNano()
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func jsonOrNil(v []string) (any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// preparedLine is a line of a batch parsed, validated and redacted, ready
// to be stored.
type preparedLine struct {
	ev       logformat.Event
	err      error  // the line is invalid: a reject
	raw      []byte // the line, redacted
	stored   []byte // what the raw column stores: raw, packed (packLine)
	redacted int    // secrets redacted
}

// linePrep prepares the lines of one batch, in order, on a goroutine of
// its own; line(i) waits for line i.
type linePrep struct {
	lines  []preparedLine
	done   []chan int // per worker w, the indexes of its prepared lines (w, w+W, ...), in order
	nextOf []int      // per worker, the next index line expects from it
	quit   chan struct{}
	wg     sync.WaitGroup
	next   int // lines prepared in place (no workers)
}

// prepPipelineMin is the smallest batch prepared on another goroutine:
// a daemon's usual batch of a line or two gains nothing from it.
const prepPipelineMin = 32

// prepareLines starts preparing the lines of b that a commit will store:
// those past stored, not kept by an edit and not oversize (the others are
// not read).
func (db *DB) prepareLines(b watcher.Batch, stored int64, kept map[int64]bool, now time.Time) *linePrep {
	p := &linePrep{lines: make([]preparedLine, len(b.Lines))}
	prepare := func(i int) {
		l := &b.Lines[i]
		if l.End <= stored || l.Oversize || kept[l.Start] {
			return
		}
		pl := &p.lines[i]
		pl.ev, pl.err = logformat.ParseWithLimits(l.Data, b.Gen.Path, now, logformat.DefaultLimits.WithLineBytes(len(l.Data)))
		if pl.err == nil && pl.ev.Timestamp.After(maxStoredTime) {
			// Times are stored as int64 Unix nanoseconds: a later one
			// would wrap around to the 1800s (protocol.md, section 3).
			pl.err = &logformat.Error{Kind: logformat.KindInvalidField, Field: "timestamp",
				Reason: fmt.Sprintf("%s is after %s, the latest time the index can store", pl.ev.Timestamp.Format(time.RFC3339), maxStoredTime.Format(time.RFC3339))}
		}
		if pl.err == nil {
			pl.raw, pl.redacted = db.redactEvent(&pl.ev, l.Data)
			pl.stored = packLine(pl.raw, pl.ev.User, pl.ev.AI, nil)
		}
	}
	if len(b.Lines) < prepPipelineMin {
		for i := range b.Lines {
			prepare(i)
		}
		p.next = len(b.Lines)
		return p
	}
	p.startWorkers(len(b.Lines), prepare)
	return p
}

// line returns line i prepared, waiting for it; lines are asked for in
// increasing order.
func (p *linePrep) line(i int) *preparedLine {
	if p.done == nil {
		return &p.lines[i] // prepared in place
	}
	w := i % len(p.done)
	for p.nextOf[w] <= i {
		v, ok := <-p.done[w]
		if !ok {
			break // only after stop
		}
		p.nextOf[w] = v + len(p.done)
	}
	return &p.lines[i]
}

// stop ends the preparing goroutine, if any, and waits for it.
func (p *linePrep) stop() {
	if p.quit != nil {
		close(p.quit)
		p.wg.Wait()
	}
}
