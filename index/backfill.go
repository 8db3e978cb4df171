package index

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// Checkpoints during a backfill.
//
// In WAL mode a commit appends its pages to index.db-wal, and every
// 1000 pages (16 MiB) SQLite's automatic checkpoint copies them into
// index.db, inside the COMMIT that crossed the mark: reading the WAL
// back, writing the database, two fsyncs. In a backfill that COMMIT is on
// the critical path (the next batch waits for it), and every third or
// fourth commit of a backfill of short lines paid for a checkpoint
// (a third of the commits' time; docs/performance.md).
//
// During a backfill (BeginBackfill), the writer's connection does not
// checkpoint; a connection of its own does, on another goroutine, with
// the same cadence (about every backfillCheckpointBytes of lines
// committed), while the writer goes on committing. A passive checkpoint
// never blocks the writer nor waits for it. Checkpoints copy committed
// pages from one file to the other and decide nothing: what is durable,
// and when, is the same (each commit's WAL frames are synced by the
// COMMIT itself, synchronous=FULL).
//
// But SQLite starts the WAL over from its beginning only when a write
// transaction begins with every frame copied, which a checkpoint running
// beside the commits never sees (the next commit has begun by the time
// it ends): the WAL would grow by the whole backfill. So once the WAL
// holds backfillWALFrames, the writer, before its next transaction,
// copies what the last background checkpoint left (about one commit's
// pages) itself, and its transaction then writes the WAL from the start
// (journal_size_limit trims the file).

// backfillCheckpointBytes is how many bytes of lines are committed
// between two checkpoints of a backfill: about 16 MiB of WAL (a line
// of the logs becomes ~1.5 bytes of WAL: its row and index entries),
// SQLite's own cadence.
var backfillCheckpointBytes int64 = 10 << 20

// backfillWALFrames is the size of the WAL (in pages) past which the
// writer starts it over (see above): 16 MiB, so that, as with SQLite's
// own checkpoints, the commits write over the same 16–20 MiB of file
// again and again rather than into new pages of it (a growing WAL was
// measurably more kernel time: its page cache allocated anew).
var backfillWALFrames int64 = (16 << 20) / pageSize

// checkpointer runs the checkpoints of a backfill.
type checkpointer struct {
	conn    *sql.DB
	pending atomic.Int64  // bytes committed since the last checkpoint began
	frames  atomic.Int64  // frames in the WAL at the last checkpoint
	mu      sync.Mutex    // held by a checkpoint
	wake    chan struct{} // buffered (1): a checkpoint is due
	done    chan struct{}
	wg      sync.WaitGroup
	err     atomic.Pointer[error] // the first failure, reported by the end
}

// BeginBackfill moves index.db's checkpoints off the writer's commits
// until end is called (see above), and hands the exchanges committed to
// the full-text writer in memory (fulltext_feed.go): for a backfill
// (engine.CatchUp), whose commits follow each other. end puts the
// automatic checkpoints back. Without a writer it does nothing.
func (db *DB) BeginBackfill(ctx context.Context) (end func() error, err error) {
	if db.w == nil {
		return func() error { return nil }, nil
	}
	conn, err := sql.Open(writerDriver, dsn(db.path, "_busy_timeout=5000"))
	if err != nil {
		return nil, fmt.Errorf("index: open a checkpointer: %w", err)
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxLifetime(0)
	conn.SetConnMaxIdleTime(0)
	if err := conn.PingContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("index: open a checkpointer: %w", err)
	}
	// The writer has one connection (Open): the setting is its own. Were
	// it reopened, it would checkpoint itself again: slower, not wrong.
	if _, err := db.w.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
		conn.Close()
		return nil, fmt.Errorf("index: backfill: %w", err)
	}
	c := &checkpointer{conn: conn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.wg.Add(1)
	go c.run()
	db.ckpt.Store(c)
	db.ftFeed.Store(&ftFeed{})
	return sync.OnceValue(func() error {
		db.ftFeed.Store(nil)
		db.ckpt.Store(nil)
		close(c.done)
		c.wg.Wait()
		// SQLite's default: 1000 pages.
		_, err := db.w.ExecContext(context.WithoutCancel(ctx), `PRAGMA wal_autocheckpoint = 1000`)
		if cerr := conn.Close(); err == nil {
			err = cerr
		}
		if p := c.err.Load(); err == nil && p != nil {
			err = *p
		}
		if err != nil {
			return fmt.Errorf("index: end of backfill: %w", err)
		}
		return nil
	}), nil
}

// BackfillStored says that the backfill's commits are done: index.db is
// checkpointed at once, beside what follows (the full-text writer's last
// steps), so that closing it, which copies what is left of the WAL into
// it, has little left to do.
func (db *DB) BackfillStored() {
	if c := db.ckpt.Load(); c != nil {
		c.pending.Store(backfillCheckpointBytes)
		c.committed(0)
	}
}

// committed hears that a commit stored n bytes of lines.
func (c *checkpointer) committed(n int64) {
	if c.pending.Add(n) < backfillCheckpointBytes {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default: // one is due already
	}
}

func (c *checkpointer) run() {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			select {
			case <-c.wake: // the last one asked for: closing would do it
				c.checkpoint(c.conn)
			default:
			}
			return
		case <-c.wake:
		}
		c.pending.Store(0)
		c.checkpoint(c.conn)
	}
}

// checkpoint runs a passive checkpoint on conn: it copies what no reader
// still needs, without waiting for anyone; what it leaves is copied by
// the next one.
func (c *checkpointer) checkpoint(conn *sql.DB) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var busy, frames, copied int64
	if err := conn.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
		c.err.CompareAndSwap(nil, &err)
		return
	}
	c.frames.Store(frames)
}

// beforeCommit runs before the writer begins a transaction: when the WAL
// has grown past backfillWALFrames, the writer copies the rest of it
// (after the background checkpoint at work, if any), so that its
// transaction starts the WAL over.
func (c *checkpointer) beforeCommit(w *sql.DB) {
	if c.frames.Load() < backfillWALFrames {
		return
	}
	c.checkpoint(w)
	// Were some frames left (a reader still needing them), the WAL goes
	// on, and the next background checkpoint says so again.
	c.frames.Store(0)
}
