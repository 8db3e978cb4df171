package index

import (
	"github.com/praxis-os/continuity/analyze"

	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestChain(t *testing.T) {
	type link struct {
		prev, next string
		h          int // hour of the session_resume event
	}
	tests := []struct {
		name     string
		links    []link // committed in this order (row ids follow it)
		session  string
		maxDepth int
		want     []string
	}{
		{name: "no links", session: "a", maxDepth: 10, want: []string{"a"}},
		{name: "unknown session", links: []link{{"a", "b", 1}}, session: "zzz", maxDepth: 10, want: []string{"zzz"}},
		{name: "linear", links: []link{{"a", "b", 1}, {"b", "c", 2}}, session: "c", maxDepth: 10, want: []string{"c", "b", "a"}},
		{name: "from the middle", links: []link{{"a", "b", 1}, {"b", "c", 2}}, session: "b", maxDepth: 10, want: []string{"b", "a"}},
		{name: "two parents, newest link first", links: []link{{"b", "c", 2}, {"a", "c", 3}}, session: "c", maxDepth: 10,
			want: []string{"c", "a", "b"}},
		{name: "same time, later row first", links: []link{{"a", "c", 2}, {"b", "c", 2}}, session: "c", maxDepth: 10,
			want: []string{"c", "b", "a"}},
		{name: "breadth first", links: []link{{"x", "a", 1}, {"y", "b", 1}, {"a", "c", 2}, {"b", "c", 3}}, session: "c", maxDepth: 10,
			want: []string{"c", "b", "a", "y", "x"}},
		{name: "diamond", links: []link{{"a", "b", 1}, {"a", "c", 1}, {"b", "d", 2}, {"c", "d", 3}}, session: "d", maxDepth: 10,
			want: []string{"d", "c", "b", "a"}},
		{name: "cycle", links: []link{{"a", "b", 1}, {"b", "a", 2}}, session: "a", maxDepth: 10, want: []string{"a", "b"}},
		{name: "cycle back to start through three", links: []link{{"a", "b", 1}, {"b", "c", 2}, {"c", "a", 3}}, session: "c", maxDepth: -1,
			want: []string{"c", "b", "a"}},
		{name: "depth cap", links: []link{{"a", "b", 1}, {"b", "c", 2}, {"c", "d", 3}}, session: "d", maxDepth: 2,
			want: []string{"d", "c", "b"}},
		{name: "depth 0", links: []link{{"a", "b", 1}}, session: "b", maxDepth: 0, want: []string{"b"}},
		{name: "no depth limit", links: []link{{"a", "b", 1}, {"b", "c", 2}, {"c", "d", 3}}, session: "d", maxDepth: -1,
			want: []string{"d", "c", "b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, testDir(t))
			f := newFeeder(t, db, "log.jsonl")
			for _, l := range tt.links {
				commit(t, db, f.batch(resumeLine(l.prev, l.next, hour(l.h))))
			}
			got, err := db.Chain(ctx, tt.session, tt.maxDepth)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Chain(%s, %d) = %v, want %v", tt.session, tt.maxDepth, got, tt.want)
			}
		})
	}
}

