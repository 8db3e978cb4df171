package index

import (
	"github.com/praxis-os/continuity/analyze"

	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestOpenPermsAndPragmas(t *testing.T) {
	for _, umask := range []int{0, 0o022} {
		old := syscall.Umask(umask)
		dir := testDir(t)
		db, err := Open(dir, Options{})
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		f := newFeeder(t, db, "a.jsonl")
		commit(t, db, f.batch(exchange("s1", "", "hi")))

		checkMode := func(p string, want fs.FileMode) {
			t.Helper()
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("umask %#o: %s mode %#o, want %#o", umask, filepath.Base(p), got, want)
			}
		}
		checkMode(dir, 0o700)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			checkMode(filepath.Join(dir, FileName+suffix), 0o600)
		}

		for _, c := range []struct {
			pragma string
			want   string
		}{
			{"journal_mode", "wal"},
			{"synchronous", "2"}, // FULL
			{"foreign_keys", "1"},
			{"busy_timeout", "5000"},
			{"page_size", "16384"},
			{"wal_autocheckpoint", "1000"},
		} {
			var got string
			if err := db.w.QueryRow("PRAGMA " + c.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("PRAGMA %s = %s, want %s", c.pragma, got, c.want)
			}
		}
		db.Close()
	}
}

func TestOpenFixesExistingDirPerms(t *testing.T) {
	dir := testDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	openTest(t, dir)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %#o, want 0700", fi.Mode().Perm())
	}
}

func TestReopenPersists(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	f := newFeeder(t, db, "session-s1.jsonl")
	b := f.batch(exchange("", "id-1", "one"), "", exchange("", "", "two"), "{bad")
	commit(t, db, b)
	if err := db.SetSkippedFile(ctx, "fifo.jsonl", "not a regular file"); err != nil {
		t.Fatal(err)
	}
	wantGens, _ := db.Generations(ctx)
	wantRaw := rawTexts(t, db)
	wantStatus := mustStatus(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+"-wal")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WAL not checkpointed and removed at close: %v", err)
	}

	db2 := openTest(t, dir)
	gens, err := db2.Generations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gens, wantGens) || len(gens) != 1 || gens[0].Offset != b.Gen.Offset || gens[0].Tail != b.Gen.Tail {
		t.Errorf("generations after reopen = %+v, want %+v (batch gen %+v)", gens, wantGens, b.Gen)
	}
	if got := rawTexts(t, db2); !reflect.DeepEqual(got, wantRaw) || len(got) != 2 {
		t.Errorf("raw lines after reopen = %q, want %q", got, wantRaw)
	}
	if got := mustStatus(t, db2); !reflect.DeepEqual(got, wantStatus) {
		t.Errorf("status after reopen = %+v, want %+v", got, wantStatus)
	}
}

