package lexicon

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/indextest"
)

// lexFilters are the filters the exactness tests try.
func lexFilters(t *testing.T, db *index.DB) []index.Filter {
	chain, err := db.Chain(ctx, "s4", -1)
	if err != nil {
		t.Fatal(err)
	}
	return []index.Filter{
		{},
		{Sessions: []string{"s3"}},
		{Sessions: chain},
		{Sessions: []string{"s1", "s5", "nosuch"}},
		{Sessions: []string{}},
		{Since: indextest.At(40)},
		{Until: indextest.At(90)},
		{Since: indextest.At(30), Until: indextest.At(200), Sessions: []string{"s2", "s6"}},
		{Types: []string{"exchange"}},
		{Types: []string{"note"}},
	}
}

// checkLexiconExact runs random queries × filters × weights × limits
// through the engine and through FTS5 (index.DB.Lexical) and fails on
// any difference of rows, order or score.
func checkLexiconExact(t *testing.T, db *index.DB, l *Engine, rng *rand.Rand, queries int) {
	t.Helper()
	lv := l.view(ctx)
	if lv.st == nil {
		t.Fatal("the engine is not current after a catch-up")
	}
	defer lv.release()
	filters := lexFilters(t, db)
	compared := 0
	for q := range queries {
		text := indextest.Query(rng)
		terms := plainTerms(text)
		keys, ok := singleTerms(terms)
		if !ok {
			continue // CJK: FTS5 answers
		}
		f := filters[q%len(filters)]
		w := [][2]float64{{5, 1}, {1, 1}, {}, {0.5, 2}}[rng.IntN(4)]
		limit := []int{200, 10, 0, 1}[rng.IntN(4)]
		want, err := db.Lexical(ctx, analyze.MatchAny(terms), w, f, limit)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := lv.search(keys, w, f, limit)
		if err != nil || !ok {
			t.Fatalf("%q %+v: engine: ok %v, %v", text, f, ok, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q (terms %q) filter %+v weights %v limit %d:\nengine %v\nFTS5   %v", text, keys, f, w, limit, first8(got), first8(want))
		}
		// The documents counts dropCommon uses.
		docs, total, err := lv.docFreq(keys)
		if err != nil {
			t.Fatal(err)
		}
		wd, wt, err := db.TermDocs(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if total != wt || !mapsEqual(docs, wd) {
			t.Fatalf("%q: engine counts %v of %d, FTS5 %v of %d", text, docs, total, wd, wt)
		}
		compared++
	}
	if compared < queries/2 {
		t.Fatalf("only %d of %d queries were plain words", compared, queries)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func first8[T any](s []T) []T { return s[:min(len(s), 8)] }

func newTestLexicon(t *testing.T, db *index.DB) *Engine {
	t.Helper()
	l, err := New(Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestLexiconMatchesFTS5: the engine answers as FTS5 does, on a real index,
// as it is built, after appends (a search catches it up), after a forget
// (rebuilt), and after a restart from its files.
func TestLexiconMatchesFTS5(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	f := indextest.New(t)
	f.Commit(indextest.Corpus(rng, 0, 1500, 9)...)
	l := newTestLexicon(t, f.DB)
	if err := l.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	checkLexiconExact(t, f.DB, l, rng, 300)

	// Appends: a search catches the engine up itself, as FTS5 does.
	f.Commit(indextest.Corpus(rng, 1500, 300, 9)...)
	checkLexiconExact(t, f.DB, l, rng, 200)

	// Forget: the engine is stale at once (FTS5 answers), and built again.
	if _, err := f.DB.DeleteSession(ctx, "s3"); err != nil {
		t.Fatal(err)
	}
	if lv := l.view(ctx); lv.st != nil {
		lv.release()
		t.Fatal("the engine is used after a forget")
	}
	if err := l.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if st := l.Status(ctx); st.State != "ready" || st.Docs != 1800-200 {
		t.Fatalf("after the forget and a catch-up: %+v", st)
	}
	checkLexiconExact(t, f.DB, l, rng, 200)

	// Restart: the engine opens from its files.
	f.Commit(indextest.Corpus(rng, 1800, 100, 9)...)
	if err := l.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkPrivate(t, Dir(f.DB))
	l2 := newTestLexicon(t, f.DB)
	if err := l2.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if st := l2.Status(ctx); st.State != "ready" || st.Docs != 1900-200-11 {
		t.Fatalf("after a restart: %+v", st)
	}
	checkLexiconExact(t, f.DB, l2, rng, 200)
}

// checkPrivate fails unless dir is 0700 and its files 0600.
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLexiconLifecycle: behind by more than a search catches
// up, the engine is not used; Run catches up and flushes in the
// background; Drop removes its files and holds it closed until Resume.
func TestLexiconLifecycle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	f := indextest.New(t)
	f.Commit(indextest.Corpus(rng, 0, 200, 4)...)
	l := newTestLexicon(t, f.DB)
	if err := l.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	f.Commit(indextest.Corpus(rng, 200, lexSyncLag+10, 4)...)
	if lv := l.view(ctx); lv.st != nil {
		lv.release()
		t.Fatal("the engine is used while it lags by more than lexSyncLag events")
	}
	if st := l.Status(ctx); st.State != "building" || st.Behind <= lexSyncLag {
		t.Fatalf("status %+v", st)
	}

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- l.Run(runCtx) }()
	stopped := false
	t.Cleanup(func() { // before the index closes
		if !stopped {
			cancel()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for l.Status(ctx).State != "ready" {
		if time.Now().After(deadline) {
			t.Fatalf("Run did not catch up: %+v", l.Status(ctx))
		}
		time.Sleep(20 * time.Millisecond)
	}
	drainFullText(t, f.DB) // FTS5 too lags by more than a search catches up
	checkLexiconExact(t, f.DB, l, rng, 50)

	if err := l.Drop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(Dir(f.DB)); !os.IsNotExist(err) {
		t.Fatalf("Drop left %s: %v", Dir(f.DB), err)
	}
	stepped(t, l)
	if st := l.Status(ctx); st.State != "dropped" {
		t.Fatalf("after Drop: %+v", st)
	}
	l.Resume()
	deadline = time.Now().Add(30 * time.Second) // each phase its own: a loaded machine builds slowly
	for l.Status(ctx).State != "ready" {
		if time.Now().After(deadline) {
			t.Fatalf("Run did not rebuild after Resume: %+v", l.Status(ctx))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Its folder deleted under it (rm -r): it is built again. The engine
	// may be writing a segment into it meanwhile (a merge after the
	// rebuild): then rm -r finds the folder not empty, and is run again,
	// as a user would.
	for try := 0; ; try++ {
		err := os.RemoveAll(Dir(f.DB))
		if err == nil {
			break
		}
		if try == 50 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	l.Notify()
	deadline = time.Now().Add(30 * time.Second)
	for {
		_, err := os.Stat(filepath.Join(Dir(f.DB)))
		if st := l.Status(ctx); err == nil && st.State == "ready" && st.Docs == 200+lexSyncLag+10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run did not rebuild a deleted folder: %+v", l.Status(ctx))
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkLexiconExact(t, f.DB, l, rng, 20)
	cancel()
	stopped = true
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := l.Status(ctx); st.State != "closed" {
		t.Fatalf("after Run: %+v", st)
	}
}

// stepped returns once Run has made a whole step after the call: Run takes
// a kick only between steps, so when a second kick, sent after the first
// was taken, is taken too, the step the first one started has ended.
func stepped(t *testing.T, l *Engine) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for range 2 {
		l.Notify()
		for len(l.kick) > 0 {
			if time.Now().After(deadline) {
				t.Fatal("Run took no kick in 30 s")
			}
			time.Sleep(time.Millisecond)
		}
	}
}

var ctx = context.Background()

// drainFullText brings FTS5 up to date.
func drainFullText(t *testing.T, db *index.DB) {
	t.Helper()
	if err := db.DrainFullText(ctx); err != nil {
		t.Fatal(err)
	}
}

// plainTerms are the index terms of text's words, without repeats, as
// search gives them (its queryTerms and indexTerms, filler words kept).
func plainTerms(text string) []analyze.Term {
	var out []analyze.Term
	seen := map[string]bool{}
	for _, w := range analyze.Words(text) {
		for _, t := range analyze.WordTerms(w) {
			if !seen[t.Expr] {
				seen[t.Expr] = true
				out = append(out, t)
			}
		}
	}
	return out
}
