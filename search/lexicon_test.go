package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/index"
)

// lexWords are the words of the exactness tests' texts: a few very common
// ones (so that FTS5's IDF floor and dropCommon come into play), many
// rarer ones, inflections that share a stem, capitals, diacritics and CJK
// (which FTS5 answers: not single index terms).
var lexWords = func() []string {
	ws := strings.Fields(`the the the the and and of build build builds building deploy deployed deploying
		cache caching cached docker image layer timeout timeouts retry retried webhook stripe payment
		invoice database migration migrations index indexes query queries latency sqlite lock locks
		watcher token budget resume resumed session sessions search vector fusion ranking stemmer
		kernel memory leak Leak LEAK café naïve résumé Ångström 東京 日本語 データ`)
	for i := range 300 {
		ws = append(ws, fmt.Sprintf("rare%d", i))
	}
	return ws
}()

// lexCorpus returns n exchanges of random lexWords (Zipf-like: the first
// words far more often), over sessions s0..s(sessions-1), one an hour
// from hour first, with a resume link s(k+1) -> s(k) for k < 4.
func lexCorpus(rng *rand.Rand, first, n, sessions int) []string {
	z := rand.NewZipf(rng, 1.2, 3, uint64(len(lexWords)-1))
	pick := func(k int) string {
		var b []string
		for range k {
			b = append(b, lexWords[z.Uint64()])
		}
		return strings.Join(b, " ")
	}
	var lines []string
	for i := first; i < first+n; i++ {
		lines = append(lines, exchange(fmt.Sprintf("x%d", i), fmt.Sprintf("s%d", i%sessions), at(i), pick(1+rng.IntN(12)), pick(rng.IntN(40))))
		if i == first {
			for k := range min(4, sessions-1) {
				lines = append(lines, resume(fmt.Sprintf("s%d", k), fmt.Sprintf("s%d", k+1), at(i)))
			}
		}
	}
	return lines
}

// lexQuery is a random query of 1 to 6 words, sometimes with a word no
// exchange holds or one repeated.
func lexQuery(rng *rand.Rand) string {
	var ws []string
	for range 1 + rng.IntN(6) {
		ws = append(ws, lexWords[rng.IntN(len(lexWords))])
	}
	switch rng.IntN(6) {
	case 0:
		ws = append(ws, "nowhere")
	case 1:
		ws = append(ws, ws[0])
	}
	return strings.Join(ws, " ")
}

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
		{Since: at(40)},
		{Until: at(90)},
		{Since: at(30), Until: at(200), Sessions: []string{"s2", "s6"}},
		{Types: []string{"exchange"}},
		{Types: []string{"note"}},
	}
}

// checkLexiconExact runs random queries × filters × weights × limits
// through the engine and through FTS5 (index.DB.Lexical) and fails on
// any difference of rows, order or score.
func checkLexiconExact(t *testing.T, db *index.DB, l *Lexicon, rng *rand.Rand, queries int) {
	t.Helper()
	lv := l.view(ctx)
	if lv.st == nil {
		t.Fatal("the engine is not current after a catch-up")
	}
	defer lv.release()
	filters := lexFilters(t, db)
	compared := 0
	for q := range queries {
		text := lexQuery(rng)
		terms := indexTerms(queryTerms(text, true))
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

func newTestLexicon(t *testing.T, db *index.DB) *Lexicon {
	t.Helper()
	l, err := NewLexicon(LexiconConfig{DB: db})
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
	f := newFixture(t)
	f.commit(lexCorpus(rng, 0, 1500, 9)...)
	l := newTestLexicon(t, f.db)
	if err := l.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	checkLexiconExact(t, f.db, l, rng, 300)

	// Appends: a search catches the engine up itself, as FTS5 does.
	f.commit(lexCorpus(rng, 1500, 300, 9)...)
	checkLexiconExact(t, f.db, l, rng, 200)

	// Forget: the engine is stale at once (FTS5 answers), and built again.
	if _, err := f.db.DeleteSession(ctx, "s3"); err != nil {
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
	checkLexiconExact(t, f.db, l, rng, 200)

	// Restart: the engine opens from its files.
	f.commit(lexCorpus(rng, 1800, 100, 9)...)
	if err := l.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkPrivate(t, LexiconDir(f.db))
	l2 := newTestLexicon(t, f.db)
	if err := l2.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if st := l2.Status(ctx); st.State != "ready" || st.Docs != 1900-200-11 {
		t.Fatalf("after a restart: %+v", st)
	}
	checkLexiconExact(t, f.db, l2, rng, 200)
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

// TestSearchWithLexicon: Search gives the same results with the engine as
// without, in every mode, for plain words and for queries it leaves to
// FTS5 (CJK); and while the engine lags too far, FTS5 answers.
func TestSearchWithLexicon(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	f := newFixture(t)
	f.commit(lexCorpus(rng, 0, 800, 6)...)
	drainFullText(t, f.db) // the counts of plain's first query are read before Lexical catches FTS5 up
	e := builtin(t, 0)
	w := drain(t, f.db, e)
	l := newTestLexicon(t, f.db)
	if err := l.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	plain := searcher(t, f.db, e, w)
	withLex, err := New(Config{DB: f.db, Embedder: e, Vectors: w.Space, Options: noFloor, Lexicon: l})
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{"東京 cache", "データ", "two weeks ago docker"}
	for range 60 {
		queries = append(queries, lexQuery(rng))
	}
	for _, text := range queries {
		for _, q := range []Query{
			{Text: text, Mode: ModeLexical, Limit: 20},
			{Text: text, Limit: 20},
			{Text: text, Chain: "s4", Limit: 50},
			{Text: text, Since: at(100), Until: at(500), Mode: ModeLexical},
		} {
			want, err := plain.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := withLex.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("%+v:\nwith the engine %v\nwith FTS5       %v", q, ids(got), ids(want))
			}
			for i := range got {
				if got[i].Score != want[i].Score || got[i].Fused != want[i].Fused {
					t.Fatalf("%+v: result %d scores %v/%v with the engine, %v/%v with FTS5", q, i, got[i].Score, got[i].Fused, want[i].Score, want[i].Fused)
				}
			}
		}
	}
}

// TestLexiconLifecycle: behind by more than a search catches
// up, the engine is not used; Run catches up and flushes in the
// background; Drop removes its files and holds it closed until Resume.
func TestLexiconLifecycle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	f := newFixture(t)
	f.commit(lexCorpus(rng, 0, 200, 4)...)
	l := newTestLexicon(t, f.db)
	if err := l.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	f.commit(lexCorpus(rng, 200, lexSyncLag+10, 4)...)
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
	drainFullText(t, f.db) // FTS5 too lags by more than a search catches up
	checkLexiconExact(t, f.db, l, rng, 50)

	if err := l.Drop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(LexiconDir(f.db)); !os.IsNotExist(err) {
		t.Fatalf("Drop left %s: %v", LexiconDir(f.db), err)
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
		err := os.RemoveAll(LexiconDir(f.db))
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
		_, err := os.Stat(filepath.Join(LexiconDir(f.db)))
		if st := l.Status(ctx); err == nil && st.State == "ready" && st.Docs == 200+lexSyncLag+10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run did not rebuild a deleted folder: %+v", l.Status(ctx))
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkLexiconExact(t, f.db, l, rng, 20)
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
func stepped(t *testing.T, l *Lexicon) {
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