func TestMigrations(t *testing.T) {
	t.Run("idempotent", func(t *testing.T) {
		dir := testDir(t)
		for i := 0; i < 3; i++ {
			db, err := Open(dir, Options{})
			if err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
			v, err := userVersion(ctx, db.w)
			if err != nil {
				t.Fatal(err)
			}
			if v != SchemaVersion() || v != len(migrations) || v < 1 {
				t.Errorf("open %d: user_version %d, want %d", i, v, SchemaVersion())
			}
			db.Close()
		}
	})

	setVersion := func(t *testing.T, dir string, v int) {
		t.Helper()
		raw, err := sql.Open("sqlite3", filepath.Join(dir, FileName))
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Exec("PRAGMA user_version = " + strconv.Itoa(v)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("newer", func(t *testing.T) {
		dir := testDir(t)
		db := openTest(t, dir)
		db.Close()
		setVersion(t, dir, SchemaVersion()+1)
		for _, ro := range []bool{false, true} {
			_, err := Open(dir, Options{ReadOnly: ro})
			if !errors.Is(err, ErrSchemaTooNew) {
				t.Errorf("ReadOnly=%v: err = %v, want ErrSchemaTooNew", ro, err)
			}
		}
	})

	t.Run("older read-only", func(t *testing.T) {
		dir := testDir(t)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		setVersion(t, dir, 0) // an empty database, never migrated
		_, err := Open(dir, Options{ReadOnly: true})
		if !errors.Is(err, ErrIndexCreating) || !strings.Contains(err.Error(), "being created (the daemon is starting)") {
			t.Errorf("err = %v, want ErrIndexCreating", err)
		}
		db, err := Open(dir, Options{}) // the writer migrates it
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ro, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only after migration: %v", err)
		}
		ro.Close()
	})

	t.Run("version 1 read-only", func(t *testing.T) {
		dir := testDir(t)
		db := openTest(t, dir)
		db.Close()
		setVersion(t, dir, 1)
		_, err := Open(dir, Options{ReadOnly: true})
		if !errors.Is(err, ErrSchemaTooOld) || !strings.Contains(err.Error(), "start the daemon (or run `continuity ingest`) to migrate it") ||
			strings.Count(err.Error(), ErrSchemaTooOld.Error()) != 1 {
			t.Errorf("err = %v, want ErrSchemaTooOld", err)
		}
	})

	t.Run("missing read-only", func(t *testing.T) {
		dir := testDir(t)
		_, err := Open(dir, Options{ReadOnly: true})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v, want ErrNotExist", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("read-only open created %s", dir)
		}
	})
}

func TestReadOnlyWhileWriterOpen(t *testing.T) {
	dir := testDir(t)
	w := openTest(t, dir)
	f := newFeeder(t, w, "a.jsonl")
	commit(t, w, f.batch(exchange("s1", "", "one")))

	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if !ro.ReadOnly() || w.ReadOnly() {
		t.Error("ReadOnly() wrong")
	}
	if st := mustStatus(t, ro); st.Events != 1 {
		t.Errorf("read-only sees %d events, want 1", st.Events)
	}
	// The writer keeps writing while the reader is open.
	commit(t, w, f.batch(exchange("s1", "", "two"), exchange("s1", "", "three")))
	if st := mustStatus(t, ro); st.Events != 3 || st.Exchanges != 3 || len(st.Files) != 1 || st.Files[0].Offset != f.gen.Offset {
		t.Errorf("read-only status after more commits = %+v", st)
	}
	gens, err := ro.Generations(ctx)
	if err != nil || len(gens) != 1 {
		t.Errorf("read-only Generations = %v, %v", gens, err)
	}

	if err := ro.Commit(ctx, f.batch(exchange("s1", "", "four"))); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Commit on read-only: %v, want ErrReadOnly", err)
	}
	if _, err := ro.CreateGeneration(ctx, f.gen, 0); !errors.Is(err, ErrReadOnly) {
		t.Errorf("CreateGeneration on read-only: %v", err)
	}
	if err := ro.UpdateGeneration(ctx, f.gen); !errors.Is(err, ErrReadOnly) {
		t.Errorf("UpdateGeneration on read-only: %v", err)
	}
	if err := ro.SetSkippedFile(ctx, "x", "y"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("SetSkippedFile on read-only: %v", err)
	}
}

func TestDSNEscapesPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "we?ird #dir%41")
	db := openTest(t, dir)
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ro.Close()
	db.Close()
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Fatalf("database not at the literal path: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("files created next to the folder: %v", entries)
	}
}

