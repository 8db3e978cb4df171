package embedding

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/internal/indextest"
	"github.com/praxis-os/continuity/vectors"
)

// TestReportNamesTheEmbedder: the worker's report names its embedder
// before its space loads; a remote one's space identity only once its
// dimension is known, without asking the server for it (the report of a
// daemon whose server hangs must not hang). After a drain it is the loaded
// space's.
func TestReportNamesTheEmbedder(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"embedding":[0.6,0.8]}`))
	}))
	defer srv.Close()
	ollama, err := embed.New(embed.Config{Provider: embed.ProviderOllama, Model: "m", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	recipe, err := vectors.WithTextRecipe(indextest.Hash(t, 64), vectors.TextUser)
	if err != nil {
		t.Fatal(err)
	}
	f := indextest.New(t)
	indextest.KubeLog(f)
	cases := []struct {
		name     string
		e        embed.Embedder
		space    string // before the space loads
		provider string
		remote   bool
	}{
		{"hash", indextest.Hash(t, 64), "builtin:hash-v2:64#user|ai", embed.ProviderHash, false},
		{"hash with a recipe", recipe, "builtin:hash-v2:64#user", embed.ProviderHash, false},
		{"remote, dimension not learned", ollama, "", embed.ProviderOllama, true},
		{"none", nil, "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := New(Config{DB: f.DB, Embedder: c.e})
			if err != nil {
				t.Fatal(err)
			}
			p := w.Report(ctx).(Progress)
			if p.Identity != "" || p.Ready || p.Space != c.space {
				t.Errorf("before loading: %+v, want space %q", p, c.space)
			}
			if c.e == nil {
				if p.Embedder != nil {
					t.Errorf("a worker without an embedder describes %+v", p.Embedder)
				}
				return
			}
			if p.Embedder == nil || p.Embedder.Provider != c.provider || p.Embedder.Remote != c.remote {
				t.Errorf("embedder %+v, want %s (remote %v)", p.Embedder, c.provider, c.remote)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the reports asked the server %d times", n)
	}
	w := drain(t, f.DB, ollama)
	p := w.Report(ctx).(Progress)
	if want := "ollama:m:2#user|ai"; p.Space != want || p.Identity != want || !p.Ready || p.Pending != 0 || p.Stored == 0 || p.LastError != "" {
		t.Errorf("after a drain: %+v, want space %s", p, want)
	}
}
