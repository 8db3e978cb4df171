package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/watcher"
)

// A log edited in place (watcher.Editor): the rewritten file's lines are
// compared with the lines stored from the old generation, each by its key
// (storedKey: a hash of the line as stored, redacted), lines with an id
// first by their id, the others in file order by a longest common
// subsequence (difflib's matcher). Kept lines keep their events (row ids,
// full-text entries, vectors) and rejects, moved to the new generation at
// their new offsets; the events and rejects of changed and removed lines
// are deleted; changed and added lines are then read by Commit like any
// new line. All of it in one transaction (editPlan.Apply), so that a
// crash leaves the old generation or the new one, never a mix: a file
// read again after a crash is compared again.
//
// The file is the same log, edited, when at least one line is kept
// unchanged, and the lines found again (kept, or changed but recognisably
// the same line: the same id; the same type, session and explicit
// timestamp; or, in the place of the old line, text that is mostly the
// same, as a substitution leaves it) are at least half of the lines
// stored from it, or the kept lines at least half of its lines now.
// Otherwise it is another log (a truncated log written anew, another log
// moved over it, even with lines much like the old ones): it is read as
// new, and the old lines stay indexed.

var _ watcher.Editor = (*DB)(nil)

// storedKey is the key an edit compares a line by: the first 8 bytes of
// the SHA-256 of the line as stored (red, its redacted bytes: an event's
// raw line), or, for an oversize line, of its length and excerpt. Rejects
// store it (rejects.hash); an event's is computed from its raw line.
func storedKey(l *watcher.Line, red []byte) int64 {
	h := sha256.New()
	if l.Oversize {
		fmt.Fprintf(h, "\x00oversize %d\x00", l.End-l.Start)
	}
	h.Write(red)
	var sum [sha256.Size]byte
	return int64(binary.LittleEndian.Uint64(h.Sum(sum[:0])))
}

// eventSig identifies an event by its type, session and explicit time:
// a line edited in its texts keeps them.
func eventSig(typ, session string, ts int64) int64 {
	sum := sha256.Sum256([]byte(typ + "\x00" + session + "\x00" + strconv.FormatInt(ts, 10)))
	return int64(binary.LittleEndian.Uint64(sum[:8]))
}

// editLine is a line of the rewritten file.
type editLine struct {
	start, end, number int64
	key                int64
	id                 string // the producer id, when it parses and has one
	sig                int64  // eventSig when it parses with a timestamp; 0 otherwise
	sk                 sketch
}

// storedLine is an event or a reject of the old generation.
type storedLine struct {
	event           bool
	row             int64 // events.id or rejects.id
	start, end, num int64 // where it was: offsets, line number
	key             int64
	known           bool // key known (a reject stored before schema 6 has none)
	id              string
	sig             int64
	sk              sketch // of an event's raw line; empty for a reject
}

// sketchBins is the size of a sketch.
const sketchBins = 16

// A sketch summarises the 4-byte substrings of a line (one-permutation
// MinHash: each substring's hash goes to one of sketchBins bins, which
// keeps the smallest), so that two lines can be compared without their
// text: the share of equal bins estimates how many substrings they share.
// A substitution (sed 's/JWT/JWT tokens/') leaves most of a line's
// substrings; another line of the same format shares only the format's.
type sketch [sketchBins]uint32

const emptyBin = ^uint32(0)

// sketchOf sketches b.
func sketchOf(b []byte) sketch {
	var s sketch
	for i := range s {
		s[i] = emptyBin
	}
	for i := 0; i+4 <= len(b); i++ {
		h := binary.LittleEndian.Uint32(b[i:]) // murmur3's finaliser: every bit of the 4 bytes moves every bit
		h ^= h >> 16
		h *= 0x85EBCA6B
		h ^= h >> 13
		h *= 0xC2B2AE35
		h ^= h >> 16
		bin, v := h>>28, h&0x0FFFFFFF
		s[bin] = min(s[bin], v)
	}
	return s
}

// similar reports whether two lines' sketches say they share most of
// their text: at least 60% of the bins either fills are equal, of at
// least 8 (a line of a few bytes is too short to tell).
func (s *sketch) similar(o *sketch) bool {
	same, filled := 0, 0
	for i := range s {
		if s[i] == emptyBin && o[i] == emptyBin {
			continue
		}
		filled++
		if s[i] == o[i] {
			same++
		}
	}
	return filled >= 8 && 10*same >= 6*filled
}