func TestEventsByRows(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	lines := []string{
		exchangeAt("s1", hour(1), "q1", "a1"),
		`{"type":"exchange","session_id":"s1","id":"p-2","user":"q2","ai":"a2","files":["x.go"],"timestamp":"2025-03-01T02:00:00Z"}`,
	}
	commit(t, db, f.batch(lines...))
	row := rowsOf(t, db)
	got, err := db.EventsByRows(ctx, []int64{row["q2"], 12345, row["q1"], row["q2"]})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("EventsByRows = %+v", got)
	}
	e1, e2 := got[row["q1"]], got[row["q2"]]
	if e1.Row != row["q1"] || e1.ID != e1.Row || e1.SessionID != "s1" || e1.Type != "exchange" || e1.User != "q1" ||
		e1.AI != "a1" || !e1.Timestamp.Equal(hour(1)) || e1.File != "a.jsonl" || e1.Line != 1 || string(e1.Raw) != lines[0] ||
		len(e1.EventID) != 36 {
		t.Errorf("event 1 = %+v", e1)
	}
	if e2.Row != row["q2"] || e2.EventID != "p-2" || !reflect.DeepEqual(e2.Files, []string{"x.go"}) || e2.Line != 2 {
		t.Errorf("event 2 = %+v", e2)
	}
	if got, err := db.EventsByRows(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("EventsByRows(nil) = %v, %v", got, err)
	}
	// More rows than one IN list holds.
	many := make([]int64, 1200)
	for i := range many {
		many[i] = int64(i + 1)
	}
	if got, err := db.EventsByRows(ctx, many); err != nil || len(got) != 2 {
		t.Errorf("EventsByRows(1200 rows) = %d events, %v", len(got), err)
	}

	// ExchangesByRows: the same events with the fields a search result
	// shows, and nothing else.
	brief, err := db.ExchangesByRows(ctx, append([]int64{12345}, many...))
	if err != nil || len(brief) != 2 {
		t.Fatalf("ExchangesByRows = %+v, %v", brief, err)
	}
	for r, full := range got {
		want := Event{Row: full.Row, ID: full.ID, EventID: full.EventID, File: full.File, Line: full.Line, Type: full.Type,
			SessionID: full.SessionID, Timestamp: full.Timestamp, User: full.User, AI: full.AI, Files: full.Files}
		if b := brief[r]; !reflect.DeepEqual(b, want) {
			t.Errorf("ExchangesByRows[%d] = %+v, want %+v", r, b, want)
		}
	}
}

