package index

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

// exchangeAt is an exchange line with a session, a time and both texts.
func exchangeAt(session string, ts time.Time, user, ai string) string {
	m := map[string]any{"type": "exchange", "timestamp": ts.Format(time.RFC3339Nano), "user": user, "ai": ai}
	if session != "" {
		m["session_id"] = session
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func resumeLine(prev, next string, ts time.Time) string {
	b, _ := json.Marshal(map[string]any{"type": "session_resume", "previous_session": prev, "new_session": next,
		"timestamp": ts.Format(time.RFC3339Nano)})
	return string(b)
}

func hour(h int) time.Time { return time.Date(2025, 3, 1, h, 0, 0, 0, time.UTC) }

// rowsOf maps the user text of every stored exchange to its row.
func rowsOf(t *testing.T, db *DB) map[string]int64 {
	t.Helper()
	rows, err := db.r.Query(`SELECT coalesce(user, ''), id FROM events WHERE type = 'exchange'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var u string
		var id int64
		if err := rows.Scan(&u, &id); err != nil {
			t.Fatal(err)
		}
		out[u] = id
	}
	return out
}

func TestLexical(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(
		exchangeAt("s1", hour(1), "u-watcher", "the watcher tails the log files"),
		exchangeAt("s1", hour(2), "u-rotation", "log rotation is detected by inode and fingerprints"),
		exchangeAt("s2", hour(3), "u-running", "we keep running the tests"),
		exchangeAt("s2", hour(4), "u-cafe", "a café near the office"),
		exchangeAt("s3", hour(5), "u-bm25 fingerprints", "nothing here"),
		exchangeAt("s3", hour(6), "u-both", "watcher fingerprints watcher fingerprints"),
		`{"type":"context_reset","session_id":"s1","reason":"watcher fingerprints compaction"}`,
		exchangeAt("", hour(7), "u-nosession", "watcher without session"),
		exchangeAt("s4", hour(8), "u-cjk", "日本語のテスト"),
	))
	row := rowsOf(t, db)
	names := func(hits []LexicalHit) []string {
		byRow := map[int64]string{}
		for u, r := range row {
			byRow[r] = u
		}
		var out []string
		for _, h := range hits {
			out = append(out, byRow[h.Row])
		}
		return out
	}

	tests := []struct {
		name    string
		match   string
		weights [2]float64
		filter  Filter
		want    []string // in order; nil: no hits
		anyOrd  bool     // compare as sets
		wantErr error
	}{
		// Matches are over the analysed texts (analyze.Document): stems.
		{name: "term", match: "rotat", want: []string{"u-rotation"}},
		{name: "unstemmed word", match: "rotation"},
		{name: "cjk bigrams", match: `"日本 本語"`, want: []string{"u-cjk"}},
		{name: "stemming", match: "run", want: []string{"u-running"}},
		{name: "diacritics", match: "cafe", want: []string{"u-cafe"}},
		{name: "or, best first", match: "watcher OR fingerprint",
			want: []string{"u-both", "u-bm25 fingerprints", "u-watcher", "u-nosession", "u-rotation"}, anyOrd: true},
		{name: "and", match: "watcher fingerprint", want: []string{"u-both"}},
		{name: "phrase", match: `"log rotat"`, want: []string{"u-rotation"}},
		{name: "prefix", match: "fingerp*", want: []string{"u-both", "u-bm25 fingerprints", "u-rotation"}, anyOrd: true},
		{name: "column filter", match: "user: fingerprint", want: []string{"u-bm25 fingerprints"}},
		{name: "no match", match: "kubernetes"},
		{name: "resets are not indexed", match: "compaction"},
		{name: "sessions", match: "watcher OR fingerprint", filter: Filter{Sessions: []string{"s1", "s3"}},
			want: []string{"u-both", "u-bm25 fingerprints", "u-watcher", "u-rotation"}, anyOrd: true},
		{name: "one session", match: "watcher OR fingerprint", filter: Filter{Sessions: []string{"s1"}},
			want: []string{"u-watcher", "u-rotation"}, anyOrd: true},
		{name: "unknown session", match: "watcher", filter: Filter{Sessions: []string{"nope"}}},
		{name: "empty session list", match: "watcher", filter: Filter{Sessions: []string{}}},
		{name: "since inclusive", match: "watcher OR fingerprint", filter: Filter{Since: hour(5)},
			want: []string{"u-both", "u-bm25 fingerprints", "u-nosession"}, anyOrd: true},
		{name: "until exclusive", match: "watcher OR fingerprint", filter: Filter{Until: hour(5)},
			want: []string{"u-watcher", "u-rotation"}, anyOrd: true},
		{name: "since and until", match: "watcher OR fingerprint", filter: Filter{Since: hour(2), Until: hour(6)},
			want: []string{"u-rotation", "u-bm25 fingerprints"}, anyOrd: true},
		{name: "sessions and time", match: "watcher OR fingerprint",
			filter: Filter{Sessions: []string{"s1", "s3"}, Since: hour(2), Until: hour(6)},
			want:   []string{"u-rotation", "u-bm25 fingerprints"}, anyOrd: true},
		{name: "types with exchange", match: "rotat", filter: Filter{Types: []string{"context_reset", "exchange"}},
			want: []string{"u-rotation"}},
		{name: "types without exchange", match: "rotat", filter: Filter{Types: []string{"context_reset"}}},
		{name: "syntax error", match: `"unterminated`, wantErr: ErrBadMatch},
		{name: "dangling operator", match: `watcher AND`, wantErr: ErrBadMatch},
		{name: "unknown column", match: `nosuch: watcher`, wantErr: ErrBadMatch},
		{name: "empty query", match: ``, wantErr: ErrBadMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := db.Lexical(ctx, tt.match, tt.weights, tt.filter, 0)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := names(hits)
			want := tt.want
			if tt.anyOrd {
				got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("hits = %q, want %q", got, want)
			}
			for i, h := range hits {
				if h.Score <= 0 {
					t.Errorf("hit %d score %v, want > 0", i, h.Score)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("hits not best first: %+v", hits)
				}
			}
		})
	}

	// The best hit of an OR query is the exchange with both terms, twice;
	// a limit keeps the best.
	all, err := db.Lexical(ctx, "watcher OR fingerprint", [2]float64{}, Filter{}, 0)
	if err != nil || len(all) != 5 || all[0].Row != row["u-both"] {
		t.Errorf("hits = %+v, %v, want 5, u-both first", all, err)
	}
	top, err := db.Lexical(ctx, "watcher OR fingerprint", [2]float64{}, Filter{}, 2)
	if err != nil || !reflect.DeepEqual(top, all[:2]) {
		t.Errorf("limit 2: %+v, %v, want %+v", top, err, all[:2])
	}
}

func TestLexicalWeights(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(
		exchangeAt("s1", hour(1), "deploy the service", "ok"),
		exchangeAt("s1", hour(2), "ok", "deploy the service"),
	))
	row := rowsOf(t, db)
	top := func(w [2]float64) int64 {
		t.Helper()
		hits, err := db.Lexical(ctx, "deploy", w, Filter{}, 1)
		if err != nil || len(hits) != 1 {
			t.Fatalf("Lexical: %+v, %v", hits, err)
		}
		return hits[0].Row
	}
	if got := top([2]float64{10, 1}); got != row["deploy the service"] {
		t.Errorf("user weighted: top row %d, want the user match", got)
	}
	if got := top([2]float64{1, 10}); got != row["ok"] {
		t.Errorf("ai weighted: top row %d, want the ai match", got)
	}
	if _, err := db.Lexical(ctx, "deploy", [2]float64{1, math.NaN()}, Filter{}, 1); err == nil {
		t.Error("NaN weight accepted")
	}
}

