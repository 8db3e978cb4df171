package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
)

// TestStatusDescribesTheDaemonsEmbedder: with a daemon embedding with
// hash, `status` and `doctor` describe hash (its vectors all there),
// whatever the command's own settings choose, and say so when those
// choose another embedder; without the daemon they describe the
// command's.
func TestStatusDescribesTheDaemonsEmbedder(t *testing.T) {
	ws := newLayout(t)
	t.Setenv("CONTINUITY_AGENT_HOME", t.TempDir())
	hash := hashEmbedder(t)
	hashSpace := vectors.SpaceIdentity(hash)
	uselite, err := embed.New(embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	useliteSpace := vectors.SpaceIdentity(uselite)
	hash512, err := embed.New(embed.Config{Provider: embed.ProviderHash, Dimension: 512})
	if err != nil {
		t.Fatal(err)
	}

	e, err := Open(ws, Options{Embedder: hash, Socket: true})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(rctx) }()
	sc := server.NewClient(server.SocketPath(ws.Cache))
	waitFor(t, "the daemon's vectors of the 10 exchanges", func() bool {
		var p embedding.Progress
		if sc.Call(ctx, "embed_status", struct{}{}, &p) != nil || p.Identity != hashSpace || p.Pending != 0 {
			return false
		}
		st, err := NewClient(ws, func() (embed.Embedder, error) { return hash, nil }, nil).Status(ctx)
		return err == nil && st.Embedding != nil && st.Embedding.Done == 10 && st.EmbedPending == 0
	})

	cases := []struct {
		name string
		env  func() (embed.Embedder, error)
		// the note and the doctor's warning name these; none: no note
		// and no warning
		note []string
	}{
		{"the same as the daemon", func() (embed.Embedder, error) { return hashEmbedder(t), nil }, nil},
		{"the default", func() (embed.Embedder, error) { return uselite, nil },
			[]string{useliteSpace, "continuity daemon --embedder uselite", "CONTINUITY_EMBEDDER=hash"}},
		{"hash with other buckets", func() (embed.Embedder, error) { return hash512, nil },
			[]string{vectors.SpaceIdentity(hash512), "continuity daemon --embedder hash --embed-dim 512"}},
		{"invalid settings", func() (embed.Embedder, error) { return nil, errors.New("bad CONTINUITY_EMBED_DIM") },
			[]string{"invalid", "bad CONTINUITY_EMBED_DIM", hashSpace}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := NewClient(ws, c.env, nil)
			st, err := cl.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			i := st.EmbedderInfo
			if st.Embedder != hashSpace || i == nil || i.Source != EmbedderOfDaemon || i.Provider != embed.ProviderHash || i.Remote || !i.Ready {
				t.Fatalf("status describes %q, %+v; want the daemon's %s", st.Embedder, i, hashSpace)
			}
			if st.EmbedPending != 0 || st.Embedding == nil || st.Embedding.Done != 10 || st.Embedding.Total != 10 {
				t.Errorf("the daemon's progress: pending %d, %+v", st.EmbedPending, st.Embedding)
			}
			rep := cl.Doctor(ctx)
			emb, ok := rep.Get("embedder")
			if !ok || emb.Status != StatusOK || !strings.Contains(emb.Message, "the daemon's hash embedder ("+hashSpace+")") {
				t.Errorf("doctor's embedder check: %+v", emb)
			}
			warn, warned := rep.Get("embedder settings")
			if c.note == nil {
				if i.Note != "" || i.Environment != "" || warned {
					t.Errorf("a note when the settings agree: %q, %q; doctor %+v", i.Note, i.Environment, warn)
				}
				return
			}
			if !warned || warn.Status != StatusWarn {
				t.Errorf("doctor does not warn: %+v", rep.Checks)
			}
			for _, s := range c.note {
				if !strings.Contains(i.Note, s) {
					t.Errorf("status's note lacks %q: %s", s, i.Note)
				}
				if !strings.Contains(warn.Message+"; "+warn.Fix, s) {
					t.Errorf("doctor's warning lacks %q: %+v", s, warn)
				}
			}
		})
	}

	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	// No daemon: the command's own embedder, as before.
	st, err := NewClient(ws, func() (embed.Embedder, error) { return uselite, nil }, nil).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i := st.EmbedderInfo; st.Embedder != useliteSpace || i == nil || i.Source != EmbedderOfEnvironment || i.Note != "" || st.EmbedPending != 10 {
		t.Errorf("without a daemon: %q, %+v, pending %d", st.Embedder, i, st.EmbedPending)
	}
}

