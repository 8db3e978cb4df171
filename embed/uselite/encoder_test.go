package uselite

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/embed/internal/cores"
)

func TestEmbedBlankAndChunks(t *testing.T) {
	e, err := newLoaded(Options{MaxChunks: 3})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("the watcher remembers the committed offset of every log file. ", 60) // ~600 tokens
	texts := []string{"", "  \n\t", "hello world", long}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	norm := func(v []float32) float64 {
		var s float64
		for _, a := range v {
			s += float64(a) * float64(a)
		}
		return math.Sqrt(s)
	}
	for i, v := range vecs {
		if len(v) != Dimension {
			t.Fatalf("text %d: %d dimensions", i, len(v))
		}
		want := 1.0
		if i < 2 {
			want = 0 // blank: a zero vector
		}
		if n := norm(v); math.Abs(n-want) > 1e-5 {
			t.Errorf("text %q: norm %v, want %v", texts[i][:min(len(texts[i]), 20)], n, want)
		}
	}
	// Chunks: equal sizes, at most MaxTokens each, at most MaxChunks.
	ids := e.tok.Encode(long)
	chunks := e.Chunks(long)
	if len(chunks) != 3 {
		t.Fatalf("%d tokens: %d chunks, want 3 (the cap)", len(ids), len(chunks))
	}
	k := (len(ids) + MaxTokens - 1) / MaxTokens
	for _, c := range chunks {
		if len(c) > MaxTokens || len(c) < len(ids)/k {
			t.Errorf("chunk of %d tokens (text %d tokens, %d chunks)", len(c), len(ids), k)
		}
	}
	// The long text's vector is the normalised mean of its chunk vectors.
	out := make([]float32, len(chunks)*Dimension)
	e.forward(&workspace{}, chunks, out, cores.Exec{Threads: 1})
	mean := make([]float32, Dimension)
	for c := range chunks {
		for j := range mean {
			mean[j] += out[c*Dimension+j]
		}
	}
	if cos := cosine(mean, vecs[3]); cos < 0.99999 {
		t.Errorf("long text vector vs mean of chunks: cosine %v", cos)
	}
	// A short text alone equals the same text in a batch.
	alone, err := e.Embed(context.Background(), []string{"hello world"})
	if err != nil {
		t.Fatal(err)
	}
	if cos := cosine(alone[0], vecs[2]); cos < 0.99999 {
		t.Errorf("alone vs in a batch: cosine %v", cos)
	}
	if e.Identity() != "uselite:use-lite-en-0.2.0-f16-c3:512" {
		t.Errorf("identity %q", e.Identity())
	}
}

// TestParaphrase: the point of a sentence encoder — a paraphrase sharing
// few words is closer than an unrelated text.
func TestParaphrase(t *testing.T) {
	e, err := newLoaded(Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := [][3]string{ // query, paraphrase, unrelated
		{"the build keeps failing", "compilation breaks every time I run it", "what should I cook for dinner tonight"},
		{"the server is too slow to respond", "requests take a long time before an answer comes back", "my sister is getting married in June"},
		{"how do I delete old log files", "remove the previous logs from disk", "recommend a book about the history of mathematics"},
	}
	for _, c := range cases {
		v, err := e.Embed(context.Background(), c[:])
		if err != nil {
			t.Fatal(err)
		}
		if a, b := cosine(v[0], v[1]), cosine(v[0], v[2]); a <= b {
			t.Errorf("%q: paraphrase cosine %.3f <= unrelated %.3f", c[0], a, b)
		}
	}
}

func TestEmbedCancelled(t *testing.T) {
	e, err := newLoaded(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"hello"}); err == nil {
		t.Error("Embed with a cancelled context: no error")
	}
}

// TestEmbedChunks: the chunk vectors are unit vectors, one per chunk, none
// for a blank text, and their normalised mean is Embed's vector.
func TestEmbedChunks(t *testing.T) {
	e, err := newLoaded(Options{MaxChunks: 3})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("the watcher remembers the committed offset of every log file. ", 60)
	texts := []string{" ", "hello world", long}
	chunks, err := e.EmbedChunks(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 1, 3} {
		if len(chunks[i]) != want || len(e.Chunks(texts[i])) != want && i > 0 {
			t.Fatalf("text %d: %d chunk vectors, want %d", i, len(chunks[i]), want)
		}
		if want == 0 {
			continue
		}
		mean := make([]float64, Dimension)
		for _, c := range chunks[i] {
			var n float64
			for j, a := range c {
				mean[j] += float64(a)
				n += float64(a) * float64(a)
			}
			if math.Abs(n-1) > 1e-4 {
				t.Errorf("text %d: chunk norm² %v, want 1", i, n)
			}
		}
		var dot, mm float64
		for j, a := range vecs[i] {
			dot += mean[j] * float64(a)
			mm += mean[j] * mean[j]
		}
		if cos := dot / math.Sqrt(mm); cos < 0.99999 {
			t.Errorf("text %d: mean of chunk vectors vs Embed: cosine %v", i, cos)
		}
	}
}

// TestPooledLastLayer: pooling before the last feed-forward product
// (lastLayerPooled) changes the vectors by float32 rounding only, against
// the graph's order (pool the last layer's per-token output), on the
// golden texts, batched as the worker batches them and one at a time.
func TestPooledLastLayer(t *testing.T) {
	g := readGolden(t)
	texts := make([]string, len(g.Texts))
	for i, c := range g.Texts {
		texts[i] = c.Text
	}
	pooled, err := newLoaded(Options{})
	if err != nil {
		t.Fatal(err)
	}
	late, err := newLoaded(Options{})
	if err != nil {
		t.Fatal(err)
	}
	late.poolLate = true
	for _, batch := range [][]string{texts, texts[:1], texts[7:8]} {
		a, err := pooled.Embed(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		b, err := late.Embed(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		var maxDiff float64
		minCos := 1.0
		for i := range a {
			for j := range a[i] {
				maxDiff = math.Max(maxDiff, math.Abs(float64(a[i][j]-b[i][j])))
			}
			minCos = math.Min(minCos, cosine(a[i], b[i]))
		}
		t.Logf("%d texts: largest component difference %.2g, smallest cosine 1 - %.2g", len(batch), maxDiff, 1-minCos)
		if maxDiff > 1e-6 || minCos < 1-1e-9 {
			t.Errorf("%d texts: pooled vectors differ by %.3g (cosine %.12f)", len(batch), maxDiff, minCos)
		}
	}
}

// TestShardsSameVectors: a call cut into shards embedded in parallel (the
// background worker's batches), a query's call (each product shared among
// threads) and one thread give the same vectors, bit for bit, whatever
// the texts (short, long, several chunks, blank), since each sequence is
// computed the same way in any batch; and a cancelled context stops a
// sharded call.
func TestShardsSameVectors(t *testing.T) {
	texts := benchTexts(300, 16)
	texts = append(texts, "", "  ", "x", strings.Repeat("the watcher remembers the committed offset of every log file. ", 40))
	texts = append(texts, benchTexts(20, 150)...)
	ctx := context.Background()
	one, err := newLoaded(Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, err := one.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{2, 5} {
		e, err := newLoaded(Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]context.Context{"sharded": ctx, "query": cores.Query(ctx)} {
			got, err := e.Embed(c, texts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("%d threads, %s: text %d differs from one thread's", threads, name, i)
				}
			}
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := e.Embed(cctx, texts); err == nil {
			t.Errorf("%d threads: a cancelled call gave vectors", threads)
		}
	}
}
