package embedding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/internal/indextest"
	"github.com/praxis-os/continuity/vectors"
)

// flaky is an embedder that fails while failures > 0 (one failure per
// call), and rejects with HTTP 400 any batch holding a text with poison.
type flaky struct {
	embed.Embedder
	mu       sync.Mutex
	failures int
	poison   string
	calls    int
}

func (f *flaky) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls++
	if f.failures > 0 {
		f.failures--
		f.mu.Unlock()
		return nil, fmt.Errorf("dial tcp 127.0.0.1:11434: %w", embed.ErrUnavailable)
	}
	f.mu.Unlock()
	for _, t := range texts {
		if f.poison != "" && strings.Contains(t, f.poison) {
			return nil, &embed.StatusError{StatusCode: 400, Status: "400 Bad Request", URL: "http://127.0.0.1:11434/api/embeddings"}
		}
	}
	return f.Embedder.Embed(ctx, texts)
}

func pending(t *testing.T, w *Worker) int64 {
	t.Helper()
	n, err := w.db.CountPending(ctx, vectors.SpaceIdentity(w.emb))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWorkerDrainAndLoad(t *testing.T) {
	f := indextest.New(t)
	indextest.KubeLog(f)
	f.Commit(indextest.Exchange("empty", "x", indextest.At(80), "?!", ""), indextest.Exchange("orphan", "x", indextest.At(81), "", "An answer without a question about kubernetes."))
	e := indextest.Hash(t, 64)
	w, err := New(Config{DB: f.DB, Embedder: e, BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st := w.Status(); st.Ready || st.Pending != -1 {
		t.Errorf("status before start: %+v", st)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	// 9 exchanges; the one without words gets a zero vector (stored, so
	// not pending, but not searchable).
	st := w.Status()
	if st.Pending != 0 || st.Vectors != 8 || st.Stored != 9 || !st.Ready || st.Identity != "builtin:hash-v2:64#user|ai" || st.LastErr != "" {
		t.Errorf("status after Drain: %+v", st)
	}
	if n := pending(t, w); n != 0 {
		t.Errorf("%d pending after Drain", n)
	}
	// A restart rebuilds the same space from the table, embedding nothing.
	v, err := vectors.Load(ctx, f.DB, vectors.SpaceIdentity(e))
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 8 {
		t.Errorf("Load: %d vectors, want 8", v.Len())
	}
	q, _ := e.Embed(ctx, []string{"pods crashing"})
	a, err := v.Query(ctx, q[0], 3, vectors.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.Space().Query(ctx, q[0], 3, vectors.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("loaded space answers %v, live one %v", a, b)
	}
}

// TestWorkerEmbedderSwitch: a new embedder makes every exchange pending;
// the old vectors are kept when its space is complete (issue 33 item 3:
// trying another embedder and going back re-embedded everything), so
// switching back embeds nothing.
func TestWorkerEmbedderSwitch(t *testing.T) {
	f := indextest.New(t)
	indextest.KubeLog(f)
	old := drain(t, f.DB, indextest.Hash(t, 64))
	w := drain(t, f.DB, indextest.Hash(t, 32))
	if n := pending(t, old); n != 0 {
		t.Errorf("old identity: %d pending after the switch, want 0 (its vectors kept)", n)
	}
	if n := pending(t, w); n != 0 {
		t.Errorf("new identity: %d pending", n)
	}
	// Switching back embeds nothing: the space is whole.
	back, err := New(Config{DB: f.DB, Embedder: indextest.Hash(t, 64)})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := back.once(ctx); err != nil || n != 0 {
		t.Fatalf("after switching back: %d embedded, %v; want none", n, err)
	}
	if st := back.Status(); st.Vectors != 7 || st.Pending != 0 {
		t.Errorf("after switching back: %+v", st)
	}
}

// TestWorkerRun: Run embeds what is committed, retries a failing embedder
// with backoff without losing anything, and wakes up on Notify.
func TestWorkerRun(t *testing.T) {
	f := indextest.New(t)
	f.Commit(indextest.Exchange("e1", "s", indextest.At(0), "first question about rust lifetimes", "answer"))
	e := &flaky{Embedder: indextest.Hash(t, 32), failures: 3}
	w, err := New(Config{DB: f.DB, Embedder: e, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, IdlePoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	waitFor(t, "first exchange embedded", func() bool { st := w.Status(); return st.Vectors == 1 && st.Pending == 0 })
	e.mu.Lock()
	calls := e.calls
	e.mu.Unlock()
	if calls < 4 {
		t.Errorf("%d embedder calls, want the 3 failures and a success", calls)
	}
	if st := w.Status(); st.LastErr != "" {
		t.Errorf("last error after success: %q", st.LastErr)
	}

	// Idle now (IdlePoll is an hour): a commit and a Notify wake it up.
	f.Commit(indextest.Exchange("e2", "s", indextest.At(1), "second question about borrowing", "answer"))
	w.Notify()
	w.Notify() // never blocks
	waitFor(t, "second exchange embedded", func() bool { return w.Status().Vectors == 2 })

	// While the embedder is down, nothing is lost: the exchange stays
	// pending, the error is reported, and it is embedded on recovery.
	e.mu.Lock()
	e.failures = 5
	e.mu.Unlock()
	f.Commit(indextest.Exchange("e3", "s", indextest.At(2), "third question about traits", "answer"))
	w.Notify()
	waitFor(t, "error reported", func() bool { return strings.Contains(w.Status().LastErr, "unavailable") })
	waitFor(t, "third exchange embedded", func() bool { return w.Status().Vectors == 3 })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if n := pending(t, w); n != 0 {
		t.Errorf("%d pending", n)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWorkerRejectedText: an exchange the embedder refuses (HTTP 400, as
// for a text too long for the model) does not block the queue: it gets a
// zero vector, is found by BM25 only, and the others are embedded.
func TestWorkerRejectedText(t *testing.T) {
	f := indextest.New(t)
	f.Commit(
		indextest.Exchange("ok1", "s", indextest.At(0), "a question about gardening tomatoes", "water them"),
		indextest.Exchange("bad", "s", indextest.At(1), "POISON a question about gardening roses", "prune them"),
		indextest.Exchange("ok2", "s", indextest.At(2), "a question about gardening basil", "pinch it"),
	)
	e := &flaky{Embedder: indextest.Hash(t, 32), poison: "POISON"}
	w := drain(t, f.DB, e)
	// The refused prompt's vector is zero; its answer's is not: all
	// three exchanges can be found by meaning.
	if st := w.Status(); st.Pending != 0 || st.Vectors != 3 || st.Stored != 3 || w.Space().Vectors() != 5 {
		t.Errorf("status: %+v, %d vectors", st, w.Space().Vectors())
	}
	// When the embedder refuses everything, that is its configuration's
	// fault: nothing is stored and Drain reports the error.
	f2 := indextest.New(t)
	f2.Commit(indextest.Exchange("p1", "s", indextest.At(0), "POISON one", ""), indextest.Exchange("p2", "s", indextest.At(1), "POISON two", ""))
	w2, err := New(Config{DB: f2.DB, Embedder: e, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var se *embed.StatusError
	if err := w2.Drain(ctx); !errors.As(err, &se) {
		t.Errorf("Drain: got %v, want the StatusError", err)
	}
	if n := pending(t, w2); n != 2 {
		t.Errorf("%d pending, want 2", n)
	}
}

// TestWorkerUnresolvedEmbedder: a remote embedder that cannot be reached
// to learn its dimension leaves the worker without a space (search is BM25
// alone) and Drain fails; nothing is stored under a provisional identity.
func TestWorkerUnresolvedEmbedder(t *testing.T) {
	f := indextest.New(t)
	indextest.KubeLog(f)
	e, err := embed.New(embed.Config{Provider: "ollama", URL: "http://127.0.0.1:1", Model: "m", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(Config{DB: f.DB, Embedder: e, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err == nil {
		t.Fatal("Drain: no error")
	}
	if w.Space() != nil || w.Status().Ready {
		t.Errorf("space without an identity: %+v", w.Status())
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"}, // never splits a rune
		{"日本", 4, "日"},
	} {
		if got := truncate(tc.s, tc.n); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// recordingEmbedder records the texts it embeds.
type recordingEmbedder struct {
	embed.Embedder
	mu    sync.Mutex
	texts []string
}

func (r *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, texts...)
	r.mu.Unlock()
	return r.Embedder.Embed(ctx, texts)
}

// TestTextRecipes: what the worker embeds of an exchange under each text
// recipe; the context recipe takes the previous exchange of the same
// session (by time), never another session's.
func TestTextRecipes(t *testing.T) {
	for _, tc := range []struct {
		recipe string
		want   []string
	}{
		{vectors.TextUser, []string{"deploy it", "is it up?", "other session", "the answer alone"}},
		{vectors.TextUserAI, []string{"deploy it\n\ndeployed", "is it up?\n\nyes", "other session\n\nok", "the answer alone"}},
		{vectors.TextUserDate, []string{"Saturday 1 March 2025: deploy it", "Saturday 1 March 2025: is it up?", "Saturday 1 March 2025: other session", "Saturday 1 March 2025: the answer alone"}},
		{vectors.TextUserPrev, []string{"deploy it", "deploy it\n\nis it up?", "other session", "is it up?\n\nthe answer alone"}},
	} {
		t.Run(tc.recipe, func(t *testing.T) {
			f := indextest.New(t)
			f.Commit(
				indextest.Exchange("a", "s1", indextest.At(0), "deploy it", "deployed"),
				indextest.Exchange("c", "s2", indextest.At(1), "other session", "ok"),
				indextest.Exchange("b", "s1", indextest.At(2), "is it up?", "yes"),
				indextest.Exchange("d", "s1", indextest.At(3), "", "the answer alone"),
			)
			rec := &recordingEmbedder{Embedder: indextest.Hash(t, 64)}
			e, err := vectors.WithTextRecipe(rec, tc.recipe)
			if err != nil {
				t.Fatal(err)
			}
			drain(t, f.DB, e)
			got := sorted(rec.texts)
			if want := sorted(tc.want); !slices.Equal(got, want) {
				t.Errorf("embedded %q, want %q", got, want)
			}
			if !strings.HasSuffix(vectors.SpaceIdentity(e), "#"+tc.recipe) {
				t.Errorf("space identity %s does not name the recipe", vectors.SpaceIdentity(e))
			}
		})
	}
	if _, err := vectors.WithTextRecipe(indextest.Hash(t, 64), "user+everything"); err == nil {
		t.Error("unknown recipe accepted")
	}
}

// alternating is an embedder whose every other call fails, each failure
// with an error of its own ("unavailable #n").
type alternating struct {
	embed.Embedder
	mu    sync.Mutex
	calls int
}

func (a *alternating) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	a.mu.Lock()
	a.calls++
	n := a.calls
	a.mu.Unlock()
	if n%2 == 1 {
		return nil, fmt.Errorf("#%d: %w", n, embed.ErrUnavailable)
	}
	return a.Embedder.Embed(ctx, texts)
}

// TestWorkerStatusConsistent: Status never shows the vectors a step
// stored together with the error of the step before it: the error is
// cleared before the vectors are counted. Before, once published the
// stored count and the vector space, then cleared the error in a deferred
// call: a Status in between showed the new vectors with the old error.
func TestWorkerStatusConsistent(t *testing.T) {
	f := indextest.New(t)
	e := &alternating{Embedder: indextest.Hash(t, 32)}
	w, err := New(Config{DB: f.DB, Embedder: e, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		stored int64
		err    string
	}
	var (
		mu      sync.Mutex
		errAt   = map[string]int64{} // each error, and the count stored when it was the step's
		samples []seen
	)
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		var last seen
		for {
			select {
			case <-stop:
				return
			default:
			}
			st := w.Status()
			if s := (seen{st.Stored, st.LastErr}); s.err != "" && s != last {
				last = s
				mu.Lock()
				samples = append(samples, s)
				mu.Unlock()
			}
		}
	}()
	const steps = 200
	for i := range steps {
		f.Commit(indextest.Exchange(fmt.Sprintf("e%d", i), "s", indextest.At(i), fmt.Sprintf("question number %d", i), "answer"))
		before := w.Status().Stored
		if _, err := w.Step(ctx); err == nil {
			t.Fatalf("step %d: want the embedder's failure", i)
		} else {
			mu.Lock()
			errAt[err.Error()] = before
			mu.Unlock()
		}
		if _, err := w.Step(ctx); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	close(stop)
	<-polled
	// Status reads the count before the error: a step that fails while
	// it reads may show its new error with the count of before (older
	// vectors, a newer error), never the reverse.
	bad := 0
	for _, s := range samples {
		if at, ok := errAt[s.err]; ok && s.stored > at {
			bad++
			t.Logf("%d vectors stored with the error %q, of a step when %d were", s.stored, s.err, at)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d observations showed vectors stored after an error together with that error", bad, len(samples))
	}
	if st := w.Status(); st.Stored != steps || st.LastErr != "" {
		t.Errorf("at the end: %+v", st)
	}
}

// TestWorkerFillsCodes: past vectors.MemoryCodes the worker's space is
// loaded without codes, reads those that fit into memory in the
// background, keeps the ones it adds later in the index, and answers as
// a space with every code in memory does, before and after.
func TestWorkerFillsCodes(t *testing.T) {
	defer func(m int) { vectors.MemoryCodes = m }(vectors.MemoryCodes)
	f := indextest.New(t)
	indextest.KubeLog(f)
	e := indextest.Hash(t, 64)
	all := drain(t, f.DB, e).Space() // every code in memory
	vectors.MemoryCodes = 5 * 64     // 5 of the 14 vectors' codes
	w := drain(t, f.DB, e)
	v := w.Space()
	waitFor(t, "the codes that fit read into memory", func() bool { in, _ := v.CodesInMemory(); return in == 5 })
	same := func(when string, want *vectors.Space) {
		t.Helper()
		for _, text := range []string{"pods crashing", "ingress certificates", "kind on a laptop"} {
			q, _ := e.Embed(ctx, []string{text})
			a, err := want.Query(ctx, q[0], 4, vectors.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := v.Query(ctx, q[0], 4, vectors.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(a) != fmt.Sprint(b) || len(a) == 0 {
				t.Errorf("%s, %q: the space with 5 codes in memory answers %v, with all %v", when, text, b, a)
			}
		}
	}
	same("filled", all)
	// Embedded later: stored, added, its codes left in the index.
	f.Commit(indextest.Exchange("y1", "y", indextest.At(90), "Are my kubernetes pods crashing again?", "The liveness probe timed out."))
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if in, n := v.CodesInMemory(); in != 5 || n != 16 {
		t.Errorf("after an exchange embedded: %d of %d codes in memory, want 5 of 16", in, n)
	}
	vectors.MemoryCodes = 1 << 30
	fresh, err := vectors.Load(ctx, f.DB, vectors.SpaceIdentity(e))
	if err != nil {
		t.Fatal(err)
	}
	same("embedded later", fresh)
}
