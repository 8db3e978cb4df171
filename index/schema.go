package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/praxis-os/continuity/logformat"
)

// Schema version errors. The version is kept in PRAGMA user_version.
var (
	// ErrSchemaTooNew: the database was written by a newer continuity.
	ErrSchemaTooNew = errors.New("index schema is newer than this binary supports")
	// ErrSchemaTooOld: a read-only open found a schema the daemon has not
	// migrated yet (only the writer migrates).
	ErrSchemaTooOld = errors.New("index schema is older than this binary expects")
	// ErrIndexCreating: a read-only open found a database with no schema
	// yet, the daemon being about to create it.
	ErrIndexCreating = errors.New("index is being created")
	// ErrNoFTS5: the binary's SQLite lacks the FTS5 extension.
	ErrNoFTS5 = errors.New("SQLite was built without FTS5: build with -tags sqlite_fts5")
)

// fts5Query reports whether SQLite has FTS5 (a variable so that tests can
// pretend it has not).
var fts5Query = `SELECT sqlite_compileoption_used('ENABLE_FTS5')`

// checkFTS5 fails with ErrNoFTS5 when the SQLite compiled into this binary
// has no FTS5: the schema and the lexical search need it, and without
// this check the failure would be a cryptic "no such module: fts5".
func checkFTS5(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) error {
	var ok bool
	if err := q.QueryRowContext(ctx, fts5Query).Scan(&ok); err != nil {
		return fmt.Errorf("check for FTS5: %w", err)
	}
	if !ok {
		return ErrNoFTS5
	}
	return nil
}