// TestCompareEnvironment: which settings agree with the daemon's
// embedder, and how to align those that do not.
func TestCompareEnvironment(t *testing.T) {
	build := func(cfg embed.Config) embed.Embedder {
		t.Helper()
		e, err := embed.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	ollama := embed.Config{Provider: embed.ProviderOllama, Model: "nomic-embed-text", URL: "http://127.0.0.1:1"}
	ollamaDaemon := EmbedderStatus{Source: EmbedderOfDaemon, Description: embed.Describe(build(ollama))}
	hashDaemon := ofEnvironment(build(embed.Config{Provider: embed.ProviderHash}))
	cases := []struct {
		name   string
		daemon EmbedderStatus
		env    embed.Config
		differ bool
		fix    string // the daemon command that aligns them
		set    string // or the environment
	}{
		{"hash and its old name", hashDaemon, embed.Config{Provider: embed.ProviderBuiltin}, false, "", ""},
		{"hash and uselite", hashDaemon, embed.Config{}, true, "continuity daemon --embedder uselite", "CONTINUITY_EMBEDDER=hash"},
		{"remote, dimension unknown on both sides", ollamaDaemon, ollama, false, "", ""},
		{"remote at another URL", ollamaDaemon, embed.Config{Provider: embed.ProviderOllama, Model: "nomic-embed-text", URL: "http://127.0.0.1:2"}, true,
			"continuity daemon --embedder ollama --embed-model nomic-embed-text --embed-url http://127.0.0.1:2/api",
			"CONTINUITY_EMBEDDER=ollama CONTINUITY_EMBED_MODEL=nomic-embed-text CONTINUITY_EMBED_URL=http://127.0.0.1:1/api"},
		{"remote against uselite", ollamaDaemon, embed.Config{}, true, "continuity daemon --embedder uselite",
			"CONTINUITY_EMBEDDER=ollama CONTINUITY_EMBED_MODEL=nomic-embed-text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.daemon
			env := compareEnvironment(&s, build(c.env), nil)
			if (env != nil) != c.differ || (s.Note != "") != c.differ || (s.Environment != "") != c.differ {
				t.Fatalf("differ = %v, want %v: %+v", env != nil, c.differ, s)
			}
			if !c.differ {
				return
			}
			if !strings.Contains(s.Note, c.fix) || !strings.Contains(s.Note, c.set) {
				t.Errorf("note %q lacks %q or %q", s.Note, c.fix, c.set)
			}
			if s.Environment != env.Name() || !strings.Contains(s.Note, env.Name()) {
				t.Errorf("the note does not name the environment's %q: %q", env.Name(), s.Note)
			}
		})
	}
}

// TestOfDaemon: whether the daemon reaches its remote embedder, from what
// its worker reports.
func TestOfDaemon(t *testing.T) {
	remote := &embed.Description{Provider: embed.ProviderOllama, Model: "m", Remote: true, URL: "http://h/api"}
	local := &embed.Description{Provider: embed.ProviderHash, Model: "hash-v2", Dimension: 256}
	yes, no := true, false
	cases := []struct {
		name string
		p    embedding.Progress
		want *bool
	}{
		{"remote, failing", embedding.Progress{Embedder: remote, LastError: "connection refused"}, &no},
		{"remote, embedded", embedding.Progress{Embedder: remote, Space: "ollama:m:8#user|ai", Stored: 3}, &yes},
		{"remote, not called yet", embedding.Progress{Embedder: remote}, nil},
		{"in the binary", embedding.Progress{Embedder: local, Stored: 3}, nil},
		{"in the binary, failing", embedding.Progress{Embedder: local, LastError: "database is locked"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := ofDaemon(c.p)
			if s.Source != EmbedderOfDaemon || s.LastError != c.p.LastError || s.Provider != c.p.Embedder.Provider {
				t.Errorf("ofDaemon = %+v", s)
			}
			switch {
			case c.want == nil && s.Reachable != nil, c.want != nil && (s.Reachable == nil || *s.Reachable != *c.want):
				t.Errorf("reachable = %v, want %v", s.Reachable, c.want)
			}
		})
	}
}