// PlanEdit implements watcher.Editor.
func (db *DB) PlanEdit(ctx context.Context, prev watcher.Generation, name string, read func(func([]watcher.Line) error) error) (_ watcher.EditPlan, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: compare %s with generation %d: %w", name, prev.ID, err)
		}
	}()
	old, err := db.storedLines(ctx, prev.ID)
	if err != nil {
		return nil, err
	}
	stored := make(map[int64]bool, len(old))
	for _, o := range old {
		stored[o.key] = true
	}
	now := db.now()
	var nw []editLine
	if err := read(func(lines []watcher.Line) error {
		for i := range lines {
			nw = append(nw, db.editLine(&lines[i], name, now, stored))
		}
		return ctx.Err()
	}); err != nil {
		return nil, err
	}
	p := &editPlan{db: db, prev: prev, old: old, nw: nw}
	p.pair, p.sum = matchEdit(old, nw)
	return p, nil
}

// editLine reads what an edit compares of a line. A line whose bytes are
// those of a stored line (stored: the stored keys) is that line as it was
// stored: a stored line is already redacted, and redacting it again
// changes nothing. The others are redacted first, as Commit would store
// them.
func (db *DB) editLine(l *watcher.Line, name string, now time.Time, stored map[int64]bool) editLine {
	e := editLine{start: l.Start, end: l.End, number: l.Number, key: storedKey(l, l.Data)}
	red := l.Data
	if !stored[e.key] {
		red = db.redactBytes(l.Data)
		e.key = storedKey(l, red)
	}
	if l.Oversize {
		return e
	}
	e.sk = sketchOf(red)
	if ev, err := logformat.ParseWithLimits(l.Data, name, now, logformat.DefaultLimits.WithLineBytes(len(l.Data))); err == nil {
		e.id = ev.ID
		if !ev.TimestampInferred {
			e.sig = eventSig(ev.Type, ev.SessionID, ev.Timestamp.UnixNano())
		}
	}
	return e
}

// storedLines reads the events and rejects of generation gen, by offset.
func (db *DB) storedLines(ctx context.Context, gen int64) ([]storedLine, error) {
	type at struct {
		storedLine
	}
	var evs, rjs []at
	err := eachRow(ctx, db.r, `SELECT id, start_offset, end_offset, line, raw, coalesce(producer_id, ''), type, coalesce(session_id, ''), ts, ts_inferred, user, ai
		FROM events WHERE generation = ? ORDER BY start_offset`, func(rows *sql.Rows) error {
		var a at
		var raw []byte
		var typ, session string
		var ts int64
		var inferred bool
		var user, ai sql.NullString
		if err := rows.Scan(&a.row, &a.start, &a.end, &a.num, &raw, &a.id, &typ, &session, &ts, &inferred, &user, &ai); err != nil {
			return err
		}
		raw, err := unpackLine(raw, user, ai)
		if err != nil {
			return fmt.Errorf("event row %d: %w", a.row, err)
		}
		a.event, a.known = true, true
		a.key = storedKey(&watcher.Line{}, raw)
		a.sk = sketchOf(raw)
		if !inferred {
			a.sig = eventSig(typ, session, ts)
		}
		evs = append(evs, a)
		return nil
	}, gen)
	if err != nil {
		return nil, err
	}
	err = eachRow(ctx, db.r, `SELECT id, start_offset, end_offset, line, hash FROM rejects WHERE generation = ? ORDER BY start_offset`, func(rows *sql.Rows) error {
		var a at
		var key sql.NullInt64
		if err := rows.Scan(&a.row, &a.start, &a.end, &a.num, &key); err != nil {
			return err
		}
		a.key, a.known = key.Int64, key.Valid
		a.sk = sketchOf(nil)
		rjs = append(rjs, a)
		return nil
	}, gen)
	if err != nil {
		return nil, err
	}
	out := make([]storedLine, 0, len(evs)+len(rjs))
	for len(evs) > 0 || len(rjs) > 0 {
		if len(rjs) == 0 || len(evs) > 0 && evs[0].start < rjs[0].start {
			out, evs = append(out, evs[0].storedLine), evs[1:]
		} else {
			out, rjs = append(out, rjs[0].storedLine), rjs[1:]
		}
	}
	return out, nil
}