// migrations are applied in order, each in the same transaction as the
// user_version bump; migrations[i] brings the schema to version i+1. Never
// edit a released migration: append a new one.
var migrations = []string{
	// 1: events, generations (watcher checkpoints), rejects, sessions.
	`
CREATE TABLE generations (
	id         INTEGER PRIMARY KEY,
	path       TEXT    NOT NULL,           -- base name, as last seen
	dev        INTEGER NOT NULL,           -- uint64 bit-cast to int64
	ino        INTEGER NOT NULL,           -- uint64 bit-cast to int64
	"offset"   INTEGER NOT NULL DEFAULT 0, -- committed offset
	line       INTEGER NOT NULL DEFAULT 0, -- complete lines before offset
	head_len   INTEGER NOT NULL DEFAULT 0,
	head_sum   INTEGER NOT NULL DEFAULT 0, -- uint64 CRC-64 bit-cast to int64
	tail_len   INTEGER NOT NULL DEFAULT 0,
	tail_sum   INTEGER NOT NULL DEFAULT 0,
	gone       INTEGER NOT NULL DEFAULT 0,
	ended      INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,           -- unix nanoseconds
	updated_at INTEGER NOT NULL
);
CREATE INDEX generations_live ON generations(ended, id);

CREATE TABLE events (
	id                INTEGER PRIMARY KEY,
	event_id          TEXT    NOT NULL UNIQUE, -- producer id, else a generated UUIDv7
	producer_id       TEXT,                    -- the line's "id", NULL when absent
	generation        INTEGER NOT NULL REFERENCES generations(id),
	start_offset      INTEGER NOT NULL,
	end_offset        INTEGER NOT NULL,        -- just past the '\n'
	line              INTEGER NOT NULL,        -- 1-based line number in the generation
	file              TEXT    NOT NULL,        -- base name at ingest
	v                 INTEGER NOT NULL DEFAULT 1,
	type              TEXT    NOT NULL,
	session_id        TEXT,
	session_from_file INTEGER NOT NULL DEFAULT 0,
	ts                INTEGER NOT NULL,        -- unix nanoseconds, UTC
	ts_inferred       INTEGER NOT NULL DEFAULT 0,
	user              TEXT,
	ai                TEXT,
	reason            TEXT,
	previous_session  TEXT,
	new_session       TEXT,
	files             TEXT,                    -- JSON array, NULL when absent
	metadata          TEXT,                    -- JSON object, NULL when absent
	unknown_fields    TEXT,                    -- JSON array of names, NULL when none
	raw               BLOB    NOT NULL,        -- the exact line, without its newline
	ingested_at       INTEGER NOT NULL,        -- unix nanoseconds
	UNIQUE (generation, start_offset)
);
CREATE UNIQUE INDEX events_producer_id ON events(producer_id) WHERE producer_id IS NOT NULL;
CREATE INDEX events_session_ts ON events(session_id, ts);
CREATE INDEX events_type ON events(type);

CREATE TABLE sessions (
	id        TEXT PRIMARY KEY,
	first_ts  INTEGER NOT NULL,
	last_ts   INTEGER NOT NULL,
	exchanges INTEGER NOT NULL DEFAULT 0,
	resets    INTEGER NOT NULL DEFAULT 0,
	events    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE session_links (
	previous TEXT    NOT NULL,
	new      TEXT    NOT NULL,
	event    INTEGER NOT NULL REFERENCES events(id),
	ts       INTEGER NOT NULL,
	PRIMARY KEY (previous, new)
);
CREATE INDEX session_links_new ON session_links(new);

CREATE TABLE rejects (
	id           INTEGER PRIMARY KEY,
	generation   INTEGER NOT NULL REFERENCES generations(id),
	file         TEXT    NOT NULL,
	line         INTEGER NOT NULL,
	start_offset INTEGER NOT NULL,
	end_offset   INTEGER NOT NULL,
	reason       TEXT    NOT NULL,
	kind         TEXT    NOT NULL,
	excerpt      TEXT    NOT NULL, -- at most 256 bytes, valid UTF-8
	created_at   INTEGER NOT NULL,
	UNIQUE (generation, start_offset)
);

CREATE TABLE skipped_files (
	name    TEXT PRIMARY KEY,
	reason  TEXT    NOT NULL,
	seen_at INTEGER NOT NULL
);

CREATE TABLE counters (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
);
`,

	// 2: full-text index of exchanges, their embeddings, forgotten sessions.
	//
	// events_fts indexes the user and ai texts of exchanges, and only
	// them, without a copy: it reads events (external content). An
	// exchange enters it in the transaction that stores it (Commit
	// inserts it; an AFTER INSERT trigger would do the same, but a
	// trigger turns every INSERT INTO events into a statement that keeps
	// a statement journal, and with 16 KiB pages that journal spills to
	// a temporary file on every row: commits were several times
	// slower). It leaves in the transaction that deletes the event,
	// through the trigger ('delete' must be given the indexed values,
	// which are the row's own; deletions are rare). Events are never
	// updated; the update trigger keeps the index exact if one ever is.
	// The backfill indexes the exchanges of a version 1 database
	// ('rebuild' is not usable: it would index every event type).
	`
CREATE VIRTUAL TABLE events_fts USING fts5(
	user, ai,
	content = 'events', content_rowid = 'id',
	tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER events_fts_delete AFTER DELETE ON events WHEN old.type = 'exchange' BEGIN
	INSERT INTO events_fts (events_fts, rowid, user, ai) VALUES ('delete', old.id, old.user, old.ai);
END;
CREATE TRIGGER events_fts_update AFTER UPDATE OF id, type, user, ai ON events BEGIN
	INSERT INTO events_fts (events_fts, rowid, user, ai)
		SELECT 'delete', old.id, old.user, old.ai WHERE old.type = 'exchange';
	INSERT INTO events_fts (rowid, user, ai)
		SELECT new.id, new.user, new.ai WHERE new.type = 'exchange';
END;
INSERT INTO events_fts (rowid, user, ai) SELECT id, user, ai FROM events WHERE type = 'exchange';

-- One embedding per exchange and embedder identity (model, dimensions,
-- options: whatever makes two vectors comparable). vec is float32
-- little-endian. The primary key finds an exchange's vector (pending
-- exchanges, the cascade when an event is deleted); vectors_embedder
-- reads one identity's vectors in row order and counts them.
CREATE TABLE vectors (
	event    INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
	embedder TEXT    NOT NULL,
	vec      BLOB    NOT NULL,
	PRIMARY KEY (event, embedder)
);
CREATE INDEX vectors_embedder ON vectors(embedder, event);

-- The time and session of an event by row id, without reading its
-- (large) row: for the time filter of full-text queries and to stream
-- vectors with their session and time. Queries name it (INDEXED BY):
-- for "WHERE id = ?" the planner would prefer the table itself.
CREATE INDEX events_meta ON events(id, ts, session_id);

-- Deleting an event checks that no link names it: without this index
-- that check scans session_links once per deleted event.
CREATE INDEX session_links_event ON session_links(event);

-- Sessions deleted on request: their lines are not indexed again when
-- the log is read again.
CREATE TABLE forgotten (
	session TEXT    PRIMARY KEY,
	at      INTEGER NOT NULL -- unix nanoseconds
);
`,
	// 3: how many exchanges hold each full-text term (no storage of its
	// own: a view of the FTS5 index), so that search can leave out terms
	// so common that scoring them costs much and ranks nothing.
	`CREATE VIRTUAL TABLE events_fts_vocab USING fts5vocab(events_fts, 'row');`,

	// 4: the full-text index moves to its own file, fulltext.db (see
	// fulltext.go), built from the events after they are committed
	// instead of inside the commit: tokenising is most of a backfill's
	// work, and in a second file it runs on a second core without
	// holding index.db's one write lock.
	//
	// What stays here is what the full-text index needs to follow the
	// events exactly: the exchanges deleted since it last looked
	// (fulltext_deletes, filled by a trigger in the deleting
	// transaction), the instance id that ties a fulltext.db to this
	// database, and event_seq, the highest row id ever given: Commit
	// gives ids above it so that a deleted row's id is never reused (the
	// full-text index follows new rows by id).
	`
DROP TRIGGER events_fts_delete;
DROP TRIGGER events_fts_update;
DROP TABLE events_fts_vocab;
DROP TABLE events_fts;

CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('instance', lower(hex(randomblob(16))));

CREATE TABLE fulltext_deletes (id INTEGER PRIMARY KEY);
CREATE TRIGGER events_fulltext_delete AFTER DELETE ON events WHEN old.type = 'exchange' BEGIN
	INSERT OR IGNORE INTO fulltext_deletes (id) VALUES (old.id);
END;

INSERT INTO counters (name, value) SELECT 'event_seq', coalesce(max(id), 0) FROM events WHERE true
	ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value);
`,

	// 5: two indexes every stored event paid for, each a B-tree insert in
	// the commit (the critical path of a backfill of short lines), that
	// their readers do not need:
	//   - events_type indexed the type of every event, "exchange" for
	//     nearly all; its readers want the few other events (Timeline's
	//     resets, status's counts by type) or count exchanges as all
	//     events minus those. events_other indexes only the events that
	//     are not exchanges: an exchange's insert skips it. Queries name
	//     its condition, type != 'exchange', so that the planner may use
	//     it (index/typecounts_test.go checks their plans).
	//   - events_producer_id made producer ids unique, which UNIQUE
	//     (event_id) already does: the event id is the producer id
	//     whenever one is given. Nothing reads producer_id by value.
	// Maintaining both was a noticeable share of ingest's CPU.
	// IF [NOT] EXISTS: harmless on a database where a step was done by
	// hand; the whole step commits with the version bump, or not at all.
	`
DROP INDEX IF EXISTS events_type;
DROP INDEX IF EXISTS events_producer_id;
CREATE INDEX IF NOT EXISTS events_other ON events(type) WHERE type != 'exchange';
`,

	// 6: logs edited in place (watcher.Editor, edit.go). An edited log's
	// new content is compared line by line with what was stored from
	// it: an event by its stored (redacted) line, a reject by hash, the
	// key of the same bytes (a reject keeps only an excerpt, and a
	// forgotten session's line none). Rejects stored before have no hash:
	// they are not compared, only replaced. edits records each edit: what
	// status reports, and where the edited content ended (end_offset):
	// an edit taken up again after a crash is not counted twice.
	`
ALTER TABLE rejects ADD COLUMN hash INTEGER;
CREATE TABLE edits (
	id         INTEGER PRIMARY KEY,
	generation INTEGER NOT NULL, -- the generation the edited file continues as
	replaced   INTEGER NOT NULL, -- the generation it replaced
	file       TEXT    NOT NULL, -- base name at the edit
	at         INTEGER NOT NULL, -- unix nanoseconds
	kept       INTEGER NOT NULL,
	changed    INTEGER NOT NULL,
	removed    INTEGER NOT NULL,
	added      INTEGER NOT NULL,
	end_offset INTEGER NOT NULL  -- end of the edited content's complete lines
);
CREATE INDEX edits_generation ON edits(generation);
`,

	// 7: the sessions a forgotten session resumed (forget keeps a chain
	// whole): a link from a later session to the forgotten one reaches
	// them instead (DeleteSession bridges the links there are, Commit
	// the links it reads later). The engine fills it from the forgets
	// recorded beside the logs when it rebuilds the index.
	`
CREATE TABLE forgotten_links (
	session  TEXT NOT NULL, -- the forgotten session
	previous TEXT NOT NULL, -- a session it resumed
	PRIMARY KEY (session, previous)
);
`,

	// 8: the context resets by time. Resume asks, for every pack, whether
	// another session reset its context after the session's last event
	// (AgentGone); events_other holds the resets by type only, so the
	// answer read every reset's row (2,400 rows, 14 of a 16 ms pack
	// without a query at 100k exchanges). Walking this index from the
	// newest reset stops at the first one (a reset after the session's
	// last event is never the session's own). A reset's insert pays one
	// more B-tree insert; resets are a few in a hundred events.
	`
CREATE INDEX IF NOT EXISTS events_resets ON events(ts) WHERE type = 'context_reset';
`,

	// 9: ids derived from the lines (logformat.DeriveID). A line without
	// a producer id had a random UUIDv7, another on every machine and
	// after every rebuild; it now has one made of its session, content
	// and place among the identical lines of its session in its file,
	// which line_key (logformat.LineKey) counts: on events, and on the
	// rejects of lines not stored (a copy's line already indexed, a
	// forgotten session's). deriveEventIDs (below) gives the events
	// stored before their derived ids, in the same transaction.
	// The columns are added by deriveEventIDs when missing (SQLite has
	// no ADD COLUMN IF NOT EXISTS), then these indexes.
	`
CREATE INDEX IF NOT EXISTS events_line_key ON events(generation, line_key, start_offset) WHERE line_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS rejects_line_key ON rejects(generation, line_key, start_offset) WHERE line_key IS NOT NULL;
`,
	// 10: vectors stored once, compactly (vectorcodec.go): int8 with a
	// scale per vector instead of float32 (the vector snapshot file that
	// kept them as int8 beside SQLite is no longer written), and the
	// embedder as a small integer key (embedders) instead of its
	// identity string repeated in every row and its index. The rows are
	// converted by migrateVectorsInt8 (migrationSteps), nothing is
	// re-embedded.
	`
CREATE TABLE embedders (
	id       INTEGER PRIMARY KEY,
	identity TEXT    NOT NULL UNIQUE
);
INSERT INTO embedders (identity) SELECT DISTINCT embedder FROM vectors ORDER BY embedder;
DROP INDEX vectors_embedder;
ALTER TABLE vectors RENAME TO vectors_float32;
CREATE TABLE vectors (
	event    INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
	embedder INTEGER NOT NULL REFERENCES embedders(id),
	vec      BLOB    NOT NULL,
	PRIMARY KEY (event, embedder)
);
`,
	// 11: an exchange's raw line without the texts its user and ai
	// columns hold (linepack.go): they are put back when the line is
	// read. packStoredLines (migrationSteps) packs the lines stored
	// before; there is no SQL to run.
	`SELECT 1;`,
	// 12: team memory's queue of removed lines (share_queue.go): the
	// events of this machine an edit in place deleted, recorded in the
	// edit's own transaction once the workspace shares, until the
	// publisher has removed them from PostgreSQL.
	`CREATE TABLE IF NOT EXISTS share_removed (
	id       INTEGER PRIMARY KEY, -- the deleted event's row id
	event_id TEXT    NOT NULL,
	session  TEXT
);`,
	// 13: the vectors' heads (vectorsigns.go): each vector's scale and
	// sign code, what a vector space past its memory threshold keeps in
	// memory, read at start instead of the whole vectors table.
	// deriveVectorSigns (migrationSteps) writes those of the vectors
	// stored before.
	vectorSignsSQL,
	// 14: the exchanges by time. A search with a time window (--since,
	// --until, "what did we do last week") lists the window's exchanges
	// newest first, counts them, or asks whether it holds any. Through
	// events_meta (id, ts, session_id) that read the type of every event
	// of the window from the table and sorted them: 3.2 s for a wide
	// window of a 1M index, 0.8 s to find a window empty. Walking this
	// index in ts order reads the window's entries only, in the order
	// asked (the row id breaks ties, as ORDER BY ts, id wants). 17 bytes
	// an exchange (1.7 MB at 100k); an exchange's insert pays one more
	// B-tree insert.
	`
CREATE INDEX IF NOT EXISTS events_exchange_ts ON events(ts) WHERE type = 'exchange';
`,
}

