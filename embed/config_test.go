package embed

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error
	}{
		{"unknown provider", Config{Provider: "cohere"}, `unknown embedding provider "cohere"`},
		{"ollama without model", Config{Provider: "ollama"}, "embed: ollama: no model configured (set CONTINUITY_EMBED_MODEL"},
		{"openai without model", Config{Provider: "openai", APIKey: "k"}, "embed: openai: no model configured"},
		{"openai without key", Config{Provider: "openai", Model: "text-embedding-3-small"}, "no API key for api.openai.com"},
		{"bad scheme", Config{Provider: "ollama", Model: "m", URL: "localhost:11434"}, "invalid URL"},
		{"no host", Config{Provider: "openai", Model: "m", URL: "http:///v1"}, "invalid URL"},
		{"query", Config{Provider: "openai", Model: "m", URL: "http://h/v1?x=1"}, "no query"},
		{"builtin model", Config{Provider: "builtin", Model: "nomic-embed-text"}, `builtin: unknown model "nomic-embed-text"`},
		{"hash model", Config{Provider: "hash", Model: "nomic-embed-text"}, `hash: unknown model "nomic-embed-text"`},
		{"hash small", Config{Provider: "hash", Dimension: 8}, "dimension 8 out of range"},
		{"hash huge", Config{Provider: "hash", Dimension: 1 << 20}, "out of range"},
		{"uselite model", Config{Model: "nomic-embed-text"}, `uselite: unknown model "nomic-embed-text"`},
		{"uselite dimension", Config{Dimension: 256}, "uselite: dimension 256"},
		{"negative chunks", Config{Chunks: -1}, "negative chunks"},
		{"negative dim", Config{Provider: "ollama", Model: "m", Dimension: -1}, "negative dimension"},
		{"negative timeout", Config{Timeout: -time.Second}, "negative timeout"},
		{"negative concurrency", Config{Concurrency: -2}, "negative concurrency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.cfg)
			if err == nil {
				t.Fatalf("New(%+v) = %v, want an error", tt.cfg, e.Identity())
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := New(Config{Provider: "cohere"}); !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("unknown provider error does not wrap ErrUnknownProvider")
	}
}

func TestNewProviders(t *testing.T) {
	tests := []struct {
		cfg    Config
		wantID string // prefix before the dimension
	}{
		{Config{}, "uselite:use-lite-en-0.2.0-f16:512"},
		{Config{Provider: "USELite", Dimension: 512, Chunks: 8}, "uselite:use-lite-en-0.2.0-f16:512"},
		{Config{Chunks: 2}, "uselite:use-lite-en-0.2.0-f16-c2:512"},
		{Config{Provider: "hash"}, "builtin:hash-v2:256"},
		{Config{Provider: " Builtin ", Model: "hash-v2"}, "builtin:hash-v2:256"},
		{Config{Provider: "ollama", Model: "nomic-embed-text", Dimension: 768}, "ollama:nomic-embed-text:768"},
		{Config{Provider: "ollama", Model: "nomic-embed-text:latest", URL: "http://gpu-box:11434", Dimension: 768}, "ollama:nomic-embed-text:latest:768"},
		{Config{Provider: "openai", Model: "text-embedding-3-small", APIKey: "sk", Dimension: 1536}, "openai:api.openai.com/text-embedding-3-small:1536"},
		{Config{Provider: "OpenAI", Model: "nomic-embed-text-v1.5", URL: "http://LOCALHOST:1234/v1", Dimension: 768}, "openai:localhost:1234/nomic-embed-text-v1.5:768"},
	}
	for _, tt := range tests {
		e := mustNew(t, tt.cfg)
		if id := e.Identity(); id != tt.wantID {
			t.Errorf("New(%+v).Identity() = %q, want %q", tt.cfg, id, tt.wantID)
		}
	}
	r := mustNew(t, Config{Provider: "ollama", Model: "m"}).(*remote)
	if r.endpoint != "http://localhost:11434/api/embeddings" || r.timeout != DefaultTimeout || r.conc != DefaultConcurrency {
		t.Errorf("ollama defaults: %s %s %d", r.endpoint, r.timeout, r.conc)
	}
	r = mustNew(t, Config{Provider: "openai", Model: "m", APIKey: "k", Timeout: time.Second, Concurrency: 9}).(*remote)
	if r.endpoint != "https://api.openai.com/v1/embeddings" || r.timeout != time.Second || r.conc != 9 {
		t.Errorf("openai config: %s %s %d", r.endpoint, r.timeout, r.conc)
	}
}

func TestConfigFromEnv(t *testing.T) {
	resetEnv := func() {
		for _, k := range []string{EnvProvider, EnvURL, EnvModel, EnvAPIKey, EnvDimension, EnvTimeout, EnvConcurrency, EnvOpenAIKey} {
			t.Setenv(k, "")
		}
	}

	resetEnv()
	cfg, err := ConfigFromEnv()
	if err != nil || cfg != (Config{}) {
		t.Errorf("empty environment: %+v, %v", cfg, err)
	}

	resetEnv()
	t.Setenv(EnvProvider, "ollama")
	t.Setenv(EnvURL, "http://gpu-box:11434/api")
	t.Setenv(EnvModel, "nomic-embed-text")
	t.Setenv(EnvDimension, "768")
	t.Setenv(EnvTimeout, "90s")
	t.Setenv(EnvConcurrency, "2")
	t.Setenv(EnvOpenAIKey, "sk-not-for-ollama")
	cfg, err = ConfigFromEnv()
	want := Config{Provider: "ollama", URL: "http://gpu-box:11434/api", Model: "nomic-embed-text", Dimension: 768, Timeout: 90 * time.Second, Concurrency: 2}
	if err != nil || cfg != want {
		t.Errorf("got %+v, %v; want %+v", cfg, err, want)
	}

	// OPENAI_API_KEY is the fallback for OpenAI itself...
	resetEnv()
	t.Setenv(EnvProvider, "openai")
	t.Setenv(EnvModel, "text-embedding-3-small")
	t.Setenv(EnvOpenAIKey, "sk-openai")
	if cfg, _ := ConfigFromEnv(); cfg.APIKey != "sk-openai" {
		t.Errorf("APIKey %q, want the OPENAI_API_KEY fallback", cfg.APIKey)
	}
	t.Setenv(EnvAPIKey, "sk-explicit")
	if cfg, _ := ConfigFromEnv(); cfg.APIKey != "sk-explicit" {
		t.Errorf("APIKey %q, want CONTINUITY_EMBED_API_KEY first", cfg.APIKey)
	}
	// ...but is never sent to another server.
	t.Setenv(EnvAPIKey, "")
	t.Setenv(EnvURL, "http://localhost:1234/v1")
	if cfg, _ := ConfigFromEnv(); cfg.APIKey != "" {
		t.Errorf("OPENAI_API_KEY used for %s", cfg.URL)
	}

	for k, v := range map[string]string{EnvDimension: "abc", EnvConcurrency: "-1", EnvTimeout: "soon"} {
		resetEnv()
		t.Setenv(k, v)
		if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%q: error %v", k, v, err)
		}
	}
}

// A server that fails once and then recovers: the error shows the body of
// the response that failed (the request is not sent again to read it),
// and the next attempt succeeds.
func TestRemoteTransientStatus(t *testing.T) {
	f := newFakeServer(t, ProviderOllama, 8)
	failed := false
	f.fail = func(w http.ResponseWriter, r *http.Request, text string) bool {
		if failed {
			return false
		}
		failed = true
		http.Error(w, "loading model", http.StatusServiceUnavailable)
		return true
	}
	cfg := f.config()
	cfg.Concurrency = 1
	e := mustNew(t, cfg)
	_, err := e.Embed(context.Background(), []string{"x"})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 503 || se.Status != "503 Service Unavailable" || se.Body != "loading model" {
		t.Fatalf("error %v (%+v), want a 503 StatusError with its body", err, se)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Errorf("second attempt: %v", err)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("server got %d requests after two attempts, want 2", n)
	}
}
