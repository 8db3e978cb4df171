// Package index is continuity's durable store: one SQLite database (WAL
// mode) holding every indexed conversation event, the tailing checkpoints of
// the watcher (generations), rejected lines, counters and vectors. It is
// the single source of truth; everything else is derived from it,
// including the full-text index, which lives in a second file
// (fulltext.go).
//
// One process writes (the daemon, which holds the lock from AcquireLock);
// any number may read, including through Open with Options.ReadOnly while
// the daemon runs.
package index

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/praxis-os/continuity/redact"
)

// FileName is the database file's name inside the cache folder.
const FileName = "index.db"

const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// pageSize is the page size of a new database. Events are 1–3 KB rows
// (the raw line plus its decoded text); with 4 KiB pages most pages would
// hold one row and waste a third of their space, with 16 KiB pages rows
// pack five or six to a page, so a batch writes fewer bytes to the WAL and
// again to the database at checkpoint.
const pageSize = 16384

// writerDriver is go-sqlite3 with the settings of read-write connections
// that the DSN cannot carry. They run on every new connection, so a
// connection that database/sql reopens gets them too.
const writerDriver = "sqlite3-continuity-writer"

var registerOnce sync.Once

func registerDriver() {
	registerOnce.Do(func() {
		sql.Register(writerDriver, &sqlite3.SQLiteDriver{
			ConnectHook: func(c *sqlite3.SQLiteConn) error {
				// page_size only matters before the first table exists.
				// The WAL is checkpointed every 1000 pages (16 MiB), the
				// default, and trimmed back to 64 MiB after growing
				// past it (a reader holding an old snapshot).
				_, err := c.Exec(fmt.Sprintf(`PRAGMA page_size = %d;
					PRAGMA journal_mode = WAL;
					PRAGMA journal_size_limit = %d;`, pageSize, 64<<20), nil)
				return err
			},
		})
	})
}

// ErrReadOnly is returned by the write methods of a DB opened read-only.
var ErrReadOnly = errors.New("index: database is open read-only")

// Options tune Open.
type Options struct {
	// ReadOnly opens an existing database for reading only, next to a
	// running daemon: nothing is created, no migration runs, and a schema
	// version other than the one this binary knows is an error.
	ReadOnly bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Redactor removes secrets before anything is stored; nil means
	// redact.FromEnv(): the default patterns unless CONTINUITY_REDACT=off.
	Redactor *redact.Redactor
	// NoRedaction stores texts as written (tests of raw storage).
	NoRedaction bool
}

// DB is an open index. Its methods are safe for concurrent use.
type DB struct {
	dir      string
	path     string
	now      func() time.Time
	redactor *redact.Redactor // nil: no redaction
	// redactorReady delivers redactor while Open opens the files (see
	// redactorLater); nil once received, or when not needed.
	redactorReady chan *redact.Redactor

	// w is the single writer connection (nil when read-only); r is a pool
	// of read-only connections which, thanks to WAL, never wait for w.
	w *sql.DB
	r *sql.DB

	// ft is the writer connection of the full-text index (fulltext.go;
	// nil when read-only), ftMu serialises its indexing steps and ftMark
	// is its watermark.
	ftPath string
	ft     *sql.DB
	ftFile *os.File // fulltext.db as ft opened it (CheckFullText)
	rc     *readConnector
	ftMu   sync.Mutex
	ftMark atomic.Int64
	// ftChanges counts the steps that changed the full-text index (see
	// FullTextState).
	ftChanges atomic.Int64
	// ftDeleting is odd while DeleteSession runs and counts up by one
	// at its start and at its end: an indexing step read ahead is used
	// only if it saw no deletion start (ftBatch).
	ftDeleting atomic.Int64
	// ckpt runs index.db's checkpoints during a backfill (backfill.go);
	// nil otherwise.
	ckpt atomic.Pointer[checkpointer]
	// ftFeed hands committed exchanges to the full-text writer during a
	// backfill (fulltext_feed.go); nil otherwise.
	ftFeed atomic.Pointer[ftFeed]

	// held is index.db, kept open by the writer to notice the file being
	// deleted or replaced under it (CheckFiles).
	held *os.File

	// hints remembers, per embedder identity, where PendingEmbeddings
	// may start (see there).
	hintMu sync.Mutex
	hints  map[string]pendingHint
}

