package embed

import (
	"context"
	"testing"

	"github.com/praxis-os/continuity/embed/uselite"
)

// wrapped is an embedder wrapping another (as a text recipe or a cache
// does).
type wrapped struct{ Embedder }

func (w wrapped) Unwrap() Embedder { return w.Embedder }

// opaque is an embedder of a kind Describe does not know.
type opaque struct{ Embedder }

// TestDescribe: each provider is described as configured, a wrapped one
// through its wrapper, and a remote one without asking its server (the
// URL is closed: a probe would fail, and the dimension stays 0).
func TestDescribe(t *testing.T) {
	build := func(cfg Config) Embedder {
		t.Helper()
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	hash := build(Config{Provider: ProviderHash})
	cases := []struct {
		name  string
		e     Embedder
		want  Description
		where string
	}{
		{"hash", hash, Description{Provider: ProviderHash, Model: builtinVersion, Dimension: 256}, "in the binary"},
		{"builtin alias", build(Config{Provider: ProviderBuiltin, Dimension: 512}), Description{Provider: ProviderHash, Model: builtinVersion, Dimension: 512}, "in the binary"},
		{"uselite default", build(Config{}), Description{Provider: ProviderUSELite, Model: uselite.Version, Dimension: 512}, "in the binary"},
		{"ollama", build(Config{Provider: ProviderOllama, Model: "nomic-embed-text", URL: "http://127.0.0.1:1"}),
			Description{Provider: ProviderOllama, Model: "nomic-embed-text", Remote: true, URL: "http://127.0.0.1:1/api"}, "at http://127.0.0.1:1/api"},
		{"openai with a dimension", build(Config{Provider: ProviderOpenAI, Model: "m", URL: "http://127.0.0.1:1", Dimension: 8}),
			Description{Provider: ProviderOpenAI, Model: "m", Remote: true, URL: "http://127.0.0.1:1/v1", Dimension: 8}, "at http://127.0.0.1:1/v1"},
		{"wrapped twice", wrapped{wrapped{hash}}, Description{Provider: ProviderHash, Model: builtinVersion, Dimension: 256}, "in the binary"},
		{"unknown kind", opaque{hash}, Description{Provider: "builtin", Dimension: 256}, "in the binary"},
		{"nil", nil, Description{}, "in the binary"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Describe(c.e)
			if got != c.want {
				t.Errorf("Describe = %+v, want %+v", got, c.want)
			}
			if w := got.Where(); w != c.where {
				t.Errorf("Where = %q, want %q", w, c.where)
			}
		})
	}
	if d := Describe(cases[3].e); d.Dimension != 0 {
		t.Errorf("Describe probed the server: dimension %d", d.Dimension)
	}
	if _, err := cases[3].e.Embed(context.Background(), []string{"x"}); err == nil {
		t.Error("the closed URL answered")
	}
}
