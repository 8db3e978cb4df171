package index

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// typedEvents is a workspace's worth of events of every kind: exchanges
// of two sessions (one with a producer id), a context reset, a session
// resume and an event of a type this version does not know.
func typedEvents() []string {
	return []string{
		exchangeAt("s1", hour(1), "how do we rotate the logs", "with an inode check"),
		exchange("s1", "p-1", "an exchange with a producer id"),
		`{"type":"context_reset","session_id":"s1","timestamp":"2025-03-01T02:00:00Z"}`,
		exchangeAt("s1", hour(3), "after the reset", "we go on"),
		resumeLine("s1", "s2", hour(4)),
		exchangeAt("s2", hour(5), "in the new session", "rotation again"),
		`{"type":"note","session_id":"s2","timestamp":"2025-03-01T06:00:00Z","text":"an unknown type"}`,
		exchangeAt("s2", hour(7), "the last one", ""),
	}
}

// typeReads is what the reads by type answer, to compare before and after
// the migration.
type typeReads struct {
	ByType          map[string]int64
	Others          map[int64]string // the events that are not exchanges
	Exchanges       int64
	Pending         []int64 // exchanges without a vector of "m"
	FullTextPending int64
}

// readByTypeV4 reads them with the queries of version 4 (events_type).
func readByTypeV4(t *testing.T, db *DB) typeReads {
	t.Helper()
	r := typeReads{ByType: map[string]int64{}, Others: map[int64]string{}}
	q := func(query string, args []any, scan func(*sql.Rows) error) {
		t.Helper()
		if err := eachRow(ctx, db.r, query, scan, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	q(`SELECT type, count(*) FROM events GROUP BY type`, nil, func(rows *sql.Rows) error {
		var typ string
		var n int64
		err := rows.Scan(&typ, &n)
		r.ByType[typ] = n
		return err
	})
	q(`SELECT id, type FROM events WHERE type < 'exchange' OR type > 'exchange'`, nil, func(rows *sql.Rows) error {
		var id int64
		var typ string
		err := rows.Scan(&id, &typ)
		r.Others[id] = typ
		return err
	})
	q(`SELECT count(*) FROM events WHERE type = 'exchange'`, nil, func(rows *sql.Rows) error { return rows.Scan(&r.Exchanges) })
	q(`SELECT id FROM events WHERE type = 'exchange' AND id >= 0
		AND NOT EXISTS (SELECT 1 FROM vectors WHERE event = events.id AND embedder = 'm') ORDER BY id`, nil,
		func(rows *sql.Rows) error {
			var id int64
			err := rows.Scan(&id)
			r.Pending = append(r.Pending, id)
			return err
		})
	q(`SELECT count(*) FROM events WHERE type = 'exchange' AND id > (SELECT value FROM ft.state WHERE key = ?)`,
		[]any{stateWatermark}, func(rows *sql.Rows) error { return rows.Scan(&r.FullTextPending) })
	return r
}

// readByType reads them through the index's API.
func readByType(t *testing.T, db *DB) typeReads {
	t.Helper()
	st := mustStatus(t, db)
	r := typeReads{ByType: st.EventsByType, Others: map[int64]string{}, Exchanges: st.Exchanges}
	if err := eachRow(ctx, db.r, otherEventsSQL, func(rows *sql.Rows) error {
		var id int64
		var typ string
		err := rows.Scan(&id, &typ)
		r.Others[id] = typ
		return err
	}); err != nil {
		t.Fatal(err)
	}
	vectors := st.Vectors["m"]
	if n, err := db.CountPending(ctx, "m"); err != nil || n != r.Exchanges-vectors {
		t.Errorf("CountPending = %d, %v; want %d exchanges - %d vectors", n, err, r.Exchanges, vectors)
	}
	items, err := db.PendingEmbeddings(ctx, "m", 0)
	if err != nil {
		t.Fatalf("PendingEmbeddings: %v", err)
	}
	for _, it := range items {
		r.Pending = append(r.Pending, it.Row)
	}
	if r.FullTextPending, err = db.FullTextPending(ctx); err != nil {
		t.Fatalf("FullTextPending: %v", err)
	}
	return r
}

func indexNames(t *testing.T, w *sql.DB) []string {
	t.Helper()
	rows, err := w.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'events' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// withMigrations runs f with the schema cut to its first n migrations, as
// an older binary had it.
func withMigrations(n int, f func()) {
	all := migrations
	migrations = all[:n:n]
	defer func() { migrations = all }()
	f()
}

// A database written by the version 4 schema (events_type on every event,
// events_producer_id) is migrated by the writer: the queries by type
// answer the same, the schema is a new database's, a duplicate producer id
// is still refused, the step can be applied twice, and a step that fails
// leaves the database as it was (it commits with the version bump, or
// not at all).
func TestMigrateFromVersion4(t *testing.T) {
	dir := testDir(t)
	lineKeyIndexes := migrations[8]
	var before typeReads
	withMigrations(4, func() {
		db, err := Open(dir, Options{Now: func() time.Time { return fixedNow }})
		if err != nil {
			t.Fatal(err)
		}
		// This binary's Commit writes line_key (schema 9): the columns
		// are given here for its commits; migration 9 finds events' there,
		// rejects' is dropped again (version 6 adds rejects.hash first).
		for _, q := range []string{`ALTER TABLE events ADD COLUMN line_key INTEGER`, `ALTER TABLE rejects ADD COLUMN line_key INTEGER`, lineKeyIndexes} {
			if _, err := db.w.Exec(q); err != nil {
				t.Fatal(err)
			}
		}

		f := newFeeder(t, db, "a.jsonl")
		commit(t, db, f.batch(typedEvents()...))
		// A vector as version 4 stored it: float32, the identity by name.
		if _, err := db.w.Exec(`INSERT INTO vectors (event, embedder, vec) VALUES (1, 'm', ?)`, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
		for {
			if n, err := db.IndexFullText(ctx); err != nil {
				t.Fatal(err)
			} else if n == 0 {
				break
			}
		}
		if got := indexNames(t, db.w); !reflect.DeepEqual(got, []string{"events_line_key", "events_meta", "events_producer_id",
			"events_session_ts", "events_type", "sqlite_autoindex_events_1", "sqlite_autoindex_events_2"}) {
			t.Fatalf("version 4 indexes: %v", got)
		}
		// Two exchanges not in the full-text index yet.
		commit(t, db, f.batch(exchangeAt("s2", hour(8), "not indexed", ""), exchangeAt("s2", hour(9), "nor this", "")))
		before = readByTypeV4(t, db)
		if _, err := db.w.Exec(`DROP INDEX rejects_line_key; ALTER TABLE rejects DROP COLUMN line_key`); err != nil {
			t.Fatal(err)
		}
		db.Close()
	})
	if want := (typeReads{ByType: map[string]int64{"exchange": 7, "context_reset": 1, "session_resume": 1, "note": 1},
		Others: map[int64]string{3: "context_reset", 5: "session_resume", 7: "note"}, Exchanges: 7,
		Pending: []int64{2, 4, 6, 8, 9, 10}, FullTextPending: 2}); !reflect.DeepEqual(before, want) {
		t.Fatalf("version 4 reads:\n%+v\nwant\n%+v", before, want)
	}

	// A failing step: nothing of it stays, the version neither.
	withMigrations(len(migrations), func() {
		migrations[4] += "\nCREATE TABLE events (x);"
		defer func() { migrations[4] = strings.TrimSuffix(migrations[4], "\nCREATE TABLE events (x);") }()
		if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "migrate") {
			t.Fatalf("Open with a failing migration: %v", err)
		}
	})
	raw, err := sql.Open("sqlite3", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := userVersion(ctx, raw); v != 4 {
		t.Errorf("user_version %d after a failed migration, want 4", v)
	}
	if got := indexNames(t, raw); !strings.Contains(strings.Join(got, " "), "events_type") ||
		strings.Contains(strings.Join(got, " "), "events_other") {
		t.Errorf("indexes after a failed migration: %v", got)
	}
	raw.Close()

	db := openTest(t, dir)
	if v, _ := userVersion(ctx, db.w); v != SchemaVersion() {
		t.Fatalf("user_version %d after migration", v)
	}
	if got := indexNames(t, db.w); !reflect.DeepEqual(got, []string{"events_exchange_ts", "events_line_key", "events_meta", "events_other", "events_resets",
		"events_session_ts", "sqlite_autoindex_events_1", "sqlite_autoindex_events_2"}) {
		t.Errorf("indexes after migration: %v", got)
	}
	tl, err := db.Timeline(ctx, []string{"s1", "s2"})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range tl {
		types = append(types, e.Type)
	}
	if want := []string{"exchange", "exchange", "context_reset", "exchange", "exchange", "exchange", "exchange", "exchange"}; !reflect.DeepEqual(types, want) {
		t.Errorf("Timeline types %v, want %v", types, want)
	}
	if after := readByType(t, db); !reflect.DeepEqual(after, before) {
		t.Errorf("reads after the migration differ:\n%+v\nwant\n%+v", after, before)
	}
	fresh := openTest(t, testDir(t))
	if got, want := schemaOf(t, db), schemaOf(t, fresh); !reflect.DeepEqual(got, want) {
		t.Errorf("migrated schema differs from a new database's:\n%v\nwant\n%v", got, want)
	}

	// The step again (by hand, say): harmless.
	if _, err := db.w.Exec(migrations[4]); err != nil {
		t.Errorf("migration 5 applied twice: %v", err)
	}
	if got, want := schemaOf(t, db), schemaOf(t, fresh); !reflect.DeepEqual(got, want) {
		t.Errorf("schema after migration 5 twice:\n%v\nwant\n%v", got, want)
	}

	// A producer id already stored is still refused (UNIQUE event_id),
	// counted as a duplicate; new events are typed as before.
	f := newFeeder(t, db, "b.jsonl")
	commit(t, db, f.batch(exchange("s3", "p-1", "the same producer id again"),
		`{"type":"context_reset","session_id":"s3","timestamp":"2025-03-01T08:00:00Z"}`,
		exchange("s3", "p-2", "a new one")))
	st := mustStatus(t, db)
	if st.DuplicatesSkipped != 1 || st.Exchanges != 8 || st.Events != 12 || st.EventsByType["context_reset"] != 2 {
		t.Errorf("after new commits: duplicates %d, exchanges %d, events %d, by type %v",
			st.DuplicatesSkipped, st.Exchanges, st.Events, st.EventsByType)
	}
}

// An empty index has no "exchange" entry in its counts by type (as when
// they were a GROUP BY of every event), and one of only other events
// counts no exchange.
func TestStatusByTypeWithoutExchanges(t *testing.T) {
	db := openTest(t, testDir(t))
	if st := mustStatus(t, db); st.Events != 0 || st.Exchanges != 0 || len(st.EventsByType) != 0 {
		t.Errorf("empty index: %+v", st)
	}
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(`{"type":"context_reset","session_id":"s1","timestamp":"2025-03-01T02:00:00Z"}`))
	st := mustStatus(t, db)
	if want := map[string]int64{"context_reset": 1}; st.Events != 1 || st.Exchanges != 0 || !reflect.DeepEqual(st.EventsByType, want) {
		t.Errorf("one reset: events %d, exchanges %d, by type %v", st.Events, st.Exchanges, st.EventsByType)
	}
	if n, err := db.CountPending(ctx, "m"); err != nil || n != 0 {
		t.Errorf("CountPending = %d, %v", n, err)
	}
}

// The queries by type read indexes only: the counts and lists from
// events_other and a covering index, never the events' rows (which hold
// the texts: at 1M events, a scan of them reads gigabytes).
func TestTypeQueriesReadIndexesOnly(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(typedEvents()...))
	cases := []struct {
		name, sql string
		args      []any
		want      []string // in the plan, in order
	}{
		{"count events", countEventsSQL, nil, []string{"SCAN events USING COVERING INDEX"}},
		{"other types", otherTypesSQL, nil, []string{"SCAN events USING COVERING INDEX events_other"}},
		{"other events", otherEventsSQL, nil, []string{"SCAN events USING COVERING INDEX events_other"}},
		{"count exchanges", "SELECT " + countExchangesSQL, nil, []string{"SCAN events USING COVERING INDEX",
			"SCAN events USING COVERING INDEX events_other"}},
		{"count exchanges after", "SELECT " + countExchangesAfter("?1"), []any{3}, []string{
			"SEARCH events USING COVERING INDEX events_meta (id>?)", "SCAN events USING COVERING INDEX events_other"}},
		{"full-text pending", "SELECT " + countExchangesAfter(`(SELECT value FROM ft.state WHERE key = ?1)`), []any{stateWatermark},
			[]string{"SEARCH events USING COVERING INDEX events_meta (id>?)", "SCAN events USING COVERING INDEX events_other"}},
		{"pending embeddings", pendingEmbeddingsSQL, []any{0, "m", 10}, []string{
			"SEARCH events USING INDEX events_meta (id>?)", "SCAN events USING COVERING INDEX events_other",
			"SEARCH vectors USING COVERING INDEX"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := queryPlan(t, db, c.sql, c.args...)
			rest := plan
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("plan lacks %q (in order):\n%s", w, plan)
				}
				rest = rest[i+len(w):]
			}
			for _, line := range strings.Split(plan, "\n") {
				if strings.Contains(line, "events") && (strings.Contains(line, "INTEGER PRIMARY KEY") ||
					strings.HasSuffix(strings.TrimSpace(line), "SCAN events")) {
					t.Errorf("plan reads the events' rows: %q\n%s", line, plan)
				}
			}
		})
	}
}

// queryPlan is EXPLAIN QUERY PLAN of q on a reader (where ft is attached),
// one step per line.
func queryPlan(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", q, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
