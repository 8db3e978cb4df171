package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
)

// fakeEmbedder speaks the real Ollama (POST /api/embeddings {"model","prompt"}
// -> {"embedding"}) and OpenAI (POST /v1/embeddings {"input","model"} ->
// {"data":[{"embedding"}]}) wire protocols, with a deterministic toy
// embedding of dimension 8.
type fakeEmbedder struct {
	calls atomic.Int64
	delay time.Duration
}

func toyVector(text string) []float64 {
	v := make([]float64, 8)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%8]++
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		v[0], n = 1, 1
	}
	for i := range v {
		v[i] /= math.Sqrt(n)
	}
	return v
}

func (f *fakeEmbedder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	time.Sleep(f.delay)
	var body struct{ Model, Prompt, Input string }
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil || body.Model != "toy" {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "/api/embeddings":
		json.NewEncoder(w).Encode(map[string]any{"embedding": toyVector(body.Prompt)})
	case "/v1/embeddings":
		if r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, `{"error":{"message":"Incorrect API key provided"}}`, http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": "toy",
			"data": []any{map[string]any{"object": "embedding", "index": 0, "embedding": toyVector(body.Input)}}})
	default:
		http.NotFound(w, r)
	}
}

// TestRemoteEmbedderDown: with the embedding server down, events are still
// indexed and lexically searchable; when it comes back, the vectors are
// filled in. A SIGKILL during the embedding loses nothing: the queue is
// durable and the restarted daemon finishes it.
func TestRemoteEmbedderDown(t *testing.T) {
	for _, tc := range []struct{ provider, path string }{{"ollama", "/api"}, {"openai", "/v1"}} {
		t.Run(tc.provider, func(t *testing.T) {
			t.Parallel()
			// Reserve an address, then leave it closed: the server is down.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()

			ws := newWorkspace(t)
			env := []string{"CONTINUITY_EMBEDDER=" + tc.provider, "CONTINUITY_EMBED_URL=http://" + addr + tc.path,
				"CONTINUITY_EMBED_MODEL=toy", "CONTINUITY_EMBED_DIM=8", "CONTINUITY_EMBED_API_KEY=test-key"}
			start := func() *daemonProc { return ws.startDaemonEnv(env) }
			d := start()
			const n = 200
			var sb strings.Builder
			for i := 0; i < n; i++ {
				sb.WriteString(exchangeLine("emb", fmt.Sprintf("e-%d", i), fmt.Sprintf("question %d about kubernetes ingress", i), "answer"))
			}
			ws.appendRaw("emb.jsonl", []byte(sb.String()))
			eventually(t, 10*time.Second, "events indexed while the embedder is down", func() bool { return ws.status().Exchanges == n })
			out, errs, code := ws.cliEnv(env, "search", "--mode", "bm25", "--json", "kubernetes ingress")
			if code != 0 || !strings.Contains(out, `"id": "e-`) {
				t.Fatalf("lexical search while the embedder is down: %d %s %s", code, out, errs)
			}
			if p := ws.statusEnv(env).EmbedPending; p != n {
				t.Fatalf("embed_pending %d while down, want %d", p, n)
			}

			// The server comes back, slowly; kill the daemon mid-way.
			fake := &fakeEmbedder{delay: 5 * time.Millisecond}
			ln, err = net.Listen("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewUnstartedServer(fake)
			srv.Listener.Close()
			srv.Listener = ln
			srv.Start()
			defer srv.Close()
			eventually(t, 30*time.Second, "embedding under way", func() bool {
				p := ws.statusEnv(env).EmbedPending
				return p >= 0 && p < n
			})
			d.kill()
			d = start()
			eventually(t, 30*time.Second, "every vector filled in after restart", func() bool { return ws.statusEnv(env).EmbedPending == 0 })
			// The index holds every vector; the restarted daemon may still
			// be loading them (or reaching the server), and then says so
			// rather than answer an empty list that reads as "nothing similar".
			eventually(t, 30*time.Second, "vector search after recovery", func() bool {
				out, errs, code = ws.cliEnv(env, "search", "--mode", "vector", "--json", "--limit", "3", "kubernetes ingress question")
				if code != 0 {
					t.Fatalf("vector search after recovery: %d %s %s", code, out, errs)
				}
				var resp engine.SearchResponse
				if err := json.Unmarshal([]byte(out), &resp); err != nil {
					t.Fatalf("vector search after recovery: %v: %s", err, out)
				}
				if len(resp.Results) == 0 && resp.VectorsMissing == "" {
					t.Fatalf("vector search after recovery: no result and no reason: %s", out)
				}
				return strings.Count(out, `"id": "e-`) == 3 && resp.VectorsMissing == ""
			})
			if st := ws.statusEnv(env); st.Vectors[st.Embedder] != n {
				t.Errorf("vectors %v for %s, want %d", st.Vectors, st.Embedder, n)
			}
			d.stop(t)
		})
	}
}

func (w *workspace) startDaemonEnv(env []string) *daemonProc {
	w.t.Helper()
	cmd := exec.Command(binPath, "daemon", "--root", w.root, "--log-level", "debug")
	cmd.Env = append(os.Environ(), env...)
	return w.start(cmd)
}

func (w *workspace) cliEnv(env []string, args ...string) (string, string, int) {
	w.t.Helper()
	cmd := exec.Command(binPath, append([]string{"--root", w.root}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return runCmd(w.t, cmd)
}

func (w *workspace) statusEnv(env []string) engine.StatusReport {
	w.t.Helper()
	out, _, code := w.cliEnv(env, "status", "--json")
	var st engine.StatusReport
	if code == 0 {
		json.Unmarshal([]byte(out), &st)
	}
	return st
}

// TestDefaultEmbedderMigration: an index built with the old default
// ("builtin", the hashed embedder) is re-embedded in the background by a
// daemon started with no embedder settings (uselite), which then searches
// by meaning and keeps the old vectors until they are dropped (issue 33
// item 3); status shows the progress.
func TestDefaultEmbedderMigration(t *testing.T) {
	ws := newWorkspace(t)
	var sb strings.Builder
	for i := 0; i < 30; i++ {
		sb.WriteString(exchangeLine("old", fmt.Sprintf("o-%d", i), fmt.Sprintf("note %d about the release checklist", i), "ok"))
	}
	sb.WriteString(exchangeLine("old", "target", "compilation breaks every time I run it", "install gcc"))
	ws.appendRaw("old.jsonl", []byte(sb.String()))
	old := []string{"CONTINUITY_EMBEDDER=builtin"}
	if out, errs, code := ws.cliEnv(old, "ingest"); code != 0 {
		t.Fatalf("ingest with builtin: %d %s %s", code, out, errs)
	}
	if st := ws.statusEnv(old); st.Embedder != "builtin:hash-v2:256#user|ai" || st.Vectors[st.Embedder] != 31 {
		t.Fatalf("after ingest with builtin: %s %v", st.Embedder, st.Vectors)
	}
	// No embedder settings at all: the default.
	clean := []string{"CONTINUITY_EMBEDDER=", "CONTINUITY_EMBED_MODEL=", "CONTINUITY_EMBED_URL=", "CONTINUITY_EMBED_DIM="}
	d := ws.startDaemonEnv(clean)
	defer d.stop(t)
	const id = "uselite:use-lite-en-0.2.0-f16:512#user|ai"
	eventually(t, 60*time.Second, "re-embedded with uselite", func() bool {
		st := ws.statusEnv(clean)
		return st.Embedder == id && st.EmbedPending == 0 && st.Vectors[id] == 31
	})
	if n := ws.statusEnv(clean).Vectors["builtin:hash-v2:256#user|ai"]; n != 31 {
		t.Errorf("the old embedder's vectors after the switch: %d, want all 31 kept", n)
	}
	if out, errs, code := ws.cliEnv(clean, "vectors", "--drop", "builtin:hash-v2:256#user|ai"); code != 0 || !strings.Contains(out, "dropped 31 vectors") {
		t.Errorf("vectors --drop through the daemon: exit %d, %q %q", code, out, errs)
	}
	if _, ok := ws.statusEnv(clean).Vectors["builtin:hash-v2:256#user|ai"]; ok {
		t.Errorf("the old embedder's vectors outlive vectors --drop")
	}
	out, errs, code := ws.cliEnv(clean, "search", "--mode", "vector", "--json", "--limit", "1", "the build keeps failing")
	if code != 0 || !strings.Contains(out, `"id": "target"`) {
		t.Fatalf("vector search by meaning: %d %s %s", code, out, errs)
	}
	out, _, _ = ws.cliEnv(clean, "status")
	if !strings.Contains(out, "31 of 31 exchanges (100.0%)") {
		t.Errorf("status does not show the embedding progress:\n%s", out)
	}
}