// `continuity status` with no daemon running: the WAL was checkpointed and
// removed at the writer's close.
func TestReadOnlyAfterWriterClosed(t *testing.T) {
	dir := testDir(t)
	w := openTest(t, dir)
	f := newFeeder(t, w, "a.jsonl")
	commit(t, w, f.batch(exchange("s1", "", "one"), "nope"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if st := mustStatus(t, ro); st.Events != 1 || st.Rejects != 1 || len(st.Files) != 1 {
		t.Errorf("status = %+v", st)
	}
	if rs, err := ro.Rejects(ctx, 10); err != nil || len(rs) != 1 {
		t.Errorf("Rejects = %+v, %v", rs, err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(filepath.Join(dir, FileName+suffix)); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %#o after a read-only open", FileName+suffix, fi.Mode().Perm())
		}
	}
}

// A database written by the version 1 schema, with exchanges, is migrated
// by the writer: its exchanges become searchable, and the schema ends up
// the same as a new database's.
func TestMigrateFromVersion1(t *testing.T) {
	dir := testDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite3", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(migrations[0] + "PRAGMA user_version = 1;"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO generations (id, path, dev, ino, created_at, updated_at) VALUES (1, 'a.jsonl', 1, 2, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	events := []struct{ typ, session, user, ai, reason string }{
		{"exchange", "s1", "how do we rotate the logs", "with an inode check", ""},
		{"context_reset", "s1", "", "", "rotate compaction"},
		{"exchange", "s2", "naïve question", "", ""},
		{"exchange", "s2", "", "only an answer about rotation", ""},
	}
	for i, e := range events {
		if _, err := raw.Exec(`INSERT INTO events (event_id, generation, start_offset, end_offset, line, file, type,
			session_id, ts, user, ai, reason, raw, ingested_at) VALUES (?, 1, ?, ?, ?, 'a.jsonl', ?, ?, ?, ?, ?, ?, '{}', 0)`,
			"e"+strconv.Itoa(i), i*10, i*10+10, i+1, e.typ, e.session, int64(i)*1e9,
			nullString(e.user), nullString(e.ai), nullString(e.reason)); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db := openTest(t, dir)
	if v, _ := userVersion(ctx, db.w); v != SchemaVersion() {
		t.Fatalf("user_version %d after migration", v)
	}
	search := func(q string) []int64 {
		t.Helper()
		hits, err := db.Lexical(ctx, analyze.MatchAny(analyze.WordTerms(q)), [2]float64{}, Filter{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		var rows []int64
		for _, h := range hits {
			rows = append(rows, h.Row)
		}
		slices.Sort(rows)
		return rows
	}
	if got := search("rotate"); !reflect.DeepEqual(got, []int64{1, 4}) { // stems: rotate, rotation; not the reset
		t.Errorf("rotate found in %v, want rows 1 and 4", got)
	}
	if got := search("naive"); !reflect.DeepEqual(got, []int64{3}) {
		t.Errorf("naive found in %v, want row 3", got)
	}
	if _, err := db.ft.Exec(`INSERT INTO events_fts (events_fts, rank) VALUES ('integrity-check', 0)`); err != nil {
		t.Errorf("FTS integrity-check: %v", err)
	}
	if n, err := db.CountPending(ctx, "m"); err != nil || n != 3 {
		t.Errorf("CountPending = %d, %v, want 3", n, err)
	}
	// New exchanges are indexed as usual after the migration.
	f := newFeeder(t, db, "b.jsonl")
	commit(t, db, f.batch(exchangeAt("s3", hour(1), "rotate again", "")))
	if got := search("rotate"); len(got) != 3 {
		t.Errorf("rotate found in %v after a commit, want 3 rows", got)
	}

	fresh := openTest(t, testDir(t))
	if got, want := schemaOf(t, db), schemaOf(t, fresh); !reflect.DeepEqual(got, want) {
		t.Errorf("migrated schema differs from a new database's:\n%v\nwant\n%v", got, want)
	}
}

func schemaOf(t *testing.T, db *DB) map[string]string {
	t.Helper()
	rows, err := db.w.Query(`SELECT type || ' ' || name, coalesce(sql, '') FROM sqlite_schema`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			t.Fatal(err)
		}
		out[name] = sql
	}
	return out
}

func TestOpenWithoutFTS5(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	db.Close()
	old := fts5Query
	fts5Query = `SELECT 0`
	defer func() { fts5Query = old }()
	for _, ro := range []bool{false, true} {
		_, err := Open(dir, Options{ReadOnly: ro})
		if !errors.Is(err, ErrNoFTS5) || !strings.Contains(err.Error(), "SQLite was built without FTS5: build with -tags sqlite_fts5") {
			t.Errorf("ReadOnly=%v: err = %v, want ErrNoFTS5", ro, err)
		}
	}
}
