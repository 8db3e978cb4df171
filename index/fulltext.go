package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The full-text index (FTS5 over the user and ai texts of exchanges) lives
// in its own file, fulltext.db, next to index.db, and is derived from it:
// Commit stores events in index.db; IndexFullText, run by the full-text
// indexer (follow/fulltext, through DrainFullText) after the commits,
// tokenises them into fulltext.db.
//
// Why a second file: tokenising and indexing the text is most of the work
// of a backfill (more than parsing and storing the events), and SQLite has
// one writer per file. In index.db the indexing would hold the commit's
// write lock; in its own file it runs on a second core while the next
// batches commit. Lexical search lags a commit by one indexing step
// (milliseconds after a daemon's usual commits; up to a second or so of a
// backfill's 20000-event steps); in the writing process Lexical first
// catches up a small lag itself, so that a search sees what was committed
// before it.
//
// How it stays exact:
//   - fulltext.db records the highest event row id it has read (its
//     watermark) in the transaction that indexes those events; event row
//     ids only grow (CounterEventSeq), so "id > watermark" is exactly the
//     events not indexed yet, after any crash of either file.
//   - Deleting exchanges (DeleteSession) records their ids in
//     fulltext_deletes, in index.db, in the deleting transaction; the
//     indexer removes them from the full-text index, then from that table
//     (removing an absent row is harmless, so a crash between the two is
//     too).
//   - fulltext.db records index.db's instance id and its own schema
//     version; when either differs (index.db replaced, restored from a
//     backup, a new layout) it is dropped and rebuilt from the events.
//
// fulltext.db is written with synchronous=NORMAL: a power cut may take
// back its last transactions, watermark included, and they are indexed
// again; it never holds something index.db does not.
//
// It is contentless (content=''): the texts stay in index.db only. Search
// reads it through readers that ATTACH it as "ft".
//
// The texts are analysed in Go before FTS5 sees them (analyze.Document:
// Snowball stems, CJK bigrams), and FTS5's own tokenizer only splits on
// spaces (and would lowercase). So the terms of the index are
// exactly those analyze.WordTerms gives a query, whichever stemmer FTS5
// ships with.

// FullTextFileName is the full-text index's file name in the cache folder.
const FullTextFileName = "fulltext.db"

// fullTextVersion is the layout of fulltext.db; a file of another version
// is rebuilt (it is derived data: no migration is worth writing). Any
// change to how texts become terms (package analyze) must bump it.
//
//	1: FTS5's porter tokenizer
//	2: analyze.Document (Snowball English stems, CJK bigrams)
//	3: the ai column also holds the exchange's files (SearchableAI)
const fullTextVersion = 3

// fullTextSchema creates fulltext.db. Merging segments less eagerly than
// FTS5's defaults (automerge 4, crisismerge 16) cut a backfill's indexing
// time by a quarter, without slowing queries measurably.
const fullTextSchema = `
CREATE VIRTUAL TABLE events_fts USING fts5(
	user, ai,
	content = '', contentless_delete = 1,
	tokenize = 'unicode61 remove_diacritics 0'
);
INSERT INTO events_fts (events_fts, rank) VALUES ('automerge', 16);
INSERT INTO events_fts (events_fts, rank) VALUES ('crisismerge', 64);
-- How many exchanges hold each term (a view of the index, no storage).
CREATE VIRTUAL TABLE events_fts_vocab USING fts5vocab(events_fts, 'row');
CREATE TABLE state (
	key   TEXT PRIMARY KEY,
	value ANY NOT NULL
);
`

// Keys of fulltext.db's state table.
const (
	stateInstance  = "instance"  // index.db's meta instance
	stateWatermark = "watermark" // highest event row id read
)

// ErrNoFullText: the full-text index file does not exist yet (a reader
// opened the index before any writer built it).
var ErrNoFullText = errors.New("the full-text index is not built yet: start the daemon or run `continuity ingest`")