// matchEdit pairs the stored lines with the rewritten file's: pair[i] is
// the line of nw that old[i] is kept as, -1 when it is not kept.
func matchEdit(old []storedLine, nw []editLine) (pair []int, s watcher.EditSummary) {
	pair = make([]int, len(old))
	for i := range pair {
		pair[i] = -1
	}
	kept := make([]bool, len(nw))
	s.Lines = len(nw)
	for _, o := range old {
		if o.known {
			s.Stored++
		}
	}
	// Lines with an id follow their id.
	usedOld, usedNew := make([]bool, len(old)), make([]bool, len(nw))
	byID := map[string]int{}
	for i, o := range old {
		if o.id != "" {
			byID[o.id] = i
		}
	}
	for j, n := range nw {
		i, ok := byID[n.id]
		if n.id == "" || !ok || usedOld[i] {
			continue
		}
		usedOld[i], usedNew[j] = true, true
		s.Matched++
		if old[i].key == n.key {
			pair[i], kept[j] = j, true
			s.Kept++
		} else {
			s.Changed++
		}
	}
	// The others in file order.
	var ai, bj []int
	var a, b []string
	for i, o := range old {
		if !usedOld[i] {
			ai = append(ai, i)
			a = append(a, keyString(o.key, o.known, o.row))
		}
	}
	for j, n := range nw {
		if !usedNew[j] {
			bj = append(bj, j)
			b = append(b, keyString(n.key, true, 0))
		}
	}
	ia, jb := 0, 0
	for _, m := range matchingBlocks(a, b) {
		// The lines between two runs of kept lines: pairs of a removed
		// and an added line are a changed line.
		d, n := m.A-ia, m.B-jb
		c := min(d, n)
		s.Changed += c
		s.Removed += d - c
		s.Added += n - c
		for k := range c {
			if o, w := &old[ai[ia+k]], &nw[bj[jb+k]]; o.sig != 0 && o.sig == w.sig || o.sk.similar(&w.sk) {
				s.Matched++
			}
		}
		for k := range m.Size {
			i, j := ai[m.A+k], bj[m.B+k]
			pair[i], kept[j] = j, true
		}
		s.Kept += m.Size
		s.Matched += m.Size
		ia, jb = m.A+m.Size, m.B+m.Size
	}
	s.Same = s.Kept > 0 && (2*s.Matched >= s.Stored || 2*s.Kept >= s.Lines)
	s.KeptTo = -1
	for j, n := range nw {
		if !kept[j] {
			s.KeptTo, s.KeptLines = n.start, n.number-1
			break
		}
	}
	return pair, s
}

// keyString is a line's key as a string for the matcher; an unknown key
// is a string no other line has.
func keyString(key int64, known bool, row int64) string {
	var b [9]byte
	if !known {
		b[8] = 1
		binary.LittleEndian.PutUint64(b[:8], uint64(row))
		return string(b[:])
	}
	binary.LittleEndian.PutUint64(b[:8], uint64(key))
	return string(b[:8])
}

// matchingBlocks are the runs of equal elements of a longest common
// subsequence of a and b, in order, ending with the sentinel (len(a),
// len(b), 0). The common start and end (most of an edited log) are taken
// off before the matcher looks at the rest.
func matchingBlocks(a, b []string) []difflib.Match {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	q := 0
	for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	var out []difflib.Match
	if p > 0 {
		out = append(out, difflib.Match{A: 0, B: 0, Size: p})
	}
	if ma, mb := a[p:len(a)-q], b[p:len(b)-q]; len(ma) > 0 && len(mb) > 0 {
		for _, m := range difflib.NewMatcherWithJunk(ma, mb, false, nil).GetMatchingBlocks() {
			if m.Size > 0 {
				out = append(out, difflib.Match{A: m.A + p, B: m.B + p, Size: m.Size})
			}
		}
	}
	if q > 0 {
		out = append(out, difflib.Match{A: len(a) - q, B: len(b) - q, Size: q})
	}
	return append(out, difflib.Match{A: len(a), B: len(b)})
}

// editPlan is a comparison ready to be applied (watcher.EditPlan).
type editPlan struct {
	db   *DB
	prev watcher.Generation
	old  []storedLine
	nw   []editLine
	pair []int
	sum  watcher.EditSummary
}

func (p *editPlan) Summary() watcher.EditSummary { return p.sum }

// Apply implements watcher.EditPlan.Apply.
func (p *editPlan) Apply(ctx context.Context, g watcher.Generation) (id int64, removed []int64, err error) {
	db := p.db
	w, err := db.writer()
	if err != nil {
		return 0, nil, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: apply the edit of %s: %w", g.Path, err)
		}
	}()
	if !p.sum.Same {
		return 0, nil, errors.New("not the same log")
	}
	// Full-text steps read ahead before this point are not used (ftBatch).
	db.ftDeleting.Add(1)
	defer db.ftDeleting.Add(1)
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	now := db.now().UnixNano()
	if id, err = replaceGeneration(ctx, tx, g, p.prev.ID, now); err != nil {
		return 0, nil, err
	}
	if err := p.moveKept(ctx, tx, id, g.Path); err != nil {
		return 0, nil, err
	}
	var rejects []int64
	for i, o := range p.old {
		switch {
		case p.pair[i] >= 0:
		case o.event:
			removed = append(removed, o.row)
		default:
			rejects = append(rejects, o.row)
		}
	}
	if err := deleteEvents(ctx, tx, removed); err != nil {
		return 0, nil, err
	}
	if err := execChunks(ctx, tx, `DELETE FROM rejects WHERE id IN (%s)`, rejects); err != nil {
		return 0, nil, err
	}
	if err := p.record(ctx, tx, id, g.Path, now); err != nil {
		return 0, nil, err
	}
	if err := tx.Commit(); err != nil {
		return 0, nil, err
	}
	return id, removed, nil
}

