package search

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
)

// decisionLog is a short agent session in which a decision is asked in one
// exchange and made in the next ("go with it"), among unrelated work.
var decisionLog = []struct{ id, session, user, ai string }{
	{"d0", "s1", "the tests are flaky on CI, can you look at the retry logic", "I looked at internal/retry: the backoff has no jitter, so parallel jobs collide. I added jitter."},
	{"d1", "s1", "we need somewhere to store user accounts and sessions. Options: Postgres, MySQL or SQLite?", "For a single-server deployment SQLite is simplest; Postgres if you expect several app servers and concurrent writes. MySQL offers nothing here the other two don't."},
	{"d2", "s1", "go with it, the multi server one", "Done: we use Postgres 16. I added the pgx driver, a docker-compose service and migrations under db/migrations."},
	{"d3", "s1", "now fix the lint warnings", "Fixed 12 golangci-lint warnings, mostly unused parameters and shadowed err."},
	{"d4", "s2", "what color should the login button be", "We settled on the brand blue #1a73e8 for primary buttons."},
}

// decisionSearch indexes decisionLog, embedded with the default embedder,
// and returns a searcher with the default options.
func decisionSearch(t *testing.T) *Searcher {
	t.Helper()
	e, err := embed.New(embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	var lines []string
	for i, x := range decisionLog {
		lines = append(lines, exchange(x.id, x.session, at(i), x.user, x.ai))
	}
	f.commit(lines...)
	w := drain(t, f.db, e)
	s, err := New(Config{DB: f.db, Embedder: e, Vectors: w.Space})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNoFalseNothing (issue 32, item 3): a question that shares no word
// with the history but relates to it by its meaning gets the closest
// exchanges, marked weak, never nothing; a query about nothing in the
// history still gets nothing. Before: "which database did we pick" found
// nothing, while the exchange choosing the database was its best match.
func TestNoFalseNothing(t *testing.T) {
	s := decisionSearch(t)
	for _, tc := range []struct {
		query string
		want  string // an id among the results; "" for none at all
	}{
		{"which database did we pick", "d1"},
		{"what did we decide about the database", "d1"},
		{"medieval falconry jesses and hoods", ""},
	} {
		res, err := s.Search(ctx, Query{Text: tc.query})
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "" {
			if len(res) > 0 {
				t.Errorf("%q: %v; want nothing (nothing in the history relates to it)", tc.query, ids(res))
			}
			continue
		}
		if rankOf(res, tc.want) < 0 {
			t.Errorf("%q: %v; want %s among the closest matches", tc.query, ids(res), tc.want)
		}
		if len(res) > WeakMatches {
			t.Errorf("%q: %d results under a closed gate, want at most %d", tc.query, len(res), WeakMatches)
		}
		for _, r := range res {
			if !r.Weak {
				t.Errorf("%q: %s (score %.2f) not marked weak", tc.query, r.ID, r.Score)
			}
		}
	}
	// A limit under WeakMatches holds.
	res, err := s.Search(ctx, Query{Text: "which database did we pick", Limit: 1})
	if err != nil || len(res) != 1 {
		t.Errorf("limit 1: %v %v; want 1 result", ids(res), err)
	}
}

// TestSpanExchanges (issue 32, item 5): a query about nothing but a time
// says how many exchanges its span holds, under the query's filters,
// whatever its limit; other queries have no count.
func TestSpanExchanges(t *testing.T) {
	f := newFixture(t)
	// 2025-03-01 09:00 to 14:00 UTC, in two sessions; one the day after.
	f.commit(exchange("a0", "s1", at(0), "set up the ci cache", "ok"),
		exchange("a1", "s1", at(1), "fix the flaky upload test", "ok"),
		exchange("a2", "s2", at(2), "bump go", "ok"),
		exchange("a3", "s1", at(5), "tidy the backlog", "ok"),
		exchange("b0", "s1", at(24), "the next day", "ok"))
	s := searcher(t, f.db, nil, nil)
	now := t0.Add(30 * time.Hour).In(time.UTC) // 2025-03-02 15:00
	for _, tc := range []struct {
		q      Query
		n      int64
		ok     bool
		shown  int
		reason string
	}{
		{Query{Text: "what did we do yesterday", Limit: 2}, 4, true, 2, "the span, whatever the limit"},
		{Query{Text: "what did we do yesterday", Session: "s1"}, 3, true, 3, "within the session"},
		{Query{Text: "what did we do today"}, 1, true, 1, "today"},
		{Query{Text: "the flaky upload test yesterday"}, 0, false, -1, "not about the time only"},
	} {
		tc.q.Now = now
		n, ok, err := s.SpanExchanges(ctx, tc.q)
		if err != nil || n != tc.n || ok != tc.ok {
			t.Errorf("%s: %q: %d %v %v; want %d %v", tc.reason, tc.q.Text, n, ok, err, tc.n, tc.ok)
		}
		if tc.shown < 0 {
			continue
		}
		res, err := s.Search(ctx, tc.q)
		if err != nil || len(res) != tc.shown {
			t.Errorf("%s: %q: %v %v; want %d shown", tc.reason, tc.q.Text, ids(res), err, tc.shown)
		}
	}
}

// TestSearchContext (issue 32, item 1): Query.Context adds to each result
// up to n exchanges of its session before and after it, in the session's
// order, never another session's, and changes neither the results nor
// their order.
func TestSearchContext(t *testing.T) {
	f := newFixture(t)
	// Two sessions interleaved in time; the decision is made in the
	// exchange after the question.
	f.commit(exchange("a0", "s1", at(0), "set up the ci cache", "done"),
		exchange("b0", "s2", at(1), "what colour is the login button", "brand blue"),
		exchange("a1", "s1", at(2), "which message broker: kafka or rabbitmq?", "rabbitmq is simpler to run; kafka if you need replay"),
		exchange("b1", "s2", at(3), "make it darker", "done"),
		exchange("a2", "s1", at(4), "go with the simpler one", "set up with a docker compose service"),
		exchange("a3", "s1", at(5), "now the lint warnings", "fixed"))
	s := searcher(t, f.db, nil, nil)
	plain, err := s.Search(ctx, Query{Text: "kafka rabbitmq broker", Mode: ModeLexical})
	if err != nil || len(plain) != 1 || plain[0].ID != "a1" || plain[0].Context != nil {
		t.Fatalf("without context: %+v %v", plain, err)
	}
	offsets := func(r Result) string {
		var b []string
		for _, c := range r.Context {
			b = append(b, fmt.Sprintf("%d:%s", c.Offset, c.ID))
		}
		return strings.Join(b, " ")
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, "-1:a0 1:a2"},
		{2, "-1:a0 1:a2 2:a3"},
		{10, "-1:a0 1:a2 2:a3"},
	} {
		res, err := s.Search(ctx, Query{Text: "kafka rabbitmq broker", Mode: ModeLexical, Context: tc.n})
		if err != nil || len(res) != 1 || res[0].ID != "a1" {
			t.Fatalf("context %d: %v %v", tc.n, ids(res), err)
		}
		if got := offsets(res[0]); got != tc.want {
			t.Errorf("context %d: %s, want %s", tc.n, got, tc.want)
		}
		if c := res[0].Context; len(c) > 1 && (c[1].User != "go with the simpler one" || c[1].AI == "" || c[1].Line == 0) {
			t.Errorf("context %d: the exchange after: %+v", tc.n, c[1])
		}
	}
	// The first exchange of a session has none before it.
	res, err := s.Search(ctx, Query{Text: "login button colour", Mode: ModeLexical, Context: 1})
	if err != nil || len(res) == 0 || res[0].ID != "b0" || offsets(res[0]) != "1:b1" {
		t.Errorf("first of its session: %+v %v", res, err)
	}
	for _, n := range []int{-1, MaxContext + 1} {
		if _, err := s.Search(ctx, Query{Text: "kafka", Context: n}); err == nil {
			t.Errorf("context %d: no error", n)
		}
	}
}
