package index

import (
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/praxis-os/continuity/logformat"
)

// idsOf returns the event ids of the events, in file order per file name.
func idsOf(t *testing.T, db *DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	rows, err := db.w.Query(`SELECT event_id, raw, user, ai FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var raw []byte
		var user, ai sql.NullString
		if err := rows.Scan(&id, &raw, &user, &ai); err != nil {
			t.Fatal(err)
		}
		line, err := unpackLine(raw, user, ai)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = string(line)
	}
	return out
}

// Lines without a producer id get ids derived from their session, content
// and place among identical lines (logformat.DeriveID): the same in two
// indexes of the same log (two machines, a rebuild), the same for a copy
// of the log (a sync tool's conflict copy, a merge that reorders the
// lines), whose lines are then indexed once; two identical lines of a
// file are two events. On the old code every index gave other ids, and a
// copy was indexed again.
func TestDerivedIDs(t *testing.T) {
	lines := []string{
		`{"type":"exchange","session_id":"s1","user":"hello","ai":"hi"}`,
		`{"type":"exchange","session_id":"s1","user":"ok","ai":"ok"}`,
		`{"type":"exchange","session_id":"s1","user":"ok","ai":"ok"}`,
		`{"type":"context_reset","session_id":"s1"}`,
		`{"type":"exchange","session_id":"s2","user":"ok","ai":"ok"}`,
		`{"type":"exchange","session_id":"s1","id":"p-1","user":"with id","ai":"x"}`,
	}
	a, b := openTest(t, testDir(t)), openTest(t, testDir(t))
	commit(t, a, newFeeder(t, a, "log.jsonl").batch(lines...))
	fb := newFeeder(t, b, "log.jsonl")
	commit(t, b, fb.batch(lines[:2]...)) // in two batches
	commit(t, b, fb.batch(lines[2:]...))
	ia, ib := idsOf(t, a), idsOf(t, b)
	if len(ia) != len(lines) || !reflect.DeepEqual(ia, ib) {
		t.Fatalf("ids differ between two indexes of the same log:\n%v\n%v", ia, ib)
	}
	if _, ok := ia["p-1"]; !ok {
		t.Errorf("the producer id is not kept: %v", ia)
	}
	want := logformat.DeriveID("s1", 1, []byte(lines[2]))
	if ia[want] != lines[2] {
		t.Errorf("the second identical line's id is not DeriveID(s1, 1, line): %v", ia)
	}

	// A conflict copy holding the lines reordered, one line more, and
	// the lines again with "\r\n" ends: only the new line is indexed.
	copyLines := []string{lines[4], lines[1], lines[0], lines[5], lines[3], lines[2],
		`{"type":"exchange","session_id":"s1","user":"ok","ai":"ok"}`}
	commit(t, a, newFeeder(t, a, "log.sync-conflict-20261129-101500-ABCDEFG.jsonl").batch(copyLines...))
	crlf := make([]string, len(lines))
	for i, l := range lines {
		crlf[i] = l + "\r"
	}
	commit(t, a, newFeeder(t, a, "log-crlf.jsonl").batch(crlf...))
	if got := idsOf(t, a); len(got) != len(lines)+1 {
		t.Fatalf("after the copies: %d events, want %d (each line once, the third 'ok' new): %v", len(got), len(lines)+1, got)
	}
	if got := logformat.DeriveID("s1", 2, []byte(lines[1])); idsOf(t, a)[got] == "" {
		t.Errorf("the third identical line of the copy is not the event of place 2")
	}
	st := mustStatus(t, a)
	if st.RejectsReusedID != 0 || st.RejectsReplayed != int64(len(copyLines)-1+len(lines)) {
		t.Errorf("copies: replayed %d, reused %d", st.RejectsReplayed, st.RejectsReusedID)
	}
	// A producer id reused with other content is still refused.
	commit(t, a, newFeeder(t, a, "other.jsonl").batch(`{"type":"exchange","session_id":"s1","id":"p-1","user":"other","ai":"x"}`))
	if st := mustStatus(t, a); st.RejectsReusedID != 1 {
		t.Errorf("reused id with other content: %d rejects, want 1", st.RejectsReusedID)
	}
}

// A schema 8 index (random ids for lines without producer id) is migrated
// to the derived ids, which a new index of the same log gives.
func TestMigrateDerivedIDs(t *testing.T) {
	lines := []string{
		`{"type":"exchange","session_id":"s1","user":"ok","ai":"ok"}`,
		`{"type":"exchange","session_id":"s1","user":"ok","ai":"ok"}`,
		`{"type":"exchange","session_id":"s1","id":"p-1","user":"with id","ai":"x"}`,
	}
	dir := testDir(t)
	db := openTest(t, dir)
	f := newFeeder(t, db, "log.jsonl")
	commit(t, db, f.batch(lines...))
	want := idsOf(t, db)
	// As schema 8 left it: random ids, no line keys, version 8.
	for _, q := range []string{`UPDATE events SET event_id = 'random-' || id, line_key = NULL WHERE producer_id IS NULL`,
		`DROP INDEX events_line_key`, `DROP INDEX rejects_line_key`,
		`ALTER TABLE events DROP COLUMN line_key`, `ALTER TABLE rejects DROP COLUMN line_key`,
		// and its vectors table (version 10 made it int8 with embedder keys)
		`DROP TABLE vectors`, `DROP TABLE embedders`, `DROP TABLE vector_signs`, // (version 13's)
		`CREATE TABLE vectors (event INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE, embedder TEXT NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (event, embedder))`,
		`CREATE INDEX vectors_embedder ON vectors(embedder, event)`,
		`PRAGMA user_version = 8`} {
		if _, err := db.w.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	raw, err := sql.Open("sqlite3", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := userVersion(ctx, raw); v != 8 {
		t.Fatalf("version %d", v)
	}
	raw.Close()
	db = openTest(t, dir)
	if got := idsOf(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("after migration: %v\nwant %v", got, want)
	}
	// A third identical line read after the migration gets place 2.
	commit(t, db, f.batch(lines[0]))
	if got := idsOf(t, db); got[logformat.DeriveID("s1", 2, []byte(lines[0]))] == "" || len(got) != 4 {
		t.Errorf("a third identical line after the migration: %v", got)
	}
}
