package search

import (
	"slices"
	"testing"
	"time"

	"github.com/praxis-os/continuity/internal/indextest"
)

// TestNeighbourContext (issue 32, item 1): the exchange that holds a
// decision ("go with it" / "Done: Postgres 16") is found by the words of
// the question asked just before it in its session, as a low-weight field:
// below the question itself, and never as its own text. The field is read
// from the session as it is now: once another exchange comes between them,
// the decision's neighbour is that one, and the question's words no longer
// find it; with the field off, they never did.
func TestNeighbourContext(t *testing.T) {
	f := newFixture(t)
	t0 := indextest.At(0)
	f.commit(
		exchange("q", "s1", t0, "we need somewhere to store user accounts and sessions. Options: Postgres, MySQL or SQLite?", "SQLite for one server, Postgres for several."),
		exchange("d", "s1", t0.Add(2*time.Minute), "go with it, the multi server one", "Done: we use Postgres 16 with the pgx driver and migrations under db/migrations."),
		exchange("x", "s2", t0.Add(time.Hour), "what color should the login button be", "The brand blue #1a73e8."),
	)
	zero := 0.0
	query := Query{Text: "where do we keep user accounts", Mode: ModeLexical, MinScore: &zero}
	search := func(nb float64) []Result {
		t.Helper()
		s, err := New(Config{DB: f.db, Options: Options{NeighbourLexical: nb}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Search(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := search(0.5)
	if rq, rd := rankOf(res, "q"), rankOf(res, "d"); rq != 0 || rd != 1 {
		t.Fatalf("with neighbours: %v; want q first, then d (found by its neighbour's words)", ids(res))
	}
	if d := res[1]; d.User != "go with it, the multi server one" || d.Score >= res[0].Score {
		t.Errorf("d shown as %q scoring %.2f (q %.2f): want its own text, under the question", d.User, d.Score, res[0].Score)
	}
	// Resume ranks with RankRows: the same fusion, the same context.
	s, err := New(Config{DB: f.db, Options: Options{NeighbourLexical: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.RankRows(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rows, res[1].Row) {
		t.Errorf("RankRows %v: want d's row %d (resume --query ranks with the neighbours too)", rows, res[1].Row)
	}
	if res := search(-1); rankOf(res, "d") >= 0 {
		t.Errorf("neighbours off: %v; want d not found (no word of the query)", ids(res))
	}
	// An exchange logged between them: d's neighbour is now that one.
	f.commit(exchange("m", "s1", t0.Add(time.Minute), "now fix the lint warnings", "Fixed 12 golangci-lint warnings."))
	res = search(0.5)
	if rankOf(res, "d") >= 0 {
		t.Errorf("after an exchange came between q and d: %v; want d not found by q's words", ids(res))
	}
	if rankOf(res, "m") < 0 {
		t.Errorf("after an exchange came between q and d: %v; want m, q's neighbour now, found", ids(res))
	}
}

// TestNeighboursFromEnv: $CONTINUITY_SEARCH_NEIGHBOURS turns the field on
// for searchers whose options leave it alone, and a bad value is an error.
func TestNeighboursFromEnv(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		env    string
		opts   Options
		lw, vw float64
		bad    bool
	}{
		{"", Options{}, DefaultNeighbourLexical, DefaultNeighbourVector, false},
		{"0.3", Options{}, 0.3, 0.3, false},
		{"0.5,0", Options{}, 0.5, -1, false},
		{"0.5", Options{NeighbourLexical: 0.2}, 0.2, DefaultNeighbourVector, false},
		{"2", Options{}, 0, 0, true},
		{"a,b", Options{}, 0, 0, true},
	} {
		t.Setenv(EnvNeighbours, tc.env)
		s, err := New(Config{DB: f.db, Options: tc.opts})
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.env)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.env, err)
		}
		if s.opts.NeighbourLexical != tc.lw || s.opts.NeighbourVector != tc.vw {
			t.Errorf("%q %+v: weights %v/%v, want %v/%v", tc.env, tc.opts, s.opts.NeighbourLexical, s.opts.NeighbourVector, tc.lw, tc.vw)
		}
	}
}
