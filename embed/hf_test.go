package embed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/embed/hf"
	"github.com/praxis-os/continuity/internal/shareddata"
)

// queryFake embeds a query as [1 0] and a passage as [0 1].
type queryFake struct{ Embedder }

func (queryFake) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return slices.Repeat([][]float32{{0, 1}}, len(texts)), nil
}

func (queryFake) EmbedQueries(_ context.Context, texts []string) ([][]float32, error) {
	return slices.Repeat([][]float32{{1, 0}}, len(texts)), nil
}

func TestEmbedQueries(t *testing.T) {
	ctx := context.Background()
	v, _ := EmbedQueries(ctx, queryFake{}, []string{"q"})
	if !slices.Equal(v[0], []float32{1, 0}) {
		t.Errorf("a QueryEmbedder's queries: %v", v)
	}
	h := mustNew(t, Config{Provider: ProviderHash})
	a, _ := EmbedQueries(ctx, h, []string{"some words"})
	b, _ := h.Embed(ctx, []string{"some words"})
	if !slices.Equal(a[0], b[0]) {
		t.Error("another embedder's queries are not its Embed")
	}
	x, err := Explain(ctx, queryFake{}, []string{"q"}, true)
	if err != nil || !slices.Equal(x[0].Vector, []float32{1, 0}) || x[0].Chunks != nil {
		t.Errorf("Explain as a query: %+v %v", x, err)
	}
}

// TestHFProvider: --embedder hf selects the BERT embedder on a model
// folder; a model that is not installed, a URL or a wrong dimension are
// errors; prefixes apply to hf only.
func TestHFProvider(t *testing.T) {
	dir := shareddata.Dir("bert-golden/tiny-bert-mean")
	t.Setenv(hf.EnvModels, t.TempDir())
	q := "query: "
	if _, err := New(Config{Provider: "uselite", QueryPrefix: &q}); err == nil || !strings.Contains(err.Error(), "hf embedder only") {
		t.Errorf("a prefix for uselite: %v", err)
	}
	if _, err := New(Config{Provider: "hf", Model: "gte-small"}); !errors.Is(err, hf.ErrNotInstalled) {
		t.Errorf("a missing model: %v", err)
	}
	if _, err := New(Config{Provider: "hf", Model: dir, URL: "http://x"}); err == nil {
		t.Error("hf with a URL")
	}
	// The checks above need no model; the rest loads the shared one.
	shareddata.Require(t, "bert-golden/tiny-bert-mean")
	e, err := New(Config{Provider: "HF", Model: dir, Chunks: 2, QueryPrefix: &q})
	if err != nil {
		t.Fatal(err)
	}
	if id := e.Identity(); !strings.HasPrefix(id, "hf:tiny-bert-mean@sha256-") || !strings.HasSuffix(id, "-c2:64") {
		t.Errorf("identity %q", id)
	}
	if d := Describe(e); d != (Description{Provider: ProviderHF, Model: dir, Dimension: 64}) || d.Where() != "in process" {
		t.Errorf("Describe = %+v, %s", d, d.Where())
	}
	if _, err := New(Config{Provider: "hf", Model: dir, Dimension: 384}); err == nil || !strings.Contains(err.Error(), "dimension 384") {
		t.Errorf("a wrong dimension: %v", err)
	}
	x, err := Explain(context.Background(), e, []string{"hello", ""}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(x[0].Chunks) != 1 || x[0].Tokens[0][0] != "[CLS]" || x[0].Tokens[0][1] != "query" || len(x[1].Chunks) != 1 || len(x[0].Vector) != 64 {
		t.Errorf("Explain: %+v", x)
	}
}
