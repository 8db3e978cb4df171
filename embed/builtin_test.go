package embed

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/praxis-os/continuity/analyze"
)

// benchText is a typical exchange: about 1.5 KB of user and AI text.
const benchText = `The ConversationWatcher keeps re-indexing session-42.jsonl after every restart. I think the fingerprint check in tail.go compares the wrong offsets when the file was truncated and rewritten by the agent. Can you look at watcher.go and explain why generations are not reused?

I read watcher/watcher.go and watcher/tail.go. The watcher identifies a file by (dev, inode) plus two fingerprints: Head covers the first 1 KiB and Tail the 1 KiB before the committed offset. On restart, reconcile() walks the folder, and for each file it looks up the generation by inode first. The bug is in matchGeneration: when the inode matches but the Tail fingerprint does not (because the committed offset moved past the end after truncation), it starts a new generation instead of checking whether the head still matches. I changed it to compare Head first, then treat a shorter file as a rewrite, which ends the old generation and starts a new one from offset 0. I also added a test, TestRestartAfterTruncate, that writes three exchanges, truncates the file, appends two, restarts the watcher and checks that exactly five lines are indexed with no duplicates. go test ./watcher/ passes, and the race detector is clean. One more thing: the fsnotify event for the rename arrives before the write, so the debounce window of 50ms matters on macOS; I left it configurable through Config.Debounce, defaulting to 100ms on every platform.`

func builtinFor(t testing.TB, dim int) Embedder {
	t.Helper()
	e, err := New(Config{Provider: ProviderBuiltin, Dimension: dim})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func embedOne(t testing.TB, e Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func norm(v []float32) float64 { return math.Sqrt(cosine(v, v)) }

func vectorSum(vecs ...[]float32) uint64 {
	h := fnv.New64a()
	for _, v := range vecs {
		for _, x := range v {
			binary.Write(h, binary.LittleEndian, math.Float32bits(x))
		}
	}
	return h.Sum64()
}

func TestBuiltinIdentity(t *testing.T) {
	for _, tt := range []struct {
		dim    int
		wantID string
		want   int
	}{
		{0, "builtin:hash-v2:256", 256},
		{64, "builtin:hash-v2:64", 64},
		{1024, "builtin:hash-v2:1024", 1024},
	} {
		e := builtinFor(t, tt.dim)
		if e.Identity() != tt.wantID || e.Dimension() != tt.want {
			t.Errorf("dim %d: Identity %q Dimension %d, want %q %d", tt.dim, e.Identity(), e.Dimension(), tt.wantID, tt.want)
		}
		if v := embedOne(t, e, "hello world"); len(v) != tt.want {
			t.Errorf("dim %d: vector length %d", tt.dim, len(v))
		}
		if _, ok := e.(Prober); ok {
			t.Errorf("builtin should not need probing")
		}
		if id, err := Resolve(context.Background(), e); err != nil || id != tt.wantID {
			t.Errorf("Resolve = %q, %v", id, err)
		}
	}
}

// TestBuiltinGolden pins the builtin vectors bit for bit. If it fails, the
// feature function changed: bump builtinVersion (stored vectors of the old
// version must not be compared with new ones), then update the sums.
func TestBuiltinGolden(t *testing.T) {
	e := builtinFor(t, 0)
	vecs, err := e.Embed(context.Background(), []string{benchText, "ConversationWatcher", "authentication failed: token expired", "日本語テキスト naïve café"})
	if err != nil {
		t.Fatal(err)
	}
	const want = 0xd41474f51fa36534
	if got := vectorSum(vecs...); got != want {
		t.Errorf("builtin %s vectors changed: sum %#x, want %#x; bump builtinVersion if the feature function changed on purpose", builtinVersion, got, uint64(want))
	}
}

func TestBuiltinDeterministic(t *testing.T) {
	texts := []string{benchText, "ConversationWatcher", "", "a b c", strings.Repeat("word ", 1000)}
	a, err := builtinFor(t, 0).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh embedder, reused scratch memory, and concurrent use all agree.
	e := builtinFor(t, 0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 3 {
				b, err := e.Embed(context.Background(), texts)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range a {
					if !slices.Equal(a[i], b[i]) {
						t.Errorf("text %d: vectors differ between runs", i)
					}
				}
			}
		})
	}
	wg.Wait()
	// Embedding one by one or in a batch is the same.
	for i, text := range texts {
		if !slices.Equal(a[i], embedOne(t, e, text)) {
			t.Errorf("text %d: batch and single embeddings differ", i)
		}
	}
}