// Open opens (creating and migrating if needed) the index in dir, the
// cache folder <workspace>/.praxis-os/.cache/continuity.
//
// The folder is made 0700 and the database files (index.db and its -wal
// and -shm companions) 0600, whatever the umask: conversations are private.
//
// The writer runs with journal_mode=WAL and synchronous=FULL. FULL makes
// every commit durable (the WAL is fsynced at each commit), so a watcher
// checkpoint that Commit reported is never lost to a power cut — with
// NORMAL a committed batch could be rolled back by a crash of the machine
// while the watcher already believes it is done; that would not break
// exactly-once (the lines would be read again), but a reported commit must
// stay committed. Batching keeps the cost at one fsync per batch.
func Open(dir string, opts Options) (*DB, error) {
	db := &DB{dir: dir, path: filepath.Join(dir, FileName), now: opts.Now, redactor: opts.Redactor}
	db.ftPath = fullTextPath(db.path)
	if db.now == nil {
		db.now = time.Now
	}
	var err error
	if opts.ReadOnly {
		// Only the writer redacts (what it stores): a reader leaves the
		// rules uncompiled (redactorLater).
		err = db.openReadOnly()
	} else {
		if db.redactor == nil && !opts.NoRedaction {
			db.redactorReady = redactorLater()
		}
		err = db.openWriter()
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) openReadOnly() error {
	if _, err := os.Stat(db.path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("index: no index at %s (has the daemon run in this workspace?): %w", db.path, err)
		}
		return fmt.Errorf("index: open %s: %w", db.path, err)
	}
	r := db.openReaders()
	db.r = r
	ctx := context.Background()
	if err := checkFTS5(ctx, r); err != nil {
		return fmt.Errorf("index: open %s read-only: %w", db.path, err)
	}
	v, err := userVersion(ctx, r)
	if err != nil {
		return fmt.Errorf("index: open %s read-only: %w", db.path, err)
	}
	return checkVersion(v, db.path)
}

func (db *DB) openWriter() error {
	if err := os.MkdirAll(db.dir, dirPerm); err != nil {
		return fmt.Errorf("index: create %s: %w", db.dir, err)
	}
	if err := os.Chmod(db.dir, dirPerm); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	// Create the file ourselves so that its mode does not depend on the
	// umask; SQLite then gives -wal and -shm the database file's mode.
	f, err := os.OpenFile(db.path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return fmt.Errorf("index: create %s: %w", db.path, err)
	}
	db.held = f
	if err := db.fixPerms(); err != nil {
		return err
	}

	registerDriver()
	w, err := sql.Open(writerDriver, dsn(db.path,
		"_synchronous=FULL&_busy_timeout=5000&_foreign_keys=on&_cache_size=-16000&_txlock=immediate"))
	if err != nil {
		return fmt.Errorf("index: open %s: %w", db.path, err)
	}
	// One writer connection: SQLite serialises writers anyway, and a
	// single connection makes the order of transactions the order of calls.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db.w = w

	ctx := context.Background()
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("index: open %s: %w", db.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("index: open %s: journal mode is %q, want wal", db.path, mode)
	}
	if err := checkFTS5(ctx, w); err != nil {
		return fmt.Errorf("index: open %s: %w", db.path, err)
	}
	if err := migrate(ctx, w, db.path); err != nil {
		return err
	}
	if db.redactorReady != nil {
		db.redactor = <-db.redactorReady
		db.redactorReady = nil
	}
	if err := db.redactStored(ctx); err != nil {
		return err
	}
	// The first write created -wal and -shm; make sure of their mode.
	if err := db.fixPerms(); err != nil {
		return err
	}
	if err := db.openFullText(ctx); err != nil {
		return err
	}
	r := db.openReaders()
	r.SetMaxOpenConns(4)
	db.r = r
	return nil
}

// openReaders opens the pool of read-only connections. Each has the
// full-text index attached as "ft" when its file exists.
func (db *DB) openReaders() *sql.DB {
	db.rc = &readConnector{
		dsn:    dsn(db.path, "mode=ro&_busy_timeout=5000"),
		ftPath: db.ftPath,
		ftDSN:  dsn(db.ftPath, "mode=ro"),
	}
	return sql.OpenDB(db.rc)
}

// readConnector opens read-only connections to index.db with
// fulltext.db attached.
type readConnector struct {
	dsn, ftPath, ftDSN string
	drv                sqlite3.SQLiteDriver
	// epoch grows when fulltext.db is replaced (rebuilt after it was
	// deleted): connections of an older epoch have the old file attached,
	// or none, and are discarded instead of going back to the pool.
	epoch atomic.Int64
	// attachErr is why the last connection could not attach fulltext.db
	// (nil when it could): the events stay readable without it.
	attachErr atomic.Pointer[error]
}