// migrationSteps are the steps of a migration done in Go, in the same
// transaction, by the version the migration brings the schema to: before
// runs before its SQL, after after it. A step that frees much space asks
// for a VACUUM after the commit (vacuum).
var migrationSteps = map[int]struct {
	before, after func(ctx context.Context, tx *sql.Tx) error
	vacuum        bool
}{
	9:  {before: deriveEventIDs},
	10: {after: migrateVectorsInt8, vacuum: true},
	11: {after: packStoredLines, vacuum: true},
	13: {after: deriveVectorSigns},
}

// deriveEventIDs gives each stored event without a producer id its
// derived id and line key, in file order per generation, as Commit would
// have given them. An event whose derived id another event already holds
// (the same line indexed twice before ids were derived: a copy of a log)
// keeps its old id.
func deriveEventIDs(ctx context.Context, tx *sql.Tx) error {
	type row struct {
		id, key int64
		eventID string
	}
	for _, table := range []string{"events", "rejects"} {
		var has bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pragma_table_info(?) WHERE name = 'line_key')`, table).Scan(&has); err != nil {
			return err
		}
		if !has {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN line_key INTEGER`); err != nil {
				return err
			}
		}
	}
	var rows []row
	taken := map[string]bool{}
	occ := map[[2]int64]int64{}
	if err := eachRow(ctx, tx, `SELECT id, generation, coalesce(session_id, ''), raw FROM events
		WHERE producer_id IS NULL ORDER BY generation, start_offset`, func(r *sql.Rows) error {
		var id, gen int64
		var session string
		var raw []byte
		if err := r.Scan(&id, &gen, &session, &raw); err != nil {
			return err
		}
		key := logformat.LineKey(session, raw)
		k := [2]int64{gen, key}
		n := occ[k]
		occ[k] = n + 1
		eid := logformat.DeriveID(session, n, raw)
		if taken[eid] {
			eid = ""
		}
		taken[eid] = true
		rows = append(rows, row{id: id, key: key, eventID: eid})
		return nil
	}); err != nil {
		return fmt.Errorf("read events without producer id: %w", err)
	}
	upd, err := tx.PrepareContext(ctx, `UPDATE events SET event_id = coalesce(?, event_id), line_key = ? WHERE id = ?`)
	if err != nil {
		return err
	}
	defer upd.Close()
	for _, r := range rows {
		var eid any
		if r.eventID != "" {
			eid = r.eventID
		}
		if _, err := upd.ExecContext(ctx, eid, r.key, r.id); err != nil {
			return fmt.Errorf("derive the id of event %d: %w", r.id, err)
		}
	}
	return nil

}

