package embedcache

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/embed"
)

// counting counts the texts that reach the embedder.
type counting struct {
	embed.Embedder
	n int
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.n += len(texts)
	return c.Embedder.Embed(ctx, texts)
}

func TestCachedEmbedder(t *testing.T) {
	dir := t.TempDir()
	h, err := embed.New(embed.Config{Provider: embed.ProviderHash, Dimension: 32})
	if err != nil {
		t.Fatal(err)
	}
	inner := &counting{Embedder: h}
	c, err := New(inner, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := c.Embed(ctx, []string{"alpha beta", "gamma delta", "alpha beta"})
	if err != nil {
		t.Fatal(err)
	}
	if inner.n != 2 {
		t.Fatalf("first call embedded %d texts, want 2 (a repeated text once)", inner.n)
	}
	if !slices.Equal(first[0], first[2]) {
		t.Fatalf("a repeated text got two different vectors")
	}
	if st := c.Stats(); st.Misses != 2 || st.Hits != 0 || st.Distinct != 2 {
		t.Errorf("stats %+v, want 2 misses, 0 hits, 2 distinct", st)
	}
	// A new process (a new cachedEmbedder) reads them back from disk.
	inner2 := &counting{Embedder: h}
	c2, err := New(inner2, dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c2.Embed(ctx, []string{"gamma delta", "alpha beta", "epsilon"})
	if err != nil {
		t.Fatal(err)
	}
	if inner2.n != 1 {
		t.Errorf("second process embedded %d texts, want 1 (only the new one)", inner2.n)
	}
	if !slices.Equal(again[0], first[1]) || !slices.Equal(again[1], first[0]) {
		t.Errorf("cached vectors differ from the computed ones")
	}
	// A torn last record (crash mid-append) is ignored, then overwritten.
	f, err := os.OpenFile(c2.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("torn"))
	f.Close()
	c3, err := New(&counting{Embedder: h}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if c3.Len() != 3 {
		t.Errorf("after a torn record: %d vectors, want 3", len(c3.vecs))
	}
	if _, err := c3.Embed(ctx, []string{"zeta"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(c3.path); st.Size()%int64(c3.recordSize()) != 0 {
		t.Errorf("file size %d is not a whole number of records", st.Size())
	}
	if st, _ := os.Stat(c3.path); st.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, want 0600", st.Mode().Perm())
	}
}

// prefixed embeds queries as "query: " + text (an hf model's prefix).
type prefixed struct{ counting }

func (p *prefixed) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	q := make([]string, len(texts))
	for i, t := range texts {
		q[i] = "query: " + t
	}
	return p.counting.Embedder.Embed(ctx, q)
}

// TestCachedQueries: behind the cache, queries still get the embedder's
// query embedding, not a cached passage vector of the same text.
func TestCachedQueries(t *testing.T) {
	h, err := embed.New(embed.Config{Provider: embed.ProviderHash, Dimension: 32})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(&prefixed{counting{Embedder: h}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	passage, _ := c.Embed(ctx, []string{"alpha beta"})
	query, _ := embed.EmbedQueries(ctx, c, []string{"alpha beta"})
	want, _ := h.Embed(ctx, []string{"query: alpha beta"})
	if slices.Equal(query[0], passage[0]) || !slices.Equal(query[0], want[0]) {
		t.Error("a query behind the cache is not embedded with the query prefix")
	}
	plain, _ := New(h, t.TempDir())
	a, _ := embed.EmbedQueries(ctx, plain, []string{"alpha beta"})
	b, _ := h.Embed(ctx, []string{"alpha beta"})
	if !slices.Equal(a[0], b[0]) {
		t.Error("a query of an embedder without query embedding differs from Embed")
	}
}
