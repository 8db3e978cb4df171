package vectors

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/praxis-os/continuity/embed"
)

// TestSpaceMayBe: a space pattern with "?" for the dimension (a remote
// embedder whose server has not answered) matches the stored vectors of
// the same provider, model and recipe with any dimension, and nothing
// else; a known identity matches itself only.
func TestSpaceMayBe(t *testing.T) {
	for _, tc := range []struct {
		pattern, id string
		want        bool
	}{
		{"ollama:toy:?#user|ai", "ollama:toy:8#user|ai", true},
		{"ollama:toy:?#user|ai", "ollama:toy:768#user|ai", true},
		{"ollama:toy:?#user|ai", "ollama:toy:8#user", false},      // another recipe
		{"ollama:toy:?#user|ai", "ollama:toy2:8#user|ai", false},  // another model
		{"ollama:toy:?#user|ai", "ollama:x:toy:8#user|ai", false}, // another model
		{"ollama:toy:?#user|ai", "ollama:toy:#user|ai", false},    // no dimension
		{"ollama:toy:?#user|ai", "ollama:toy:8a#user|ai", false},  // not a dimension
		{"ollama:toy:?#user|ai", "ollama:toy:?#user|ai", true},    // itself
		{"openai:api.openai.com/m:?#user|ai", "openai:api.openai.com/m:1536#user|ai", true},
		{"ollama:toy:8#user|ai", "ollama:toy:8#user|ai", true},
		{"ollama:toy:8#user|ai", "ollama:toy:16#user|ai", false}, // known: exact only
		{"", "ollama:toy:8#user|ai", false},
	} {
		if got := SpaceMayBe(tc.pattern, tc.id); got != tc.want {
			t.Errorf("SpaceMayBe(%q, %q) = %v, want %v", tc.pattern, tc.id, got, tc.want)
		}
	}
}

// TestSpacePatternWithoutServer: a remote embedder whose server has not
// answered has a space pattern (its recipe included, through the recipe
// wrapper) and getting it sends no request; once the server answered,
// the pattern is the space identity.
func TestSpacePatternWithoutServer(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"embedding":[0.6,0.8]}`))
	}))
	defer srv.Close()
	e, err := embed.New(embed.Config{Provider: embed.ProviderOllama, Model: "toy", URL: srv.URL + "/api"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := WithTextRecipe(e, TextUser)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := SpacePattern(w), "ollama:toy:?#"+TextUser; got != want || calls.Load() != 0 {
		t.Fatalf("SpacePattern before the server answered = %q after %d requests, want %q after none", got, calls.Load(), want)
	}
	if _, err := w.Embed(context.Background(), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	if got, want := SpacePattern(w), "ollama:toy:2#"+TextUser; got != want || got != SpaceIdentity(w) {
		t.Errorf("SpacePattern after = %q, want %q", got, want)
	}
	if SpacePattern(nil) != "" {
		t.Error("SpacePattern(nil) is not empty")
	}
}
