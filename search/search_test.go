package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/vectors"
)

var allModes = []Mode{ModeHybrid, ModeLexical, ModeVector}

func TestSearchFilters(t *testing.T) {
	f := newFixture(t)
	kubeLog(f)
	e := builtin(t, 0)
	s := searcher(t, f.db, e, drain(t, f.db, e))

	// a1 and x3 are the same exchange: one of them is returned.
	tests := []struct {
		name string
		q    Query
		want []string // sorted; "a1|x3" stands for either
	}{
		{"no filter", Query{}, []string{"a1|x3", "a2", "b1", "c1", "x1", "x2"}},
		{"session", Query{Session: "a"}, []string{"a1", "a2"}},
		{"unknown session", Query{Session: "nope"}, nil},
		{"chain of the last session", Query{Chain: "c"}, []string{"a1", "a2", "b1", "c1"}},
		{"chain of a middle session", Query{Chain: "b"}, []string{"a1", "a2", "b1"}},
		{"chain of a session resuming nothing", Query{Chain: "x"}, []string{"x1", "x2", "x3"}},
		{"chain and a session in it", Query{Chain: "c", Session: "b"}, []string{"b1"}},
		{"chain and a session not in it", Query{Chain: "b", Session: "c"}, nil},
		{"since", Query{Since: at(48)}, []string{"c1", "x1", "x2", "x3"}},
		{"until (exclusive)", Query{Until: at(24)}, []string{"a1", "a2"}},
		{"time range", Query{Since: at(24), Until: at(72)}, []string{"b1", "c1"}},
		{"empty time range", Query{Since: at(48), Until: at(48)}, nil},
		{"chain and time", Query{Chain: "c", Since: at(1)}, []string{"a2", "b1", "c1"}},
		{"exchange type", Query{Types: []string{"exchange", "context_reset"}}, []string{"a1|x3", "a2", "b1", "c1", "x1", "x2"}},
		{"other types", Query{Types: []string{"context_reset"}}, nil},
	}
	for _, tc := range tests {
		for _, m := range allModes {
			t.Run(tc.name+"/"+m.String(), func(t *testing.T) {
				q := tc.q
				q.Text, q.Mode, q.Limit = "kubernetes", m, 50
				res, err := s.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got := ids(res)
				if slices.Contains(tc.want, "a1|x3") {
					for i, id := range got {
						if id == "a1" || id == "x3" {
							got[i] = "a1|x3"
						}
					}
				}
				if !slices.Equal(sorted(got), tc.want) {
					t.Errorf("got %v, want %v", ids(res), tc.want)
				}
				for _, r := range res {
					if !q.Since.IsZero() && r.Timestamp.Before(q.Since) || !q.Until.IsZero() && !r.Timestamp.Before(q.Until) {
						t.Errorf("%s at %s is outside [%s, %s)", r.ID, r.Timestamp, q.Since, q.Until)
					}
				}
			})
		}
	}
}

func TestSearchRanksAndFillsResults(t *testing.T) {
	f := newFixture(t)
	kubeLog(f)
	f.commit(exchange("z1", "z", at(90), "What should I cook tonight?", "Pasta with tomatoes."))
	e := builtin(t, 0)
	s := searcher(t, f.db, e, drain(t, f.db, e))

	tests := []struct {
		text string
		want string // the first result
	}{
		{"pods crashing after a deploy, liveness probes", "a2"},
		{"expired TLS certificates", "b1"},
		{"autoscaling under load", "c1"},
		{"cooking dinner tonight", "z1"},
		{"cooked", "z1"}, // stemming
	}
	for _, tc := range tests {
		for _, m := range allModes {
			t.Run(tc.text+"/"+m.String(), func(t *testing.T) {
				res, err := s.Search(ctx, Query{Text: tc.text, Mode: m})
				if err != nil {
					t.Fatal(err)
				}
				if len(res) == 0 || res[0].ID != tc.want {
					t.Fatalf("got %v, want %s first", ids(res), tc.want)
				}
				r := res[0]
				if r.SessionID == "" || r.User == "" || r.AI == "" || r.File != "log.jsonl" || r.Line == 0 || r.Timestamp.IsZero() || r.Row == 0 {
					t.Errorf("incomplete result %+v", r)
				}
				checkOrder(t, res)
			})
		}
	}
}