func TestBuiltinUnitNorm(t *testing.T) {
	e := builtinFor(t, 0)
	for _, text := range []string{
		benchText, "x1", "ConversationWatcher", "日本語", "sha256 deadbeefcafebabe0123456789", strings.Repeat("Lorem ipsum dolor sit amet. ", 2000),
		"run", "the runner", "42",
	} {
		if n := norm(embedOne(t, e, text)); math.Abs(n-1) > 1e-5 {
			t.Errorf("%.20q: norm %v", text, n)
		}
	}
}

// A text without features (empty, white space, punctuation, only
// stopwords and single letters) has a zero vector: similar to nothing.
func TestBuiltinEmpty(t *testing.T) {
	e := builtinFor(t, 0)
	for _, text := range []string{"", "   \n\t", "!!! ... ???", "the and of it is", "a b c", "🙂🙂"} {
		v := embedOne(t, e, text)
		if len(v) != 256 || norm(v) != 0 {
			t.Errorf("%q: len %d norm %v, want a zero vector", text, len(v), norm(v))
		}
	}
	if vecs, err := e.Embed(context.Background(), nil); err != nil || len(vecs) != 0 {
		t.Errorf("Embed(nil) = %v, %v", vecs, err)
	}
}

func TestBuiltinSimilarity(t *testing.T) {
	e := builtinFor(t, 0)
	sim := func(a, b string) float64 { return cosine(embedOne(t, e, a), embedOne(t, e, b)) }
	high := []struct{ a, b string }{
		{"ConversationWatcher", "conversation watcher"},
		{"ConversationWatcher", "conversation_watcher"},
		{"conversation-watcher", "CONVERSATION WATCHER"},
		{"authenticate", "authentication"},
		{"running", "run"},
		{"connections", "connected"},
		{"the watcher tails jsonl files", "tailing JSONL files with a file watcher"},
		{"database migration sqlite schema", "sqlite schema migrations for the database"},
	}
	for _, p := range high {
		if s := sim(p.a, p.b); s < 0.7 {
			t.Errorf("sim(%q, %q) = %.3f, want >= 0.7", p.a, p.b, s)
		}
	}
	low := []struct{ a, b string }{
		{"ConversationWatcher", "banana smoothie"},
		{"authenticate", "photosynthesis"},
		{"fix the authentication bug in login", "the recipe needs two cups of flour"},
		{"database migration sqlite schema", "weather forecast tomorrow rain"},
	}
	for _, p := range low {
		if s := sim(p.a, p.b); math.Abs(s) > 0.2 {
			t.Errorf("sim(%q, %q) = %.3f, want about 0", p.a, p.b, s)
		}
	}
	// Ranking: a query is closer to the related exchange than to others.
	query := "why does the watcher re-index the jsonl file after restart?"
	docs := []string{
		benchText,
		"I set up the Postgres connection pool with pgx and tuned max connections to 20 for the API server.",
		"Here is a recipe for sourdough bread: flour, water, salt and a starter; bake at 250 degrees.",
		"The React component re-renders because the props object is recreated on every render; memoise it.",
	}
	best, bestSim := -1, -2.0
	for i, d := range docs {
		if s := sim(query, d); s > bestSim {
			best, bestSim = i, s
		}
	}
	if best != 0 {
		t.Errorf("query ranked doc %d first, want the watcher exchange", best)
	}
	// Exact identifier match beats a partial one.
	if a, b := sim("ConversationWatcher", "the conversation watcher restarts"), sim("ConversationWatcher", "the conversation ended"); a <= b {
		t.Errorf("partial match %.3f >= full match %.3f", b, a)
	}
}

func TestBuiltinCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := builtinFor(t, 0).Embed(ctx, []string{"x"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func TestBuiltinManyFeatures(t *testing.T) {
	// Far more distinct features than the counter's initial table: it grows.
	var b strings.Builder
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		for range 4 + r.IntN(8) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteByte(' ')
	}
	e := builtinFor(t, 0)
	v := embedOne(t, e, b.String())
	if n := norm(v); math.Abs(n-1) > 1e-5 {
		t.Errorf("norm %v", n)
	}
	// The scratch memory is reused correctly after the growth.
	if !slices.Equal(embedOne(t, e, "hello world"), embedOne(t, builtinFor(t, 0), "hello world")) {
		t.Errorf("vector differs after a large text")
	}
}

func TestCounter(t *testing.T) {
	var c counter
	c.init(16)
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 3 {
		c.reset()
		want := map[uint64]uint32{}
		var order []uint64
		for range 5000 {
			k := uint64(r.IntN(1500)+1) << 3
			if want[k] == 0 {
				order = append(order, k)
			}
			want[k]++
			c.add(k)
		}
		if len(c.used) != len(want) {
			t.Fatalf("round %d: %d keys, want %d", round, len(c.used), len(want))
		}
		for i, slot := range c.used {
			if k := c.keys[slot]; k != order[i] || c.counts[slot] != want[k] {
				t.Fatalf("round %d: slot %d holds %d×%d, want %d×%d", round, i, c.keys[slot], c.counts[slot], order[i], want[order[i]])
			}
		}
	}
}

func TestDetLog(t *testing.T) {
	for _, x := range []float64{1, 2, 3, 7, 10, 100, 255, 256, 1000, 65535, 1 << 40} {
		if got, want := detLog(x), math.Log(x); math.Abs(got-want) > 1e-15*math.Max(1, want) {
			t.Errorf("detLog(%v) = %v, want %v", x, got, want)
		}
	}
	if tfWeight(1) != 1 || tfWeight(300) != 1+detLog(300) {
		t.Errorf("tfWeight")
	}
}

func BenchmarkBuiltin(b *testing.B) {
	e := builtinFor(b, 0)
	ctx := context.Background()
	texts := []string{benchText}
	b.SetBytes(int64(len(benchText)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}

func BenchmarkBuiltinParallel(b *testing.B) {
	e := builtinFor(b, 0)
	b.SetBytes(int64(len(benchText)))
	b.RunParallel(func(pb *testing.PB) {
		texts := []string{benchText}
		for pb.Next() {
			if _, err := e.Embed(context.Background(), texts); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}

func ExampleNew() {
	e, err := New(Config{Provider: ProviderHash}) // see ConfigFromEnv
	if err != nil {
		panic(err)
	}
	vecs, err := e.Embed(context.Background(), []string{
		"The ConversationWatcher tails JSONL logs",
		"conversation watcher tailing a jsonl log",
		"bake the bread at 250 degrees",
	})
	if err != nil {
		panic(err)
	}
	dot := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	fmt.Println(e.Identity(), len(vecs[0]))
	fmt.Println("related more similar than unrelated:", dot(vecs[0], vecs[1]) > dot(vecs[0], vecs[2]))
	// Output:
	// builtin:hash-v2:256 256
	// related more similar than unrelated: true
}

func FuzzBuiltin(f *testing.F) {
	for _, s := range []string{benchText, "", "ConversationWatcher", "\xff\xfe invalid utf8 \xc3", "日本語"} {
		f.Add(s)
	}
	e := builtinFor(f, 64)
	f.Fuzz(func(t *testing.T, s string) {
		v := embedOne(t, e, s)
		if n := norm(v); n != 0 && math.Abs(n-1) > 1e-5 {
			t.Fatalf("norm %v", n)
		}
		if len(analyze.Terms(s)) == 0 && norm(v) != 0 {
			t.Fatalf("no terms but norm %v", norm(v))
		}
	})
}
