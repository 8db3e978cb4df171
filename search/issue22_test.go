package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/internal/indextest"
)

// Issue 22: answers an agent can trust. Each test failed before the
// change it names (checked against the code before it).

// withFiles is an exchange line with a "files" field.
func withFiles(id, session string, ts time.Time, user, ai string, files ...string) string {
	return indextest.Line(map[string]any{"type": "exchange", "id": id, "session_id": session,
		"timestamp": ts.Format(time.RFC3339), "user": user, "ai": ai, "files": files})
}

// bothFloors returns a searcher with the default floor and one without.
func bothFloors(t *testing.T, f *fixture, e embed.Embedder, w *embedding.Worker) []*Searcher {
	t.Helper()
	var out []*Searcher
	for _, opts := range []Options{{}, noFloor} {
		s, err := New(Config{DB: f.db, Embedder: e, Vectors: w.Space, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestNewerWinsAtEqualRelevance (item 1): two exchanges ask the same
// question; the later one answers differently: it ranks first in every
// mode and supersedes the earlier one, both marked. Before: "Node 16"
// first (both 1.000).
func TestNewerWinsAtEqualRelevance(t *testing.T) {
	f := newFixture(t)
	jan := time.Date(2026, 1, 12, 10, 0, 0, 0, time.UTC)
	last := time.Date(2026, 11, 19, 15, 0, 0, 0, time.UTC)
	f.commit(
		exchange("jan", "s-jan", jan, "which node version do we use for the frontend build?", "Node 16"),
		exchange("other", "s-jan", jan.Add(time.Hour), "how do we deploy the frontend?", "with the deploy script"),
		exchange("now", "s-nov", last, "which node version do we use for the frontend build?", "Node 22 since the upgrade"),
	)
	e := builtin(t, 0)
	w := drain(t, f.db, e)
	for _, s := range bothFloors(t, f, e, w) {
		for _, m := range allModes {
			res, err := s.Search(ctx, Query{Text: "which node version for the frontend build", Mode: m})
			if err != nil {
				t.Fatal(err)
			}
			checkOrder(t, res)
			if len(res) < 2 || res[0].ID != "now" || res[1].ID != "jan" {
				t.Fatalf("%s: %v, want now then jan", m, ids(res))
			}
			if res[0].Score < res[1].Score {
				t.Errorf("%s: the superseding exchange scores %.2f, under the one it supersedes (%.2f)", m, res[0].Score, res[1].Score)
			}
			if sb := res[1].SupersededBy; sb == nil || sb.ID != "now" {
				t.Errorf("%s: jan's superseded_by = %+v, want now", m, sb)
			}
			if len(res[0].Supersedes) != 1 || res[0].Supersedes[0].ID != "jan" || res[0].SupersededBy != nil {
				t.Errorf("%s: now's supersedes = %+v, superseded_by %+v; want [jan], none", m, res[0].Supersedes, res[0].SupersededBy)
			}
		}
	}
}

// TestSupersedesOnlyTheSameQuestion: supersession needs the same question
// (not a short prompt, not a continued part of a turn, not a retry within
// minutes in the same session) answered differently.
func TestSupersedesOnlyTheSameQuestion(t *testing.T) {
	at := func(h int) time.Time {
		return time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(h) * time.Hour)
	}
	tests := []struct {
		name       string
		a, b       [3]string // session, user, ai of the older and the newer
		gap        time.Duration
		supersedes bool
	}{
		{"same question, other answer", [3]string{"s1", "which port does the api listen on", "8080"}, [3]string{"s2", "which port does the api listen on", "9090 now"}, 48 * time.Hour, true},
		{"reworded", [3]string{"s1", "which node version do we use for the frontend build?", "16"}, [3]string{"s2", "which node version for the frontend build", "22"}, 48 * time.Hour, true},
		{"same answer", [3]string{"s1", "which port does the api listen on", "8080"}, [3]string{"s2", "which port does the api listen on?", "8080"}, 48 * time.Hour, false},
		{"another question", [3]string{"s1", "which port does the api listen on", "8080"}, [3]string{"s2", "which database does the api use", "sqlite"}, 48 * time.Hour, false},
		{"short prompt", [3]string{"s1", "go on", "first part"}, [3]string{"s2", "go on", "second part"}, 48 * time.Hour, false},
		{"continued turn", [3]string{"s1", "refactor the watcher tailing code", "part one"}, [3]string{"s1", "[continued] refactor the watcher tailing code", "part two"}, 2 * time.Hour, false},
		{"retry in the same session", [3]string{"s1", "which port does the api listen on", "8080"}, [3]string{"s1", "which port does the api listen on", "9090"}, 2 * time.Minute, false},
		{"another number", [3]string{"s1", "what is the status of issue 12 in the tracker", "open"}, [3]string{"s2", "what is the status of issue 13 in the tracker", "closed"}, 48 * time.Hour, false},
		{"asked again later in the same session", [3]string{"s1", "which port does the api listen on", "8080"}, [3]string{"s1", "which port does the api listen on", "9090"}, 3 * time.Hour, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.commit(exchange("old", tc.a[0], at(0), tc.a[1], tc.a[2]), indextest.Exchange("new", tc.b[0], at(0).Add(tc.gap), tc.b[1], tc.b[2]))
			s := searcher(t, f.db, nil, nil)
			res, err := s.Search(ctx, Query{Text: tc.a[1], Mode: ModeLexical})
			if err != nil {
				t.Fatal(err)
			}
			var old *Result
			for i := range res {
				if res[i].ID == "old" {
					old = &res[i]
				}
			}
			if old == nil {
				if tc.supersedes {
					t.Fatalf("old not found: %v", ids(res))
				}
				return // identical texts collapsed, or not found: nothing superseded
			}
			if got := old.SupersededBy != nil; got != tc.supersedes {
				t.Fatalf("superseded = %v (%+v), want %v", got, old.SupersededBy, tc.supersedes)
			}
		})
	}
}

// TestOldNearDuplicatesDoNotCrowdOut (item 1, at scale): an old session
// asked a question many times; a later one asked it again and got other
// answers. At equal relevance the top 8 must not be the old session's.
// Before: 7 of the top 8 from the oldest session.
func TestOldNearDuplicatesDoNotCrowdOut(t *testing.T) {
	f := newFixture(t)
	old := time.Date(2025, 2, 1, 9, 0, 0, 0, time.UTC)
	recent := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var lines []string
	for i := range 40 {
		lines = append(lines, exchange(fmt.Sprintf("old%d", i), "oldest", old.Add(time.Duration(i)*time.Minute),
			"how do we run the integration tests", fmt.Sprintf("run make test-integration, shard %d", i)))
	}
	for i := range 6 {
		lines = append(lines, exchange(fmt.Sprintf("new%d", i), fmt.Sprintf("recent%d", i), recent.Add(time.Duration(i)*24*time.Hour),
			"how do we run the integration tests", fmt.Sprintf("go test -tags integration ./... (run %d)", i)))
	}
	// Unrelated history in between.
	for i := range 200 {
		lines = append(lines, exchange(fmt.Sprintf("x%d", i), "misc", old.Add(time.Duration(i)*time.Hour+30*24*time.Hour),
			fmt.Sprintf("unrelated question %d about the cache", i), "an answer"))
	}
	f.commit(lines...)
	e := builtin(t, 0)
	s := searcher(t, f.db, e, drain(t, f.db, e))
	for _, m := range allModes {
		res, err := s.Search(ctx, Query{Text: "how do we run the integration tests", Mode: m, Limit: 8})
		if err != nil {
			t.Fatal(err)
		}
		checkOrder(t, res)
		fromOld := 0
		for _, r := range res {
			if r.SessionID == "oldest" {
				fromOld++
			}
		}
		if len(res) != 8 || fromOld > 2 || !strings.HasPrefix(res[0].ID, "new") {
			t.Errorf("%s: top 8 %v: %d from the oldest session; want the recent answers first", m, ids(res), fromOld)
		}
	}
}

// TestTimeOnlyQueries (item 2): a query about nothing but a time returns
// that span's exchanges, newest first, whatever the floor; "yesterday" is
// yesterday midnight to midnight in the asker's zone. Before: "nothing
// relevant found", and with --min-score 0 this morning's exchange first.
func TestTimeOnlyQueries(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, ny) // a Thursday morning
	at := func(d, h int) time.Time { return time.Date(2026, 11, 26+d, h, 0, 0, 0, ny) }
	f := newFixture(t)
	f.commit(
		exchange("y1", "s", at(-1, 9), "set up the ci cache", "done"),
		exchange("y2", "s", at(-1, 11), "fix the flaky upload test", "retry added"),
		exchange("y3", "s", at(-1, 15), "review the webhook handler", "two comments"),
		exchange("y4", "s", at(-1, 23), "bump go to 1.24", "bumped"), // 23:00 local is already the 27th in UTC
		exchange("tue", "s", at(-2, 12), "plan the release", "friday"),
		exchange("morning", "s", at(0, 8), "what did we do yesterday about the cache", "we set it up"),
		exchange("wed-early", "s", at(-1, 0), "midnight deploy", "ok"),
	)
	e := builtin(t, 0)
	w := drain(t, f.db, e)
	for _, s := range bothFloors(t, f, e, w) {
		for _, m := range allModes {
			for _, tc := range []struct {
				text string
				want []string
			}{
				{"what did we do yesterday", []string{"y4", "y3", "y2", "y1", "wed-early"}},
				{"yesterday?", []string{"y4", "y3", "y2", "y1", "wed-early"}},
				{"last wednesday", []string{"y4", "y3", "y2", "y1", "wed-early"}},
				{"what did we work on 2 days ago", []string{"tue"}},
				{"this morning", []string{"morning"}},
				// A weekday alone is the last one, in a query about
				// nothing else.
				{"what did we do on tuesday", []string{"tue"}},
				{"wednesday?", []string{"y4", "y3", "y2", "y1", "wed-early"}},
				{"what did we do on friday", nil},
			} {
				res, err := s.Search(ctx, Query{Text: tc.text, Mode: m, Now: now})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids(res), tc.want) {
					t.Errorf("%s %q: %v, want %v", m, tc.text, ids(res), tc.want)
				}
				if _, ok := s.TimeOnly(Query{Text: tc.text, Now: now}); !ok {
					t.Errorf("%q: not read as a question about a time only", tc.text)
				}
				for _, r := range res {
					if r.Score != 1 || r.Weak {
						t.Errorf("%s %q: %s scores %.2f (weak %v), want 1", m, tc.text, r.ID, r.Score, r.Weak)
					}
				}
			}
			// A time-only query within the user's own bounds.
			res, err := s.Search(ctx, Query{Text: "yesterday", Mode: m, Now: now, Until: at(-1, 12)})
			if err != nil || !slices.Equal(ids(res), []string{"y2", "y1", "wed-early"}) {
				t.Errorf("%s yesterday --until noon: %v, %v", m, ids(res), err)
			}
		}
	}
}