// checkOrder fails t unless res are in the order shown (rank.go): scores
// (rounded to ScoreStep) never increase, and at an equal score above 0 the
// newer exchange comes first.
func checkOrder(t *testing.T, res []Result) {
	t.Helper()
	for i := 1; i < len(res); i++ {
		a, b := res[i-1], res[i]
		if b.Score > a.Score {
			t.Errorf("results out of order: %s %.2f then %s %.2f", a.ID, a.Score, b.ID, b.Score)
		}
		if b.Score == a.Score && a.Score > 0 && b.Timestamp.After(a.Timestamp) {
			t.Errorf("equal scores %.2f, the older %s (%s) before the newer %s (%s)", a.Score, a.ID, a.Timestamp, b.ID, b.Timestamp)
		}
		if math.Abs(a.Score-math.Round(a.Score*100)/100) > 1e-12 {
			t.Errorf("score %v is not rounded to ScoreStep", a.Score)
		}
	}
}

func TestSearchCollapsesIdenticalExchanges(t *testing.T) {
	f := newFixture(t)
	var lines []string
	// The same exchange copied into five sessions, and one that differs
	// only in its answer.
	for i, s := range []string{"s1", "s2", "s3", "s4", "s5"} {
		lines = append(lines, exchange("dup"+s, s, at(i), "Where is the staging database password kept?", "In the vault, under staging/db."))
	}
	lines = append(lines, exchange("other", "s6", at(9), "Where is the staging database password kept?", "Ask the ops team."))
	f.commit(lines...)
	e := builtin(t, 0)
	s := searcher(t, f.db, e, drain(t, f.db, e))
	for _, m := range allModes {
		for _, limit := range []int{1, 2, 10} {
			res, err := s.Search(ctx, Query{Text: "staging database password", Mode: m, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			want := min(limit, 2)
			if len(res) != want {
				t.Fatalf("%s, limit %d: got %v, want %d results", m, limit, ids(res), want)
			}
			dups := 0
			for _, r := range res {
				if strings.HasPrefix(r.ID, "dup") {
					dups++
				}
			}
			if dups > 1 {
				t.Errorf("%s, limit %d: identical exchanges not collapsed: %v", m, limit, ids(res))
			}
		}
	}
}

// TestSearchWithoutVectors: while there is no vector space of the
// embedder's identity (never embedded, or a re-embed after an embedder
// switch in progress), hybrid search is BM25 alone, vector search finds
// only what is already embedded, and vectors of another identity are never
// used.
func TestSearchWithoutVectors(t *testing.T) {
	f := newFixture(t)
	kubeLog(f)
	old := builtin(t, 256)
	oldWorker := drain(t, f.db, old)
	lexical := func(s *Searcher) []string {
		res, err := s.Search(ctx, Query{Text: "kubernetes ingress", Mode: ModeLexical})
		if err != nil {
			t.Fatal(err)
		}
		return ids(res)
	}

	switched := builtin(t, 128)
	partial, err := embedding.New(embedding.Config{DB: f.db, Embedder: switched, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := partial.Step(ctx); err != nil { // one batch of the re-embed
		t.Fatal(err)
	}
	if st := partial.Status(); st.Vectors != 2 || st.Pending != 5 || st.Identity != "builtin:hash-v2:128#user|ai" {
		t.Fatalf("status after one batch: %+v", st)
	}

	with := func(e embed.Embedder, space func() *vectors.Space) *Searcher {
		s, err := New(Config{DB: f.db, Embedder: e, Vectors: space, Options: noFloor})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name       string
		s          *Searcher
		vectorHits int // results of a vector-only search
	}{
		{"no vector space", with(switched, nil), 0},
		{"no vector space yet", with(switched, func() *vectors.Space { return nil }), 0},
		{"empty vector space", with(switched, func() *vectors.Space { return vectors.NewSpace(vectors.SpaceIdentity(switched)) }), 0},
		{"no embedder", with(nil, oldWorker.Space), 0},
		{"space of another embedder", with(switched, oldWorker.Space), 0},
		{"re-embed in progress", with(switched, partial.Space), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := lexical(tc.s)
			if len(want) == 0 {
				t.Fatal("BM25 finds nothing")
			}
			res, err := tc.s.Search(ctx, Query{Text: "kubernetes ingress"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.vectorHits == 0 && !slices.Equal(ids(res), want) {
				t.Errorf("hybrid: got %v, want the BM25 results %v", ids(res), want)
			}
			// a1 and x3 are identical: which one is kept depends on the
			// ranking.
			canon := func(ids []string) []string {
				ids = slices.Clone(ids)
				for i, id := range ids {
					if id == "x3" {
						ids[i] = "a1"
					}
				}
				return sorted(ids)
			}
			if tc.vectorHits > 0 && !slices.Equal(canon(ids(res)), canon(want)) {
				t.Errorf("hybrid: got %v, want the BM25 results %v in some order", ids(res), want)
			}
			res, err = tc.s.Search(ctx, Query{Text: "kubernetes ingress", Mode: ModeVector})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != tc.vectorHits {
				t.Errorf("vector: got %v, want %d results", ids(res), tc.vectorHits)
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	f := newFixture(t)
	kubeLog(f)
	s := searcher(t, f.db, nil, nil)
	for _, text := range []string{"", "  \n\t"} {
		if _, err := s.Search(ctx, Query{Text: text}); !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("Search(%q): got %v, want ErrEmptyQuery", text, err)
		}
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New without an index: no error")
	}
	// Text that is nothing but FTS5 syntax is quoted, not parsed.
	for _, text := range []string{`"`, `*`, `NEAR(a b)`, `user:kubernetes`, `a AND OR NOT b`, `^x`, `(`, `-`, `'`, `{user}: x`} {
		if _, err := s.Search(ctx, Query{Text: text}); err != nil {
			t.Errorf("Search(%q): %v", text, err)
		}
	}
	if _, err := s.Search(ctx, Query{Text: "deploy", Limit: 10 * MaxLimit}); err != nil {
		t.Error(err)
	}
}

func TestMatchExpr(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"How do I deploy the ingress?", `"deploy" OR "ingress"`},
		{"Deploy deploy DEPLOY", `"deploy"`},
		{"who am I", `"who" OR "am" OR "i"`}, // only stopwords: keep them
		{"Mary's café", `"mari" OR "cafe"`},  // Snowball stems, no diacritics
		{"fooBar snake_case kebab-case", `"foobar" OR "snake" OR "case" OR "kebab"`},
		{"retries retried", `"retri"`}, // one stem
		{`user:"x" AND NEAR(y*)`, `"user" OR "near"`},
		{"can you remind me what I mentioned about the deploy in our previous conversation", `"deploy"`},
		{"v1.2.3 → 42", `"v1" OR "2" OR "3" OR "42"`},
		{"?!", ``},
		{"日本語のテキスト", `"日本 本語 語の のテ テキ キス スト"`}, // CJK: the phrase of its bigrams
		{"語", `"語"*`},
	}
	for _, tc := range tests {
		if got := matchExpr(tc.text, true); got != tc.want {
			t.Errorf("matchExpr(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
	if got := matchExpr("remind me", false); got != `"remind"` {
		t.Errorf("keeping filler words: got %s", got)
	}
	long := strings.Repeat("word ", 10) + strings.Join(strings.Fields(strings.Repeat("a1 b2 c3 d4 e5 f6 g7 h8 i9 j0 ", 20)), "x ")
	a := analyseText(long)
	if n := len(queryTerms(a.words, a.dict, true)); n > maxQueryTerms {
		t.Errorf("%d terms, want at most %d", n, maxQueryTerms)
	}
}

// TestMatchExprRunsInFTS5 checks that every MATCH expression built from
// hostile text is valid FTS5.
func TestMatchExprRunsInFTS5(t *testing.T) {
	f := newFixture(t)
	kubeLog(f)
	for _, text := range []string{`"quoted"`, `a"b`, `NOT`, `AND OR`, `col:umn`, `x* y^`, `NEAR(a, b, 3)`, `'single'`, "tab\there", "😀 emoji", "Ǆ ǅ"} {
		m := matchExpr(text, true)
		if m == "" {
			continue
		}
		if _, err := f.db.Lexical(ctx, m, [2]float64{1, 1}, index.Filter{}, 5); err != nil {
			t.Errorf("%q -> %s: %v", text, m, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range allModes {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseMode("semantic"); err == nil {
		t.Error("ParseMode(semantic): no error")
	}
}

func TestOptionsDefaults(t *testing.T) {
	e := builtin(t, 0)
	if w := (Options{}).withDefaults().vectorWeight(e); w != 0.3 {
		t.Errorf("builtin vector weight %v, want 0.3", w)
	}
	if w := (Options{}).withDefaults().vectorWeight(renamedEmbedder{e, "ollama:nomic-embed-text:768"}); w != 0.5 {
		t.Errorf("model vector weight %v, want 0.5", w)
	}
	o := Options{Fusion: FusionScore, UserWeight: 2, VectorWeight: 0.7}.withDefaults()
	if o.Fusion != FusionScore || o.UserWeight != 2 || o.AIWeight != 0 || o.VectorWeight != 0.7 || o.RRFK != DefaultOptions.RRFK || o.Depth != DefaultOptions.Depth {
		t.Errorf("withDefaults: %+v", o)
	}
}

// renamedEmbedder is an embedder under another identity.
type renamedEmbedder struct {
	embed.Embedder
	id string
}

func (r renamedEmbedder) Identity() string { return r.id }

// TestTermDocsCache: in the writing process the document counts that
// decide which common terms to leave out are cached, and dropped whenever
// the full-text index changes: the BM25 query is always the one an
// uncached (read-only) searcher builds.
func TestTermDocsCache(t *testing.T) {
	f := newFixture(t)
	var lines []string
	for i := range 10 {
		lines = append(lines, exchange(fmt.Sprintf("a%d", i), "s1", at(i), "alpha gamma", "ok"))
	}
	f.commit(append(lines, exchange("b", "s1", at(20), "beta", "ok"))...)
	drainFullText(t, f.db)
	s := searcher(t, f.db, nil, nil)
	reader, err := index.Open(filepath.Dir(f.db.Path()), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	plain := searcher(t, reader, nil, nil)

	text := analyseText("alpha beta")
	check := func(want string, alphaDocs int64) {
		t.Helper()
		for range 2 { // the second time from the cache
			if _, got, _ := s.lexicalMatch(ctx, &text, []index.Lexical{s.fts}); got != want {
				t.Fatalf("match %q, want %q", got, want)
			}
		}
		if _, got, _ := plain.lexicalMatch(ctx, &text, []index.Lexical{plain.fts}); got != want {
			t.Fatalf("read-only searcher: match %q, want %q", got, want)
		}
		s.df.mu.Lock()
		defer s.df.mu.Unlock()
		if n, ok := s.df.docs["alpha"]; !ok || n != alphaDocs {
			t.Errorf("cached count of alpha: %d (cached %v), want %d", n, ok, alphaDocs)
		}
	}
	check(`"alpha" OR "beta"`, 10)

	// alpha becomes common: in more than minCommonDocs exchanges.
	lines = lines[:0]
	for i := range minCommonDocs + 100 {
		lines = append(lines, exchange(fmt.Sprintf("c%d", i), "s2", at(100+i), fmt.Sprintf("alpha filler %d", i), "ok"))
	}
	f.commit(lines...)
	drainFullText(t, f.db)
	check(`"beta"`, minCommonDocs+110)
}

func drainFullText(t *testing.T, db *index.DB) {
	t.Helper()
	for {
		n, err := db.IndexFullText(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// TestRankDoesNotDependOnLimit: the fusion works on a fixed candidate
// depth, and the scores on a fixed pool of its candidates (up to a limit
// of scorePool/2), so a short search returns the head of a long one. The corpus
// gives each retriever far more candidates than any limit, with lists
// that disagree, where a depth tied to the limit changed the head.
func TestRankDoesNotDependOnLimit(t *testing.T) {
	f := newFixture(t)
	f.commit(wordExchanges(rand.New(rand.NewPCG(1, 2)), codingWords, 600, 7, 0)...)
	e := builtin(t, 0)
	s := searcher(t, f.db, e, drain(t, f.db, e))
	for _, text := range []string{"docker build cache timeout", "stripe webhook retry", "sqlite lock latency in the watcher", "memory"} {
		for _, m := range allModes {
			long, err := s.Search(ctx, Query{Text: text, Mode: m, Limit: scorePool / 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int{1, 5, 20} {
				short, err := s.Search(ctx, Query{Text: text, Mode: m, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				if len(short) != min(limit, len(long)) || !slices.Equal(ids(short), ids(long[:len(short)])) {
					t.Errorf("%q %s: limit %d gives %v, the head of limit 100 is %v", text, m, limit, ids(short), ids(long[:min(limit, len(long))]))
				}
			}
		}
	}
}

// TestScoresAndFloor: scores are relevance estimates in [0, 1]; with the
// default floor a query about nothing in the history finds nothing, a
// real one its exchange; MinScore moves the floor.
func TestScoresAndFloor(t *testing.T) {
	f := newFixture(t)
	kubeLog(f)
	e := builtin(t, 0)
	w := drain(t, f.db, e)
	s, err := New(Config{DB: f.db, Embedder: e, Vectors: w.Space})
	if err != nil {
		t.Fatal(err)
	}
	zero, one := 0.0, 1.0
	for _, m := range allModes {
		for _, text := range []string{"quantum entanglement photosynthesis", "medieval falconry jesses"} {
			// Vector mode has no default floor (see Floor): give it one.
			var floor *float64
			if m == ModeVector {
				floor = &DefaultOptions.MinScore
			}
			if res, err := s.Search(ctx, Query{Text: text, Mode: m, MinScore: floor}); err != nil || len(res) != 0 {
				t.Errorf("%s %q: %v, %v; want nothing", m, text, ids(res), err)
			}
		}
		if f := s.Floor(Query{Mode: m}); (m == ModeVector) != (f == 0) {
			t.Errorf("%s: default floor %v", m, f)
		}
		res, err := s.Search(ctx, Query{Text: "expired TLS certificates", Mode: m})
		if err != nil || len(res) == 0 || res[0].ID != "b1" {
			t.Fatalf("%s: %v, %v; want b1 first", m, ids(res), err)
		}
		all, err := s.Search(ctx, Query{Text: "expired TLS certificates", Mode: m, MinScore: &zero})
		if err != nil || len(all) < len(res) {
			t.Fatalf("%s, no floor: %v, %v; want at least %v", m, ids(all), err, ids(res))
		}
		for _, r := range all {
			if r.Score < 0 || r.Score > 1 {
				t.Errorf("%s: score %v out of [0, 1]", m, r.Score)
			}
		}
		if top, err := s.Search(ctx, Query{Text: "expired TLS certificates", Mode: m, MinScore: &one}); err != nil || len(top) >= len(all) {
			t.Errorf("%s, floor 1: %v, %v; want fewer than %v", m, ids(top), err, ids(all))
		}
	}
}

// TestVectorsMissing: a query answered without vectors says why, for each
// state of the vector side, and says nothing once the space is searchable.
func TestVectorsMissing(t *testing.T) {
	f := newFixture(t)
	f.commit(exchange("a", "s", at(0), "deploy the service", "ok"))
	e := builtin(t, 64)
	other := builtin(t, 32)
	loaded := drain(t, f.db, e).Space()
	empty := vectors.NewSpace(vectors.SpaceIdentity(e))
	for _, tc := range []struct {
		name  string
		emb   embed.Embedder
		space func() *vectors.Space
		want  string // a word of the reason; "" for none
	}{
		{"no embedder", nil, nil, "no embedder"},
		{"loading", e, func() *vectors.Space { return nil }, "loading"},
		{"server not reached", unreached{e}, func() *vectors.Space { return nil }, "server has not been reached"},
		{"new embedder being built", other, func() *vectors.Space { return loaded }, "being built"},
		{"no vector yet", e, func() *vectors.Space { return empty }, "no exchange has a vector"},
		{"searchable", e, func() *vectors.Space { return loaded }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{DB: f.db, Embedder: tc.emb, Vectors: tc.space})
			if err != nil {
				t.Fatal(err)
			}
			got := s.VectorsMissing()
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("VectorsMissing() = %q, want one saying %q", got, tc.want)
			}
		})
	}
}

// TestAnswerVectorsMissingOneMoment: the space (or a remote embedder's
// dimension) changes while a query runs: a daemon that just started
// finishes loading. The answer's reason is read with the space its vector
// side used, so a vector query never finds nothing and gives no reason
// (the failure of TestRemoteEmbedderDown in CI: the space was nil when
// the query was to be embedded and loaded when the reason was read).
func TestAnswerVectorsMissingOneMoment(t *testing.T) {
	f := newFixture(t)
	f.commit(exchange("a", "s", at(0), "deploy the service to kubernetes", "use helm"))
	e := builtin(t, 64)
	loaded := drain(t, f.db, e).Space()
	for after := 0; after <= 3; after++ {
		for _, m := range []Mode{ModeVector, ModeHybrid} {
			t.Run(fmt.Sprintf("loaded after %d reads, %s", after, m), func(t *testing.T) {
				var reads atomic.Int64
				space := func() *vectors.Space {
					if reads.Add(1) <= int64(after) {
						return nil
					}
					return loaded
				}
				s, err := New(Config{DB: f.db, Embedder: e, Vectors: space, Options: noFloor})
				if err != nil {
					t.Fatal(err)
				}
				a, err := s.Answer(ctx, Query{Text: "kubernetes deploy", Mode: m})
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case after == 0 && (len(a.Results) == 0 || a.VectorsMissing != ""):
					t.Fatalf("loaded from the start: %d results, reason %q; want the exchange and no reason", len(a.Results), a.VectorsMissing)
				case after > 0 && !strings.Contains(a.VectorsMissing, "loading"):
					t.Fatalf("loading when the query began: %d results, reason %q; want it to say the space was loading", len(a.Results), a.VectorsMissing)
				case len(a.Results) == 0 && a.VectorsMissing == "":
					t.Fatal("no result and no reason")
				}
				if r := reads.Load(); r != 1 {
					t.Errorf("the space was read %d times by one query, want once", r)
				}
			})
		}
	}
}

// failingEmbedder embeds texts as its inner embedder does, and fails to
// embed queries: a remote embedder that went down after the vectors
// were built.
type failingEmbedder struct{ embed.Embedder }

func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("connect: connection refused")
}

// TestAnswerEmbedderDown: a hybrid query whose embedding fails is
// answered by BM25 alone and says so (before, only the log did); a
// vector query fails with the embedder's error.
func TestAnswerEmbedderDown(t *testing.T) {
	f := newFixture(t)
	f.commit(exchange("a", "s", at(0), "deploy the service to kubernetes", "use helm"))
	e := builtin(t, 64)
	w := drain(t, f.db, e)
	s, err := New(Config{DB: f.db, Embedder: failingEmbedder{e}, Vectors: w.Space, Options: noFloor})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Answer(ctx, Query{Text: "kubernetes deploy", Mode: ModeHybrid})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Results) != 1 || !strings.Contains(a.VectorsMissing, "the query could not be embedded (connect: connection refused): lexical (BM25) ranking only") {
		t.Fatalf("hybrid with the embedder down: %d results, reason %q; want the BM25 result and the embedder's error", len(a.Results), a.VectorsMissing)
	}
	if a, err := s.Answer(ctx, Query{Text: "kubernetes deploy", Mode: ModeLexical}); err != nil || a.VectorsMissing != "" || len(a.Results) != 1 {
		t.Fatalf("bm25 with the embedder down: %v %d %q", err, len(a.Results), a.VectorsMissing)
	}
	if _, err := s.Answer(ctx, Query{Text: "kubernetes deploy", Mode: ModeVector}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("vector with the embedder down: %v, want the embedder's error", err)
	}
}

// unreached is a remote embedder that has not reached its server: its
// dimension is not known yet.
type unreached struct{ embed.Embedder }

func (unreached) Dimension() int { return 0 }

// TestRankRows: without a floor, RankRows lists the candidates Search
// scores, without reading texts, in the fusion's order: Search's rows are
// among them (identical texts collapsed, the first kept by Search's order
// of scores), for every mode, limit and session restriction (Sessions as
// the chain Chain names).
func TestRankRows(t *testing.T) {
	f := newFixture(t)
	// Every 40th exchange is followed by one of identical texts (collapsed alike).
	f.commit(wordExchanges(rand.New(rand.NewPCG(5, 6)), codingWords[:21], 400, 5, 40)...)
	e := builtin(t, 0)
	s := searcher(t, f.db, e, drain(t, f.db, e))
	chain, err := f.db.Chain(ctx, "s1", -1)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	dups := 0
	for _, text := range []string{"docker build cache timeout", "stripe webhook retry", "the same docker question", "sqlite"} {
		for _, m := range allModes {
			for _, limit := range []int{5, 10, 200} {
				for _, restrict := range []Query{{}, {Chain: "s1"}, {Sessions: chain}} {
					q := Query{Text: text, Mode: m, Limit: limit, MinScore: &zero, Chain: restrict.Chain, Sessions: restrict.Sessions}
					full, err := s.Search(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					rows, err := s.RankRows(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if len(rows) > poolSize(limit) {
						t.Errorf("%q %s limit %d: %d rows, more than the pool of %d", text, m, limit, len(rows), poolSize(limit))
					}
					for _, r := range full {
						if !slices.Contains(rows, r.Row) {
							t.Errorf("%q %s limit %d chain %q sessions %v: Search's %s (row %d) is not among RankRows' %v", text, m, limit, restrict.Chain, restrict.Sessions, r.ID, r.Row, rows)
						}
					}
					evs, err := f.db.ExchangesByRows(ctx, rows)
					if err != nil {
						t.Fatal(err)
					}
					seen := map[[2]string]bool{}
					for _, r := range rows {
						e := evs[r]
						if k := [2]string{e.User, e.AI}; seen[k] {
							dups++
						} else {
							seen[k] = true
						}
					}
				}
			}
		}
	}
	if dups == 0 {
		t.Error("no identical texts were ranked: the fixture does not test collapsing")
	}
	if _, err := s.RankRows(ctx, Query{Text: "sqlite"}); err == nil {
		t.Error("RankRows with the default floor: no error")
	}
	if _, err := s.Search(ctx, Query{Text: "sqlite", Chain: "s1", Sessions: chain}); err == nil {
		t.Error("Sessions with Chain: no error")
	}
}

// TestFloorGate: the default floor is a gate on the query: once one result
// reaches it, weaker results down to tailShare of it are kept; a query
// none of whose results reaches it returns its best few, marked weak (and
// nothing when nothing matches at all); an explicit MinScore cuts every
// result; and the gate does not depend on the limit.
func TestFloorGate(t *testing.T) {
	f := newFixture(t)
	f.commit(
		exchange("strong", "s", at(0), "rotate the signing keys of the webhook endpoint", "done"),
		exchange("weak", "s", at(1), "the webhook fired twice", "ok"),
		exchange("x1", "s", at(2), "bump the go version", "ok"),
		exchange("x2", "s", at(3), "fix the flaky upload test", "ok"),
		exchange("x3", "s", at(4), "add dark mode", "ok"),
		exchange("x4", "s", at(5), "profile the slow endpoint", "ok"),
	)
	s, err := New(Config{DB: f.db})
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	score := func(q, id string) float64 {
		res, err := s.Search(ctx, Query{Text: q, Mode: ModeLexical, MinScore: &zero})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.ID == id {
				return r.Score
			}
		}
		return 0
	}
	const q = "rotate signing keys webhook"
	gate := DefaultOptions.MinScore
	if st, wk := score(q, "strong"), score(q, "weak"); st < gate || wk >= gate || wk < gate*tailShare {
		t.Fatalf("fixture: strong %.3f, weak %.3f; want strong >= %.2f > weak >= %.2f", st, wk, gate, gate*tailShare)
	}
	for _, limit := range []int{1, 2, 10} {
		res, err := s.Search(ctx, Query{Text: q, Mode: ModeLexical, Limit: limit})
		want := []string{"strong", "weak"}[:min(limit, 2)]
		if err != nil || !slices.Equal(ids(res), want) {
			t.Errorf("default floor, limit %d: %v, %v; want %v", limit, ids(res), err, want)
		}
	}
	if res, err := s.Search(ctx, Query{Text: q, Mode: ModeLexical, MinScore: &gate}); err != nil || !slices.Equal(ids(res), []string{"strong"}) {
		t.Errorf("explicit floor %.2f: %v, %v; want only strong", gate, ids(res), err)
	}
	// Only the weak one matches: it is under the gate, so nothing.
	const weakOnly = "twice quantum entanglement photosynthesis"
	if wk := score(weakOnly, "weak"); wk >= gate || wk < gate*tailShare {
		t.Fatalf("fixture: weak %.3f for the weak query, want in [%.2f, %.2f)", wk, gate*tailShare, gate)
	}
	for _, limit := range []int{1, 10} {
		res, err := s.Search(ctx, Query{Text: weakOnly, Mode: ModeLexical, Limit: limit})
		if err != nil || !slices.Equal(ids(res), []string{"weak"}) || !res[0].Weak {
			t.Errorf("no result reaches the gate, limit %d: %+v, %v; want only weak, marked weak", limit, res, err)
		}
	}
	if res, err := s.Search(ctx, Query{Text: weakOnly, Mode: ModeLexical, MinScore: &gate}); err != nil || len(res) != 0 {
		t.Errorf("no result reaches an explicit floor: %v, %v; want nothing (no weak matches)", ids(res), err)
	}
	if res, err := s.Search(ctx, Query{Text: "quantum entanglement photosynthesis", Mode: ModeLexical}); err != nil || len(res) != 0 {
		t.Errorf("nothing matches: %v, %v; want nothing", ids(res), err)
	}
	res, err := s.Search(ctx, Query{Text: q, Mode: ModeLexical})
	if err != nil || len(res) == 0 || res[0].Weak {
		t.Errorf("the gate open: %+v, %v; want results not marked weak", res, err)
	}
}

// TestMoreSpacesMax: with further vector spaces (Config.More, several
// vectors per exchange), an exchange's similarity is the largest over the
// spaces, and an exchange found only through a further space is found.
func TestMoreSpacesMax(t *testing.T) {
	f := newFixture(t)
	f.commit(
		exchange("a", "s", at(0), "what broke?", "the kubernetes liveness probe killed the pod during startup"),
		exchange("b", "s", at(1), "bump the go version", "done"),
		exchange("c", "s", at(2), "liveness probe tuning", "raised the initial delay"),
	)
	base := builtin(t, 256)
	user, err := vectors.WithTextRecipe(base, vectors.TextUser)
	if err != nil {
		t.Fatal(err)
	}
	both, err := vectors.WithTextRecipe(base, vectors.TextUserAI)
	if err != nil {
		t.Fatal(err)
	}
	wu := drain(t, f.db, user)
	wb := drain(t, f.db, both) // prunes the first space's rows in the index; its memory stays
	q := Query{Text: "liveness probe killed the pod", Mode: ModeVector, Limit: 10}
	cosines := func(cfg Config) map[string]float64 {
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, r := range res {
			out[r.ID] = r.Cosine
		}
		return out
	}
	cu := cosines(Config{DB: f.db, Embedder: user, Vectors: wu.Space, Options: noFloor})
	cb := cosines(Config{DB: f.db, Embedder: both, Vectors: wb.Space, Options: noFloor})
	cm := cosines(Config{DB: f.db, Embedder: user, Vectors: wu.Space, More: []func() *vectors.Space{wb.Space}, Options: noFloor})
	if cb["a"] <= cu["a"] {
		t.Fatalf("fixture: a's cosine %v with its answer, %v without; want higher with", cb["a"], cu["a"])
	}
	for _, id := range []string{"a", "b", "c"} {
		if want := max(cu[id], cb[id]); math.Abs(cm[id]-want) > 1e-9 {
			t.Errorf("%s: cosine %v with both spaces, want the larger of %v and %v", id, cm[id], cu[id], cb[id])
		}
	}
}

// codingWords are the words of wordExchanges' random texts.
var codingWords = strings.Fields(`deploy pipeline cache build docker image layer timeout retry webhook
	stripe payment invoice database migration index query latency sqlite lock watcher
	token budget resume session search vector fusion ranking stemmer kernel memory leak`)

// wordExchanges returns n exchanges x0..x(n-1) of random words, spread
// over sessions s0..s(sessions-1), one an hour. With dupEvery > 0, every
// dupEvery-th is followed by an exchange dup<i> of session s1 holding the
// same texts each time.
func wordExchanges(rng *rand.Rand, words []string, n, sessions, dupEvery int) []string {
	pick := func(k int) string {
		var b []string
		for range k {
			b = append(b, words[rng.IntN(len(words))])
		}
		return strings.Join(b, " ")
	}
	var lines []string
	for i := range n {
		lines = append(lines, exchange(fmt.Sprintf("x%d", i), fmt.Sprintf("s%d", i%sessions), at(i), pick(3+rng.IntN(8)), pick(5+rng.IntN(30))))
		if dupEvery > 0 && i%dupEvery == 0 {
			lines = append(lines, exchange(fmt.Sprintf("dup%d", i), "s1", at(i), "the same docker question", "the same answer"))
		}
	}
	return lines
}