// Restore implements watcher.EditPlan.Restore.
func (p *editPlan) Restore(ctx context.Context, g watcher.Generation, replaces int64) (id int64, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: record %s as an older copy: %w", g.Path, err)
		}
	}()
	if p.sum.Lines == 0 || p.sum.Kept != p.sum.Lines {
		return 0, errors.New("not every line is a stored one")
	}
	w, err := p.db.writer()
	if err != nil {
		return 0, err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := p.db.now().UnixNano()
	if id, err = replaceGeneration(ctx, tx, g, replaces, now); err != nil {
		return 0, err
	}
	if err := p.moveKept(ctx, tx, id, g.Path); err != nil {
		return 0, err
	}
	return id, tx.Commit()
}

// replaceGeneration records g in the place of generation prev, which ends
// (none when prev is 0).
func replaceGeneration(ctx context.Context, tx *sql.Tx, g watcher.Generation, prev, now int64) (int64, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO generations
		(path, dev, ino, "offset", line, head_len, head_sum, tail_len, tail_sum, gone, ended, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?)`,
		g.Path, int64(g.Dev), int64(g.Ino), g.Offset, g.Line,
		g.Head.Len, int64(g.Head.Sum), g.Tail.Len, int64(g.Tail.Sum), now, now)
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil || prev == 0 {
		return id, err
	}
	if res, err = tx.ExecContext(ctx, `UPDATE generations SET ended = 1, updated_at = ? WHERE id = ? AND ended = 0`, now, prev); err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, err
	} else if n == 0 {
		return 0, fmt.Errorf("generation %d is not current", prev)
	}
	return id, nil
}

// moveKept moves the kept lines' events and rejects to generation gen,
// at their new places in file. Kept lines come in runs that moved by the
// same number of bytes and lines (all of them, when the edit is at the
// end of the log): one statement moves a run of a table's rows.
func (p *editPlan) moveKept(ctx context.Context, tx *sql.Tx, gen int64, file string) error {
	type run struct {
		lo, hi, dStart, dLine int64
		n                     int
	}
	flush := func(table string, r *run) error {
		if r.n == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE `+table+` SET generation = ?, start_offset = start_offset + ?, end_offset = end_offset + ?,
			line = line + ?, file = ? WHERE generation = ? AND start_offset BETWEEN ? AND ?`,
			gen, r.dStart, r.dStart, r.dLine, file, p.prev.ID, r.lo, r.hi)
		if err != nil {
			return fmt.Errorf("move lines %d to %d of %s: %w", r.lo, r.hi, table, err)
		}
		*r = run{}
		return nil
	}
	// A run of each table is open at a time; a row of that table that
	// does not continue it (not kept, or moved otherwise) ends it.
	var events, rejects run
	for i, o := range p.old {
		table, r := "rejects", &rejects
		if o.event {
			table, r = "events", &events
		}
		j := p.pair[i]
		if j < 0 {
			if err := flush(table, r); err != nil {
				return err
			}
			continue
		}
		n := p.nw[j]
		dStart, dLine := n.start-o.start, n.number-o.num
		if r.n > 0 && (dStart != r.dStart || dLine != r.dLine || n.end-o.end != dStart) {
			if err := flush(table, r); err != nil {
				return err
			}
		}
		if n.end-o.end != dStart { // its bytes differ (a secret redacted alike)
			if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET generation = ?, start_offset = ?, end_offset = ?, line = ?, file = ? WHERE id = ?`,
				gen, n.start, n.end, n.number, file, o.row); err != nil {
				return fmt.Errorf("move line %d: %w", n.number, err)
			}
			continue
		}
		if r.n == 0 {
			*r = run{lo: o.start, dStart: dStart, dLine: dLine}
		}
		r.hi = o.start
		r.n++
	}
	if err := flush("events", &events); err != nil {
		return err
	}
	return flush("rejects", &rejects)
}

// deleteEvents deletes events (their full-text entries through the
// fulltext_deletes trigger, their vectors by cascade), the links they
// made, and brings their sessions' rows and links up to date.
func deleteEvents(ctx context.Context, tx *sql.Tx, rows []int64) error {
	if len(rows) == 0 {
		return nil
	}
	sessions := map[string]bool{}
	var pairs [][2]string
	for start := 0; start < len(rows); start += inChunk {
		chunk := int64Args(rows[start:min(start+inChunk, len(rows))])
		in := placeholders(len(chunk))
		if err := eachRow(ctx, tx, `SELECT DISTINCT session_id FROM events WHERE id IN (`+in+`) AND session_id IS NOT NULL`, func(r *sql.Rows) error {
			var s string
			err := r.Scan(&s)
			sessions[s] = true
			return err
		}, chunk...); err != nil {
			return err
		}
		if err := eachRow(ctx, tx, `SELECT previous, new FROM session_links WHERE event IN (`+in+`)`, func(r *sql.Rows) error {
			var p [2]string
			err := r.Scan(&p[0], &p[1])
			pairs = append(pairs, p)
			return err
		}, chunk...); err != nil {
			return err
		}
	}
	if err := queueShareRemovals(ctx, tx, rows); err != nil {
		return fmt.Errorf("team memory's queue: %w", err)
	}
	// Links first: session_links.event references events.
	if err := execChunks(ctx, tx, `DELETE FROM session_links WHERE event IN (%s)`, rows); err != nil {
		return fmt.Errorf("links: %w", err)
	}
	if err := execChunks(ctx, tx, `DELETE FROM events WHERE id IN (%s)`, rows); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	for s := range sessions {
		if err := recountSession(ctx, tx, s); err != nil {
			return err
		}
	}
	// A link another event still makes stays.
	for _, p := range pairs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_links (previous, new, event, ts)
			SELECT previous_session, new_session, id, ts FROM events
			WHERE type = 'session_resume' AND previous_session = ?1 AND new_session = ?2
			AND NOT EXISTS (SELECT 1 FROM forgotten WHERE session IN (?1, ?2))
			ORDER BY id LIMIT 1 ON CONFLICT DO NOTHING`, p[0], p[1]); err != nil {
			return fmt.Errorf("links: %w", err)
		}
	}
	return bumpPendingEpoch(ctx, tx)
}