// fullTextStep is how many events one indexing step reads at most, and
// fullTextStepBytes how many bytes of texts (it stops after the event
// that reaches it); fullTextDeleteStep is how many deletions it applies.
//
// Each step is a transaction of fulltext.db, and FTS5 writes out what a
// transaction added as a new segment when it commits (or when its
// pending terms outgrow fullTextHashSize), to be merged later with
// others: the fewer and larger the segments, the less merging. Steps of
// 2000 events made ten times as many segments, whose commits were a large
// share of the full-text writer's time; steps of up to 20000 events or
// 8 MiB of text make few (docs/performance.md). A daemon's steps are
// small anyway: they hold what was committed since the last.
const (
	fullTextStep       = 20000
	fullTextStepBytes  = 8 << 20
	fullTextDeleteStep = 1000
)

// fullTextHashSize is FTS5's 'hashsize': how many bytes of pending terms
// a transaction keeps in memory before writing them out as a segment
// (FTS5's default, 1 MiB, would cut a step into several). A storage
// setting: terms, ranking and phrase search are the same whatever the
// segments. Set when fulltext.db is created or opened.
const fullTextHashSize = 16 << 20

// fullTextSyncLag is the most not-yet-indexed events that Lexical, in the
// writing process, indexes itself before searching; behind a larger lag
// (a backfill) it searches what is indexed and leaves the rest to the
// indexer.
const fullTextSyncLag = 5000

// openFullText opens fulltext.db for writing, creating or rebuilding it
// when it is missing, of another version or of another index.db.
func (db *DB) openFullText(ctx context.Context) error {
	var instance string
	if err := db.w.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, stateInstance).Scan(&instance); err != nil {
		return fmt.Errorf("index: read instance id: %w", err)
	}
	for attempt := 0; ; attempt++ {
		ok, err := db.openFullTextFile(ctx, instance)
		switch {
		case ok:
			return nil
		case err != nil && attempt > 0:
			return err
		case attempt > 0:
			return fmt.Errorf("index: %s does not match %s even after a rebuild", db.ftPath, db.path)
		}
		// Unreadable (damaged, not a database), another layout or
		// another index.db: it is derived, so drop it and build anew.
		if db.ft != nil {
			db.ft.Close()
			db.ft = nil
		}
		for _, p := range []string{db.ftPath, db.ftPath + "-wal", db.ftPath + "-shm"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("index: remove stale full-text index: %w", err)
			}
		}
	}
}