// ftsRows returns the rows the full-text index finds for a term, checking
// the index's integrity on the way.
// ftsRows returns the rows whose texts hold word (as analysed: "plans"
// finds "plan").
func ftsRows(t *testing.T, db *DB, word string) []int64 {
	t.Helper()
	hits, err := db.Lexical(ctx, analyze.MatchAny(analyze.WordTerms(word)), [2]float64{}, Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ft.Exec(`INSERT INTO events_fts (events_fts, rank) VALUES ('integrity-check', 0)`); err != nil {
		t.Fatalf("FTS integrity-check: %v", err)
	}
	var out []int64
	for _, h := range hits {
		out = append(out, h.Row)
	}
	return out
}

func count(t *testing.T, db *DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.w.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestDeleteSession(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	f := newFeeder(t, db, "log.jsonl")
	lines := []string{
		exchangeAt("gone", hour(1), "secret plans", "keep them"),
		`{"type":"context_reset","session_id":"gone","reason":"compaction","timestamp":"2025-03-01T01:30:00Z"}`,
		exchangeAt("stay", hour(2), "public plans", "share them"),
		resumeLine("gone", "stay", hour(3)),                                                                                         // link made by an event of stay
		resumeLine("stay", "later", hour(4)),                                                                                        // a link not naming gone
		`{"type":"session_resume","session_id":"gone","previous_session":"x","new_session":"y","timestamp":"2025-03-01T05:00:00Z"}`, // made by gone
		`{"type":"exchange","session_id":"gone","id":"p-gone","user":"more secret","ai":"plans","timestamp":"2025-03-01T06:00:00Z"}`,
	}
	b1 := f.batch(lines...)
	commit(t, db, b1)
	row := rowsOf(t, db)
	store(t, db, "m", []int64{row["secret plans"], row["public plans"], row["more secret"]}, 2)
	if got := ftsRows(t, db, "plans"); len(got) != 3 {
		t.Fatalf("before: plans found in %v", got)
	}

	n, err := db.DeleteSession(ctx, "gone")
	if err != nil || n != 4 {
		t.Fatalf("DeleteSession = %d, %v, want 4 events", n, err)
	}
	if got := ftsRows(t, db, "plans"); !reflect.DeepEqual(got, []int64{row["public plans"]}) {
		t.Errorf("after: plans found in %v, want only the public plans", got)
	}
	if got := ftsRows(t, db, "secret"); len(got) != 0 {
		t.Errorf("after: secret found in %v", got)
	}
	checks := []struct {
		what  string
		query string
		want  int64
	}{
		{"events of gone", `SELECT count(*) FROM events WHERE session_id = 'gone'`, 0},
		{"other events", `SELECT count(*) FROM events`, 3},
		{"vectors", `SELECT count(*) FROM vectors`, 1},
		{"session row", `SELECT count(*) FROM sessions WHERE id = 'gone'`, 0},
		{"sessions", `SELECT count(*) FROM sessions`, 2}, // stay, later
		{"links naming gone", `SELECT count(*) FROM session_links WHERE 'gone' IN (previous, new)`, 0},
		{"links", `SELECT count(*) FROM session_links`, 1}, // stay -> later
		{"full-text deletions left", `SELECT count(*) FROM fulltext_deletes`, 0},
		{"forgotten", `SELECT count(*) FROM forgotten WHERE session = 'gone' AND at > 0`, 1},
	}
	for _, c := range checks {
		if got := count(t, db, c.query); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
	var docs int64
	if err := db.ft.QueryRow(`SELECT count(*) FROM events_fts_docsize`).Scan(&docs); err != nil || docs != 1 {
		t.Errorf("full-text index holds %d exchanges (%v), want 1", docs, err)
	}
	if f, err := db.Forgotten(ctx, "gone"); err != nil || !f {
		t.Errorf("Forgotten(gone) = %v, %v", f, err)
	}
	if f, err := db.Forgotten(ctx, "stay"); err != nil || f {
		t.Errorf("Forgotten(stay) = %v, %v", f, err)
	}
	if ok, err := db.SessionExists(ctx, "gone"); err != nil || ok {
		t.Errorf("SessionExists(gone) = %v, %v", ok, err)
	}
	st := mustStatus(t, db)
	if st.Events != 3 || st.Exchanges != 1 || st.Forgotten != 1 || st.ForgottenSkipped != 0 {
		t.Errorf("status = %+v", st)
	}

	// The same lines read again, as a new generation (the log was copied
	// back, or the watcher rescans): gone's lines are skipped and counted,
	// and the link from gone to stay is not made again.
	g := newFeeder(t, db, "log-copy.jsonl")
	commit(t, db, g.batch(lines...))
	if got := count(t, db, `SELECT count(*) FROM events WHERE session_id = 'gone'`); got != 0 {
		t.Errorf("replay stored %d events of gone", got)
	}
	if got := count(t, db, `SELECT count(*) FROM session_links WHERE 'gone' IN (previous, new)`); got != 0 {
		t.Errorf("replay made %d links naming gone", got)
	}
	if got := ftsRows(t, db, "secret"); len(got) != 0 {
		t.Errorf("after replay: secret found in %v", got)
	}
	st = mustStatus(t, db)
	// The 4 lines of gone are skipped; stay's exchange and the resumes
	// are the same lines (the same derived ids: logformat.DeriveID),
	// indexed once.
	if st.ForgottenSkipped != 4 || st.DuplicatesSkipped != 3 {
		t.Errorf("status after replay = %+v, want 4 forgotten skipped", st)
	}
	// The replayed batch of the first generation is a no-op, counters
	// included.
	commit(t, db, b1)
	if got := mustStatus(t, db).ForgottenSkipped; got != 4 {
		t.Errorf("forgotten_skipped after replaying a committed batch = %d, want 4", got)
	}
	if n, err := db.Counter(ctx, CounterForgottenSkipped); err != nil || n != 4 {
		t.Errorf("Counter = %d, %v", n, err)
	}

	// Forgetting again, or an unknown session, is fine.
	if n, err := db.DeleteSession(ctx, "gone"); err != nil || n != 0 {
		t.Errorf("second DeleteSession = %d, %v", n, err)
	}
	if n, err := db.DeleteSession(ctx, "never-seen"); err != nil || n != 0 {
		t.Errorf("DeleteSession(unknown) = %d, %v", n, err)
	}
	commit(t, db, f.batch(exchangeAt("never-seen", hour(9), "hi", "there")))
	if got := count(t, db, `SELECT count(*) FROM events WHERE session_id = 'never-seen'`); got != 0 {
		t.Errorf("a session forgotten before it arrived was stored")
	}
	if _, err := db.DeleteSession(ctx, ""); err == nil {
		t.Error("DeleteSession(\"\") accepted")
	}

	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.DeleteSession(ctx, "stay"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("read-only DeleteSession: %v", err)
	}
}

// TestForgottenSessionGoesOn: after DeleteSession, a line of the session
// timestamped after the deletion is stored (new work in that session); one
// without a timestamp or from before is not, but is listed as a reject of
// KindForgotten without excerpt and counted.
func TestForgottenSessionGoesOn(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "log.jsonl")
	commit(t, db, f.batch(exchangeAt("gone", hour(1), "old secret", "x")))
	if _, err := db.DeleteSession(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	after := fixedNow.Add(time.Minute).UTC().Format(time.RFC3339)
	commit(t, db, f.batch(
		exchangeAt("gone", hour(1), "old secret replayed", "x"),
		`{"type":"exchange","session_id":"gone","user":"no timestamp","ai":"x"}`,
		`{"type":"exchange","session_id":"gone","user":"new work","ai":"x","timestamp":"`+after+`"}`,
		`{"type":"session_resume","previous_session":"gone","new_session":"next","timestamp":"`+after+`"}`,
	))
	if got := count(t, db, `SELECT count(*) FROM events WHERE session_id = 'gone'`); got != 1 {
		t.Errorf("%d events of gone stored, want 1 (the new work)", got)
	}
	if got := count(t, db, `SELECT count(*) FROM session_links WHERE previous = 'gone'`); got != 1 {
		t.Errorf("link from gone made after the forget: %d, want 1", got)
	}
	rs, err := db.Rejects(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("rejects %+v, want the 2 old lines", rs)
	}
	for _, r := range rs {
		if r.Kind != KindForgotten || r.Excerpt != "" || !strings.Contains(r.Reason, `session "gone" was forgotten at`) {
			t.Errorf("reject %+v", r)
		}
	}
	st := mustStatus(t, db)
	if st.ForgottenSkipped != 2 || st.RejectsForgotten != 2 || st.Rejects != 2 || st.Exchanges != 1 {
		t.Errorf("status = %+v", st)
	}
	// Forgetting again removes the new work too.
	if n, err := db.DeleteSession(ctx, "gone"); err != nil || n != 1 {
		t.Errorf("second DeleteSession = %d, %v, want 1 (the new work)", n, err)
	}
}

// TestUnknownFieldNames: status names the unknown fields of events of
// known types (an answer written as "response" must not go unnoticed), not
// those of unknown types, whose fields are all unknown.
func TestUnknownFieldNames(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "log.jsonl")
	commit(t, db, f.batch(
		`{"type":"exchange","session_id":"s","user":"q","response":"the answer"}`,
		`{"type":"exchange","session_id":"s","user":"q2","response":"again","model":"m"}`,
		`{"type":"tool_call","session_id":"s","name":"grep","args":{}}`,
	))
	st := mustStatus(t, db)
	want := map[string]int64{"response": 2, "model": 1}
	if !reflect.DeepEqual(st.UnknownFieldNames, want) {
		t.Errorf("UnknownFieldNames = %v, want %v", st.UnknownFieldNames, want)
	}
}

// TestLatestSession: the session of the most recent event, by timestamp
// then row id; events without a session do not count; "" when none; and
// the query finds it through events_session_ts, not by scanning events.
func TestLatestSession(t *testing.T) {
	ev := func(session, ts string) string {
		s := `{"type":"context_reset","timestamp":"` + ts + `"`
		if session != "" {
			s += `,"session_id":` + quote(session)
		}
		return s + "}"
	}
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"empty", nil, ""},
		{"newest time wins", []string{ev("a", "2025-01-02T10:00:00Z"), ev("b", "2025-01-02T09:00:00Z")}, "a"},
		{"same time, later row wins", []string{ev("b", "2025-01-02T10:00:00Z"), ev("a", "2025-01-02T10:00:00Z")}, "a"},
		{"same time, later row of an older session", []string{ev("a", "2025-01-02T10:00:00Z"), ev("b", "2025-01-02T10:00:00Z"), ev("a", "2025-01-01T10:00:00Z")}, "b"},
		{"no session does not count", []string{ev("a", "2025-01-02T10:00:00Z"), ev("", "2025-01-03T10:00:00Z")}, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, testDir(t))
			if len(tt.lines) > 0 {
				f := newFeeder(t, db, "a.jsonl")
				commit(t, db, f.batch(tt.lines...))
			}
			got, err := db.LatestSession(ctx)
			if err != nil || got != tt.want {
				t.Errorf("LatestSession = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	db := openTest(t, testDir(t))
	rows, err := db.r.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT e.session_id FROM
		(SELECT id, last_ts FROM sessions WHERE last_ts = (SELECT max(last_ts) FROM sessions)) AS s
		JOIN events AS e INDEXED BY events_session_ts ON e.session_id = s.id AND e.ts = s.last_ts
		ORDER BY e.id DESC LIMIT 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(detail, "SCAN e") {
			t.Errorf("the latest session query scans events: %s", detail)
		}
	}
}

// TestForgetKeepsChain: forgetting sessions in the middle of a chain
// leaves the sessions that resumed them resuming the sessions they
// resumed, whether the links were read before the forget (bridged by
// the forget) or after it (a rebuild: the forget recorded first, the
// logs read after, in any order).
func TestForgetKeepsChain(t *testing.T) {
	type link struct{ prev, next string }
	tests := []struct {
		name    string
		links   []link // a link's event is timestamped before the forgets
		forget  []string
		resumes map[string][]string // recorded with the forget (a rebuild)
		session string
		want    []string
	}{
		{name: "middle", links: []link{{"a", "b"}, {"b", "c"}}, forget: []string{"b"}, session: "c", want: []string{"c", "a"}},
		{name: "two in a row", links: []link{{"a", "b"}, {"b", "c"}, {"c", "d"}}, forget: []string{"b", "c"}, session: "d", want: []string{"d", "a"}},
		{name: "two in a row, other order", links: []link{{"a", "b"}, {"b", "c"}, {"c", "d"}}, forget: []string{"c", "b"}, session: "d", want: []string{"d", "a"}},
		{name: "head", links: []link{{"a", "b"}, {"b", "c"}}, forget: []string{"a"}, session: "c", want: []string{"c", "b"}},
		{name: "two parents", links: []link{{"a", "m"}, {"z", "m"}, {"m", "c"}}, forget: []string{"m"}, session: "c", want: []string{"c", "a", "z"}},
		{name: "rebuild: forget recorded before the links are read", forget: []string{"b"}, resumes: map[string][]string{"b": {"a"}},
			links: []link{{"b", "c"}, {"a", "b"}}, session: "c", want: []string{"c", "a"}},
		{name: "rebuild: two in a row", forget: []string{"b", "c"}, resumes: map[string][]string{"b": {"a"}, "c": {"b"}},
			links: []link{{"c", "d"}, {"b", "c"}, {"a", "b"}}, session: "d", want: []string{"d", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, testDir(t))
			f := newFeeder(t, db, "log.jsonl")
			forget := func() {
				for _, s := range tt.forget {
					if _, _, err := db.ForgetSession(ctx, Forget{Session: s, At: hour(12).UnixNano(), Resumes: tt.resumes[s]}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.resumes != nil {
				forget()
			}
			for i, l := range tt.links {
				commit(t, db, f.batch(resumeLine(l.prev, l.next, hour(i+1))))
			}
			if tt.resumes == nil {
				forget()
			}
			got, err := db.Chain(ctx, tt.session, -1)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Chain(%s) = %v, want %v", tt.session, got, tt.want)
			}
			fs, err := db.Forgets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.forget {
				if _, ok := fs[s]; !ok {
					t.Errorf("the forget of %s is not listed: %+v", s, fs)
				}
			}
		})
	}
}