// recountSession brings a session's row up to date with its events, or
// deletes it when it has none left.
func recountSession(ctx context.Context, tx *sql.Tx, session string) error {
	var n, exchanges, resets int64
	var first, last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(type = 'exchange'), 0), coalesce(sum(type = 'context_reset'), 0), min(ts), max(ts)
		FROM events WHERE session_id = ?`, session).Scan(&n, &exchanges, &resets, &first, &last); err != nil {
		return fmt.Errorf("session %s: %w", session, err)
	}
	var err error
	if n == 0 {
		_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, session)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET first_ts = ?, last_ts = ?, exchanges = ?, resets = ?, events = ? WHERE id = ?`,
			first.Int64, last.Int64, exchanges, resets, n, session)
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", session, err)
	}
	return nil
}

// execChunks runs query (an IN list as %s) over ids, a chunk at a time.
func execChunks(ctx context.Context, tx *sql.Tx, query string, ids []int64) error {
	for start := 0; start < len(ids); start += inChunk {
		chunk := ids[start:min(start+inChunk, len(ids))]
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(query, placeholders(len(chunk))), int64Args(chunk)...); err != nil {
			return err
		}
	}
	return nil
}

// record writes the edit into edits. An edit taken up again (the old
// generation was itself an edit whose lines were not all read yet, say
// before a crash) that changes and removes nothing is the same edit: its
// record moves to the new generation instead.
func (p *editPlan) record(ctx context.Context, tx *sql.Tx, gen int64, file string, now int64) error {
	s := p.sum
	var end int64
	for _, n := range p.nw {
		end = max(end, n.end)
	}
	if s.Changed == 0 && s.Removed == 0 {
		var last, lastEnd int64
		switch err := tx.QueryRowContext(ctx, `SELECT id, end_offset FROM edits WHERE generation = ? ORDER BY id DESC LIMIT 1`,
			p.prev.ID).Scan(&last, &lastEnd); {
		case err == nil && p.prev.Offset < lastEnd:
			_, err := tx.ExecContext(ctx, `UPDATE edits SET generation = ?, end_offset = ? WHERE id = ?`, gen, end, last)
			return err
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO edits (generation, replaced, file, at, kept, changed, removed, added, end_offset)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, gen, p.prev.ID, file, now, s.Kept, s.Changed, s.Removed, s.Added, end)
	return err
}