func (c *readConnector) Connect(context.Context) (driver.Conn, error) {
	epoch := c.epoch.Load()
	raw, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	conn := &readConn{SQLiteConn: raw.(*sqlite3.SQLiteConn), c: c, epoch: epoch}
	if _, err := os.Stat(c.ftPath); err != nil {
		return conn, nil // not built yet: full-text queries fail with ErrNoFullText
	}
	if _, err := conn.Exec(`ATTACH DATABASE ? AS ft`, []driver.Value{c.ftDSN}); err != nil {
		// A damaged full-text index must not take the events with it:
		// full-text queries report this error, the rest works.
		err = fmt.Errorf("%s cannot be read (%w): stop the daemon, delete %s*, start it again: it rebuilds the file",
			c.ftPath, err, c.ftPath)
		c.attachErr.Store(&err)
		return conn, nil
	}
	// A full-text index of another layout (written by another version of
	// continuity, not rebuilt yet) holds terms this version would not
	// find: report it rather than answer wrongly.
	var v int64
	if rows, err := conn.SQLiteConn.Query(`PRAGMA ft.user_version`, nil); err == nil {
		vals := []driver.Value{nil}
		if rows.Next(vals) == nil {
			v, _ = vals[0].(int64)
		}
		rows.Close()
	}
	if v != 0 && v != fullTextVersion {
		conn.SQLiteConn.Exec(`DETACH DATABASE ft`, nil)
		err := fmt.Errorf("%s was built by another version of continuity (layout %d, this one reads %d): start the daemon or run `continuity ingest`: it rebuilds the file",
			c.ftPath, v, fullTextVersion)
		c.attachErr.Store(&err)
		return conn, nil
	}
	c.attachErr.Store(nil)
	return conn, nil
}

func (c *readConnector) Driver() driver.Driver { return &c.drv }

// readConn is a read-only connection that knows which fulltext.db it
// attached (its epoch).
type readConn struct {
	*sqlite3.SQLiteConn
	c     *readConnector
	epoch int64
}

// IsValid tells database/sql not to pool a connection whose attached
// fulltext.db was replaced since it connected.
func (rc *readConn) IsValid() bool { return rc.epoch == rc.c.epoch.Load() }

// ResetSession refuses (ErrBadConn: database/sql then opens another) a
// pooled connection that became stale while idle.
func (rc *readConn) ResetSession(context.Context) error {
	if !rc.IsValid() {
		return driver.ErrBadConn
	}
	return nil
}

// fixPerms makes the database files private.
func (db *DB) fixPerms() error {
	for _, p := range []string{db.path, db.path + "-wal", db.path + "-shm"} {
		if err := os.Chmod(p, filePerm); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("index: %w", err)
		}
	}
	return nil
}

// dsn builds a SQLite URI for path with the given query (both SQLite URI
// parameters such as mode=ro and go-sqlite3 ones such as _txlock).
func dsn(path, query string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	// url.URL.String gives "file:///abs/path" for an absolute path, with
	// '?', '#' and '%' escaped, as SQLite's URI parser expects.
	return u.String() + "?" + query
}

// CheckFiles reports (ErrCacheGone) when index.db, as the writer opened it,
// is no longer at its path: the cache folder was deleted or the file
// replaced under this process, whose commits then go to a file nobody
// else sees. The daemon checks it periodically and starts again.
func (db *DB) CheckFiles() error {
	if db.held == nil {
		return nil
	}
	return sameFile(db.held, db.path)
}

// Path is the database file's path.
func (db *DB) Path() string { return db.path }

// ReadOnly reports whether db was opened with Options.ReadOnly.
func (db *DB) ReadOnly() bool { return db.w == nil }

// Close closes the database. Readers close first so that the writer,
// closing last, can checkpoint the WAL into the database file.
func (db *DB) Close() error {
	var errs []error
	if db.r != nil {
		errs = append(errs, db.r.Close())
		db.r = nil
	}
	if db.ft != nil {
		errs = append(errs, db.ft.Close())
		db.ft = nil
	}
	if db.ftFile != nil {
		db.ftFile.Close()
		db.ftFile = nil
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
		db.w = nil
	}
	if db.held != nil {
		db.held.Close()
		db.held = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("index: close %s: %w", db.path, err)
	}
	return nil
}

// writer returns the write pool or ErrReadOnly.
func (db *DB) writer() (*sql.DB, error) {
	if db.w == nil {
		return nil, ErrReadOnly
	}
	return db.w, nil
}