// openFullTextFile opens fulltext.db into db.ft; ok is false when the file
// is unreadable (err says why), of another version or of another instance
// (db.ft may then be open, to be closed by the caller).
func (db *DB) openFullTextFile(ctx context.Context, instance string) (ok bool, err error) {
	f, err := os.OpenFile(db.ftPath, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return false, fmt.Errorf("index: create %s: %w", db.ftPath, err)
	}
	f.Close()
	ft, err := sql.Open(writerDriver, dsn(db.ftPath, "_synchronous=NORMAL&_busy_timeout=5000&_txlock=immediate"))
	if err != nil {
		return false, fmt.Errorf("index: open %s: %w", db.ftPath, err)
	}
	ft.SetMaxOpenConns(1)
	ft.SetMaxIdleConns(1)
	ft.SetConnMaxLifetime(0)
	ft.SetConnMaxIdleTime(0)
	db.ft = ft
	// The file stays open to notice it being deleted (CheckFullText).
	if held, err := os.Open(db.ftPath); err == nil {
		if db.ftFile != nil {
			db.ftFile.Close()
		}
		db.ftFile = held
	}

	v, err := userVersion(ctx, ft)
	if err != nil {
		return false, fmt.Errorf("index: open %s: %w", db.ftPath, err)
	}
	if v == 0 {
		tx, err := ft.BeginTx(ctx, nil)
		if err != nil {
			return false, fmt.Errorf("index: create %s: %w", db.ftPath, err)
		}
		defer tx.Rollback()
		for _, q := range []string{fullTextSchema, fmt.Sprintf("PRAGMA user_version = %d", fullTextVersion)} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return false, fmt.Errorf("index: create %s: %w", db.ftPath, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO state (key, value) VALUES (?, ?), (?, 0)`,
			stateInstance, instance, stateWatermark); err != nil {
			return false, fmt.Errorf("index: create %s: %w", db.ftPath, err)
		}
		if err := tx.Commit(); err != nil {
			return false, fmt.Errorf("index: create %s: %w", db.ftPath, err)
		}
	} else if v != fullTextVersion {
		return false, nil
	}
	var got string
	switch err := ft.QueryRowContext(ctx, `SELECT value FROM state WHERE key = ?`, stateInstance).Scan(&got); {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("index: open %s: %w", db.ftPath, err)
	}
	if got != instance {
		return false, nil
	}
	if err := setFullTextHashSize(ctx, ft); err != nil {
		return false, fmt.Errorf("index: open %s: %w", db.ftPath, err)
	}
	mark, err := db.fullTextWatermark(ctx)
	if err != nil {
		return false, err
	}
	db.ftMark.Store(mark)
	for _, p := range []string{db.ftPath, db.ftPath + "-wal", db.ftPath + "-shm"} {
		if err := os.Chmod(p, filePerm); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("index: %w", err)
		}
	}
	return true, nil
}

// setFullTextHashSize sets fullTextHashSize in fulltext.db's FTS5
// configuration (stored in it) unless it is set already.
func setFullTextHashSize(ctx context.Context, ft *sql.DB) error {
	var size int64
	err := ft.QueryRowContext(ctx, `SELECT v FROM events_fts_config WHERE k = 'hashsize'`).Scan(&size)
	if err == nil && size == fullTextHashSize {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read the full-text hash size: %w", err)
	}
	if _, err := ft.ExecContext(ctx, `INSERT INTO events_fts (events_fts, rank) VALUES ('hashsize', ?)`, fullTextHashSize); err != nil {
		return fmt.Errorf("set the full-text hash size: %w", err)
	}
	return nil
}

func (db *DB) fullTextWatermark(ctx context.Context) (int64, error) {
	var mark int64
	if err := db.ft.QueryRowContext(ctx, `SELECT value FROM state WHERE key = ?`, stateWatermark).Scan(&mark); err != nil {
		return 0, fmt.Errorf("index: read full-text watermark: %w", err)
	}
	return mark, nil
}

// IndexFullText runs one step of the full-text indexer: it removes up to
// 1000 deleted exchanges from the full-text index, then indexes the
// exchanges among the next events it has not read (fullTextStep). It returns how
// many deletions and events it handled: 0 when the index is caught up.
// Steps are serialised; each is one transaction of fulltext.db.
func (db *DB) IndexFullText(ctx context.Context) (n int, err error) {
	return db.indexFullTextStep(ctx, nil)
}

// indexFullTextStep is IndexFullText with the events of the step read
// ahead (by readFullTextBatch, past the watermark the step will start
// from), when pre is not nil: used if still valid, read again if not. It
// takes pre over (stops its analysis).
func (db *DB) indexFullTextStep(ctx context.Context, pre *ftBatch) (n int, err error) {
	defer pre.stop()
	if db.w == nil { // read-only: no full-text writer (db.ft is swapped under ftMu)
		return 0, ErrReadOnly
	}
	db.ftMu.Lock()
	defer db.ftMu.Unlock()
	if db.ft == nil {
		return 0, fmt.Errorf("index: full-text indexing: %s is not open (its rebuild failed)", db.ftPath)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("index: full-text indexing: %w", err)
		}
	}()
	if n, err = db.fullTextDeletes(ctx); err != nil {
		return n, err
	}
	b := pre
	if !b.valid(db) {
		if b, err = db.readFullTextBatch(ctx, db.ftMark.Load()); err != nil {
			return n, err
		}
		defer b.stop()
	}
	added, err := db.fullTextWrite(ctx, b)
	return n + added, err
}

// fullTextDeletes applies the recorded deletions.
func (db *DB) fullTextDeletes(ctx context.Context) (int, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id FROM fulltext_deletes ORDER BY id LIMIT ?`, fullTextDeleteStep)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return 0, err
	}
	tx, err := db.ft.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	del, err := tx.PrepareContext(ctx, `DELETE FROM events_fts WHERE rowid = ?`)
	if err != nil {
		return 0, err
	}
	defer del.Close()
	quiet := context.WithoutCancel(ctx) // see fullTextAdd
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if _, err := del.ExecContext(quiet, id); err != nil {
			return 0, fmt.Errorf("remove exchange %d: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	db.ftChanges.Add(1)
	if _, err := db.w.ExecContext(ctx, `DELETE FROM fulltext_deletes WHERE id IN (`+placeholders(len(ids))+`)`,
		int64Args(ids)...); err != nil {
		return 0, err
	}
	return len(ids), nil
}

// ftBatch holds the events past a watermark that one indexing step
// reads (see fullTextStep), their exchanges being analysed.
//
// A batch may be read ahead, while the previous step still writes (the
// full-text indexer's pipeline: reading and analysing on other cores,
// only the inserts on the writer's). It is then used only if, when its
// step starts, the watermark is the one it was read past and no session
// was deleted since before it was read (ftDeleting, see DeleteSession):
// a deleted exchange read just before its deletion would otherwise be
// inserted after that deletion was applied, and stay searchable.
type ftBatch struct {
	after    int64 // the watermark it was read past
	last     int64 // the highest event id read (the next watermark)
	n        int   // events read
	todo     []ftExchange
	an       *exchangeAnalysis
	deleting int64 // db.ftDeleting before the read
}

// readFullTextBatch reads the events past after (in a short read
// transaction of index.db: held open while indexing, it would stop
// index.db's checkpoints from recycling the WAL, and the commits would
// slow down) and starts analysing the exchanges among them.
func (db *DB) readFullTextBatch(ctx context.Context, after int64) (*ftBatch, error) {
	deleting := db.ftDeleting.Load()
	if deleting%2 == 0 {
		if b := db.ftFeed.Load().take(after, deleting); b != nil {
			return b, nil // handed over by the commits (fulltext_feed.go)
		}
	}
	b := &ftBatch{after: after, last: after, deleting: deleting}
	rows, err := db.r.QueryContext(ctx, `SELECT id, type = 'exchange', coalesce(user, ''), coalesce(ai, ''), coalesce(files, '')
		FROM events WHERE id > ? ORDER BY id LIMIT ?`, after, fullTextStep)
	if err != nil {
		return nil, err
	}
	var size int
	for size < fullTextStepBytes && rows.Next() {
		var e ftExchange
		var isExchange bool
		var files string
		if err := rows.Scan(&e.row, &isExchange, &e.user, &e.ai, &files); err != nil {
			rows.Close()
			return nil, err
		}
		e.ai = SearchableAI(e.ai, files)
		if isExchange {
			b.todo = append(b.todo, e)
			size += len(e.user) + len(e.ai)
		}
		b.last = e.row
		b.n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The texts are analysed on every core, a chunk at a time, while
	// the writer inserts them in order as they become ready: analysing
	// is as much work as inserting.
	b.an = analyzeExchanges(b.todo)
	return b, nil
}

// valid reports whether b, read ahead, may be written now: see ftBatch.
// The caller holds ftMu.
func (b *ftBatch) valid(db *DB) bool {
	return b != nil && b.after == db.ftMark.Load() && b.deleting%2 == 0 && b.deleting == db.ftDeleting.Load()
}

// stop ends the analysis of b's exchanges (b may be nil).
func (b *ftBatch) stop() {
	if b != nil && b.an != nil {
		b.an.stop()
	}
}

// fullTextWrite indexes the exchanges of b and advances the watermark to
// the last event b read, in one transaction of fulltext.db. The caller
// holds ftMu.
func (db *DB) fullTextWrite(ctx context.Context, b *ftBatch) (int, error) {
	if b.n == 0 {
		return 0, nil
	}
	tx, err := db.ft.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO events_fts (rowid, user, ai) VALUES (?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	// The rows are inserted without ctx: go-sqlite3 runs each statement
	// bound to a cancellable context in a goroutine of its own, a
	// goroutine and two context switches per exchange. ctx is checked
	// between rows instead.
	quiet := context.WithoutCancel(ctx)
	for i := range b.todo {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		b.an.wait(i)
		e := &b.todo[i]
		if _, err := ins.ExecContext(quiet, e.row, e.user, e.ai); err != nil {
			return 0, fmt.Errorf("index exchange %d: %w", e.row, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE state SET value = ? WHERE key = ?`, b.last, stateWatermark); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	db.ftMark.Store(b.last)
	if len(b.todo) > 0 {
		db.ftChanges.Add(1)
	}
	return b.n, nil
}

// FullTextState identifies the state of the full-text index as this
// process writes it: it changes whenever an indexing step adds or removes
// exchanges, so what was read from the index under one state (document
// counts, say) stays exact while the state is the same. ok is false in a
// read-only process, which cannot tell.
func (db *DB) FullTextState() (state int64, ok bool) {
	if db.w == nil {
		return 0, false
	}
	return db.ftChanges.Load(), true
}

// catchUpFullText, in the writing process, indexes what the full-text
// index lacks when that is little (fullTextSyncLag events or fewer), so
// that a search sees every exchange committed before it. Readers and
// larger lags are left to the indexer.
func (db *DB) catchUpFullText(ctx context.Context) error {
	if db.w == nil {
		return nil
	}
	var top int64
	var deletes bool
	if err := db.r.QueryRowContext(ctx, `SELECT coalesce((SELECT max(id) FROM events), 0),
		EXISTS (SELECT 1 FROM fulltext_deletes)`).Scan(&top, &deletes); err != nil {
		return fmt.Errorf("index: full-text lag: %w", err)
	}
	if (top <= db.ftMark.Load() && !deletes) || top-db.ftMark.Load() > fullTextSyncLag {
		return nil
	}
	for {
		n, err := db.IndexFullText(ctx)
		if err != nil || n == 0 {
			return err
		}
	}
}

// FullTextPending counts the exchanges the full-text index does not hold
// yet plus the deletions it has not applied: 0 when it is up to date.
// A reader sees the watermark the writer last committed.
func (db *DB) FullTextPending(ctx context.Context) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT `+countExchangesAfter(`(SELECT value FROM ft.state WHERE key = ?1)`)+`
		+ (SELECT count(*) FROM fulltext_deletes)`, stateWatermark).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("index: full-text pending: %w", db.fullTextError(err))
	}
	return n, nil
}

// ExchangesNotInFullText counts the exchanges the full-text index does
// not hold yet (FullTextPending without the deletions): what a search of
// a reader, which cannot index them, does not find by their words.
func (db *DB) ExchangesNotInFullText(ctx context.Context) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT `+countExchangesAfter(`(SELECT value FROM ft.state WHERE key = ?1)`), stateWatermark).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("index: exchanges not in the full-text index: %w", db.fullTextError(err))
	}
	return n, nil
}

// fullTextError turns the error of a query on a reader without the
// full-text index attached into ErrNoFullText, or the reason it could not
// be attached.
func (db *DB) fullTextError(err error) error {
	if err == nil || !strings.Contains(err.Error(), "no such table: ft.") {
		return err
	}
	if db.rc != nil {
		if aerr := db.rc.attachErr.Load(); aerr != nil {
			return *aerr
		}
	}
	return ErrNoFullText
}

// CheckFullText, in the writing process, rebuilds the full-text index when
// its file was deleted or replaced while the process had it open (rm
// fulltext.db under a running daemon): the old file is closed, a new one
// is created from index.db's events (indexed by the following steps), and
// reader connections that attached the old file, or none, are retired.
// rebuilt says whether it did so.
func (db *DB) CheckFullText(ctx context.Context) (rebuilt bool, err error) {
	if db.w == nil {
		return false, nil
	}
	db.ftMu.Lock()
	defer db.ftMu.Unlock()
	if db.ftFile != nil && sameFile(db.ftFile, db.ftPath) == nil {
		return false, nil
	}
	if err := db.CheckFiles(); err != nil {
		// index.db went too (the cache folder was deleted): nothing to
		// rebuild from; the daemon starts again on new files.
		return false, err
	}
	// Closing the writer connection (the last one on the old file)
	// checkpoints it and removes its -wal by name, before a new file can
	// take that name. Leftovers (the old -wal, -shm) must go too: SQLite
	// would read a stale -wal as part of a new file.
	if db.ft != nil { // nil after a failed rebuild
		db.ft.Close()
		db.ft = nil
	}
	if db.ftFile != nil {
		db.ftFile.Close()
		db.ftFile = nil
	}
	for _, p := range []string{db.ftPath + "-wal", db.ftPath + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("index: remove stale %s: %w", p, err)
		}
	}
	if db.rc != nil {
		db.rc.epoch.Add(1) // connections without the new file: not pooled again
	}
	if err := db.openFullText(ctx); err != nil {
		return false, fmt.Errorf("index: rebuild %s: %w", db.ftPath, err)
	}
	if db.rc != nil {
		db.rc.epoch.Add(1)
	}
	db.ftChanges.Add(1)
	return true, nil
}

// fullTextPath is the full-text index's path next to the database at path.
func fullTextPath(path string) string {
	return filepath.Join(filepath.Dir(path), FullTextFileName)
}