// Read-only handles search too (the CLI next to the daemon).
func TestLexicalReadOnly(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(exchangeAt("s1", hour(1), "hello", "world")))
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	// A reader sees what the writer's indexer has indexed: nothing yet.
	if hits, err := ro.Lexical(ctx, "world", [2]float64{}, Filter{}, 10); err != nil || len(hits) != 0 {
		t.Errorf("read-only Lexical before indexing = %+v, %v, want nothing", hits, err)
	}
	if n, err := ro.FullTextPending(ctx); err != nil || n != 1 {
		t.Errorf("FullTextPending = %d, %v, want 1", n, err)
	}
	if err := db.DrainFullText(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := ro.FullTextPending(ctx); err != nil || n != 0 {
		t.Errorf("FullTextPending after Drain = %d, %v, want 0", n, err)
	}
	hits, err := ro.Lexical(ctx, "world", [2]float64{}, Filter{Sessions: []string{"s1"}, Since: hour(0)}, 10)
	if err != nil || len(hits) != 1 {
		t.Errorf("read-only Lexical = %+v, %v", hits, err)
	}
}

// TestLexicalSessionPlans: with a session filter, the plan that looks up
// each match's session and the one that lists the sessions' exchanges
// first give the same hits, scores and order, whichever Lexical would
// choose: rare and common words, one session and many, with and without
// a time range, sessions unknown.
func TestLexicalSessionPlans(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	var lines []string
	for i := range 600 {
		s := []string{"s0", "s1", "s2", "s3", "s4", "s5"}[i%6]
		if i%50 == 0 {
			s = "rare"
		}
		user := words[i%len(words)] + " common " + words[(i*7)%len(words)]
		ai := "common answer " + words[(i*3)%len(words)]
		if i%97 == 0 {
			ai += " unusualword"
		}
		lines = append(lines, exchangeAt(s, hour(0).Add(time.Duration(i)*time.Minute), user, ai))
	}
	commit(t, db, f.batch(lines...))
	defer func() { testLexicalPlan = 0 }()
	filters := []Filter{
		{Sessions: []string{"s1"}},
		{Sessions: []string{"s0", "s1", "s2", "s3", "s4", "s5", "rare"}},
		{Sessions: []string{"rare"}},
		{Sessions: []string{"nope"}},
		{Sessions: []string{"s2", "s3"}, Since: hour(2), Until: hour(6)},
		{Sessions: []string{"s0", "rare"}, Since: hour(3)},
	}
	for _, match := range []string{`"unusualword"`, `"common"`, `"alpha" OR "theta"`, `"zeta" "common"`, `"nothingmatches"`} {
		for _, fl := range filters {
			var got [3][]LexicalHit
			for plan := range 3 {
				testLexicalPlan = plan
				hits, err := db.Lexical(ctx, match, [2]float64{2, 1}, fl, 50)
				if err != nil {
					t.Fatalf("%s %+v plan %d: %v", match, fl, plan, err)
				}
				got[plan] = hits
			}
			if !reflect.DeepEqual(got[lexicalPerMatch], got[lexicalCandidates]) || !reflect.DeepEqual(got[0], got[lexicalCandidates]) {
				t.Errorf("%s %+v: the plans differ:\nauto       %v\nper match  %v\ncandidates %v", match, fl,
					got[0], got[lexicalPerMatch], got[lexicalCandidates])
			}
		}
	}
	// The choice: a rare word in many sessions is looked up per match, a
	// common word in one session goes through the session's exchanges.
	all, _ := json.Marshal(filters[1].Sessions)
	one, _ := json.Marshal(filters[0].Sessions)
	if few, err := db.fewMatches(ctx, `"unusualword"`, string(all)); err != nil || !few {
		t.Errorf("rare word, many sessions: few = %v, %v", few, err)
	}
	if few, err := db.fewMatches(ctx, `"common"`, string(one)); err != nil || few {
		t.Errorf("common word, one session: few = %v, %v", few, err)
	}
	if _, err := db.Lexical(ctx, `"unbalanced`, [2]float64{}, filters[0], 10); !errors.Is(err, ErrBadMatch) {
		t.Errorf("a bad match with a session filter: %v, want ErrBadMatch", err)
	}
}