// TestOrderFollowsScores (item 3): the order never contradicts the scores
// shown, for plain queries, queries naming a time, and under --since and
// --until. Before: rank 1 at 0.000 above rank 2 at 0.806.
func TestOrderFollowsScores(t *testing.T) {
	f := newFixture(t)
	f.commit(wordExchanges(newRand(7), codingWords, 300, 6, 0)...)
	e := builtin(t, 0)
	s := searcher(t, f.db, e, drain(t, f.db, e))
	now := at(300)
	for _, text := range []string{"docker build cache timeout", "what did we work on 3 days ago with the webhook", "sqlite lock two weeks ago", "memory leak", "stripe"} {
		for _, m := range allModes {
			for _, q := range []Query{{}, {Until: at(150)}, {Since: at(100)}, {Since: at(50), Until: at(200)}} {
				q.Text, q.Mode, q.Now, q.Limit = text, m, now, 20
				res, err := s.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				checkOrder(t, res)
			}
		}
	}
}

// TestIdentifiers (item 4): identifiers match as wholes first, then as
// parts; an exchange's files are searchable. Before: the exchange about
// "send reset email" words outranked the one holding send_reset_email,
// and a file logged with the exchange was not found at all.
func TestIdentifiers(t *testing.T) {
	f := newFixture(t)
	f.commit(
		exchange("words", "s1", at(10), "we should send a reset email when the password expires", "yes, send the reset email then"),
		exchange("ident", "s1", at(0), "the signup tests fail", "send_reset_email raises when the template is missing"),
		exchange("camel", "s2", at(1), "crash in the mailer", "SendResetEmail panics on a nil user"),
		exchange("path", "s2", at(2), "where is the login view?", "in auth/views.py, the LoginView class"),
		exchange("pathwords", "s2", at(11), "auth views in python", "the views of the auth app"),
		withFiles("file", "s3", at(3), "tune the retry delays", "done: jitter and a cap", "internal/backoff/policy.go"),
		exchange("policy", "s3", at(12), "the retention policy", "go with 30 days"),
		exchange("code", "s3", at(4), "what does E1234 mean", "a missing migration"),
		exchange("hash", "s3", at(5), "which commit broke it", "a3f9c2e81b4d: the watcher change"),
		exchange("noise", "s3", at(13), "email the team about the reset", "sent"),
	)
	e := builtin(t, 0)
	w := drain(t, f.db, e)
	for _, s := range bothFloors(t, f, e, w) {
		for _, m := range []Mode{ModeHybrid, ModeLexical} {
			for _, tc := range []struct {
				query, first string
				also         []string // found too (as parts)
			}{
				{"send_reset_email", "ident", []string{"words"}},
				{"SendResetEmail", "camel", []string{"ident"}},
				{"auth/views.py", "path", nil},
				{"internal/backoff/policy.go", "file", nil},
				{"policy.go", "file", nil},
				{"backoff/policy.go", "file", nil},
				{"E1234", "code", nil},
				{"a3f9c2e", "hash", nil},
			} {
				res, err := s.Search(ctx, Query{Text: tc.query, Mode: m})
				if err != nil {
					t.Fatal(err)
				}
				if len(res) == 0 || res[0].ID != tc.first || res[0].Weak {
					t.Errorf("%s %q: %v, want %s first (not weak)", m, tc.query, ids(res), tc.first)
					continue
				}
				for _, id := range tc.also {
					if !slices.Contains(ids(res), id) {
						t.Errorf("%s %q: %v, want %s among them (its parts)", m, tc.query, ids(res), id)
					}
				}
				if tc.first == "file" && !slices.Equal(res[0].Files, []string{"internal/backoff/policy.go"}) {
					t.Errorf("%s %q: files %v", m, tc.query, res[0].Files)
				}
			}
		}
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed+1)) }