// migrateVectorsInt8 (version 10) converts the float32 vectors of
// vectors_float32 into the quantised form of the new vectors table, with
// the embedders' integer keys, and drops the old table.
func migrateVectorsInt8(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT o.event, o.embedder, e.id, o.vec FROM vectors_float32 o
		JOIN embedders e ON e.identity = o.embedder ORDER BY o.event, e.id`)
	if err != nil {
		return fmt.Errorf("read float32 vectors: %w", err)
	}
	defer rows.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO vectors (event, embedder, vec) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	var (
		vec []float32
		buf []byte
		raw sql.RawBytes
	)
	for rows.Next() {
		var event, key int64
		var identity string
		if err := rows.Scan(&event, &identity, &key, &raw); err != nil {
			return fmt.Errorf("read float32 vectors: %w", err)
		}
		per := VectorsPerIdentity(identity)
		if len(raw) == 0 || len(raw)%(4*per) != 0 {
			return fmt.Errorf("vector of row %d for %s: %d bytes, not %d float32 vectors", event, identity, len(raw), per)
		}
		vec = vec[:0]
		for i := 0; i < len(raw); i += 4 {
			vec = append(vec, math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])))
		}
		buf = encodeQuantized(buf[:0], vec, per)
		if _, err := ins.ExecContext(ctx, event, key, buf); err != nil {
			return fmt.Errorf("store the int8 vector of row %d: %w", event, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read float32 vectors: %w", err)
	}
	rows.Close()
	_, err = tx.ExecContext(ctx, `DROP TABLE vectors_float32;
CREATE INDEX vectors_embedder ON vectors(embedder, event);`)
	return err
}

// SchemaVersion is the schema version this binary writes and reads.
func SchemaVersion() int { return len(migrations) }

func userVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

func checkVersion(v int, path string) error {
	// The sentinel leads: wrapped at the end, its words repeated the
	// sentence before them.
	switch {
	case v == 0 && len(migrations) > 0:
		// Only a read-only open gets here: the writer has created the
		// file and not committed its first migration yet.
		return fmt.Errorf("%w (the daemon is starting): %s; try again in a moment", ErrIndexCreating, path)
	case v > len(migrations):
		return fmt.Errorf("%w: %s has schema version %d, this binary knows up to %d; upgrade continuity",
			ErrSchemaTooNew, path, v, len(migrations))
	case v < len(migrations):
		return fmt.Errorf("%w: %s has schema version %d, this binary expects %d; start the daemon (or run `continuity ingest`) to migrate it",
			ErrSchemaTooOld, path, v, len(migrations))
	}
	return nil
}

// migrate brings the schema up to date in one immediate transaction, so
// two processes racing to migrate cannot both apply a step.
func migrate(ctx context.Context, w *sql.DB, path string) (err error) {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("index: migrate %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	v, err := userVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("index: migrate %s: %w", path, err)
	}
	if v > len(migrations) {
		return checkVersion(v, path)
	}
	if v == len(migrations) {
		return tx.Commit()
	}
	vacuum := false
	for i := v; i < len(migrations); i++ {
		st := migrationSteps[i+1]
		if st.before != nil {
			if err := st.before(ctx, tx); err != nil {
				return fmt.Errorf("index: migrate %s to version %d: %w", path, i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("index: migrate %s to version %d: %w", path, i+1, err)
		}
		if st.after != nil {
			if err := st.after(ctx, tx); err != nil {
				return fmt.Errorf("index: migrate %s to version %d: %w", path, i+1, err)
			}
		}
		vacuum = vacuum || (st.vacuum && v > 0)
	}
	// PRAGMA does not take parameters; the value is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return fmt.Errorf("index: migrate %s: %w", path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("index: migrate %s: %w", path, err)
	}
	if vacuum {
		// Give the file back the pages the old rows took (a migrated
		// index would otherwise keep its size). Once; a failure (a
		// reader holding the file) only leaves the file larger.
		_, _ = w.ExecContext(ctx, "VACUUM")
	}
	return nil
}
