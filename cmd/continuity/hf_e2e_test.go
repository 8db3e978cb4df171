package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed/hf"
	"github.com/praxis-os/continuity/internal/shareddata"
)

// goldenModel returns a model folder of ../shared/data/bert-golden and
// its reference rows (text, input_ids, tokens, embedding as transformers
// and sentence-transformers compute them), skipping when the shared data
// is absent.
func goldenModel(t *testing.T, name string) (string, []embedOutput) {
	t.Helper()
	dir := shareddata.Require(t, "bert-golden/"+name)
	f, err := os.Open(filepath.Join(dir, "golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []embedOutput
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var r struct {
			Text      string    `json:"text"`
			InputIDs  []int32   `json:"input_ids"`
			Tokens    []string  `json:"tokens"`
			Embedding []float32 `json:"embedding"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, embedOutput{Text: r.Text, InputIDs: r.InputIDs, Tokens: r.Tokens, Vector: r.Embedding})
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no reference rows", dir)
	}
	return dir, rows
}

// TestEmbedGolden runs the built binary's `continuity embed --embedder hf
// --embed-model DIR --ids --json --chunks 1` over the 54 reference texts
// of each tiny model (accents, CJK, emoji, control and zero-width
// characters, a 300-character word, literal special tokens, texts longer
// than the window) and checks every id list and token exactly and every
// vector within 1e-4 of what Hugging Face's code computes. --chunks 1
// reads what fits the window, as sentence-transformers truncates. No
// daemon, no workspace: the command must not create an index.
func TestEmbedGolden(t *testing.T) {
	for _, name := range []string{"tiny-bert-mean", "tiny-bert-cls"} {
		t.Run(name, func(t *testing.T) {
			dir, want := goldenModel(t, name)
			cwd := t.TempDir()
			texts := make([]string, len(want))
			for i, r := range want {
				texts[i] = r.Text
			}
			cmd := exec.Command(binPath, append([]string{"embed", "--embedder", "hf", "--embed-model", dir, "--ids", "--json", "--chunks", "1", "--"}, texts...)...)
			cmd.Dir = cwd
			cmd.Env = append(os.Environ(), hf.EnvModels+"="+filepath.Join(cwd, "no-cache"))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("embed: %v\n%s", err, errb.String())
			}
			var got []embedOutput
			dec := json.NewDecoder(&out)
			for dec.More() {
				var o embedOutput
				if err := dec.Decode(&o); err != nil {
					t.Fatal(err)
				}
				got = append(got, o)
			}
			if len(got) != len(want) {
				t.Fatalf("%d objects for %d texts", len(got), len(want))
			}
			idsOK, vecOK, worst := 0, 0, 0.0
			for i, w := range want {
				g := got[i]
				if g.Text != w.Text {
					t.Errorf("object %d: text %q, want %q", i, g.Text, w.Text)
				}
				if slices.Equal(g.InputIDs, w.InputIDs) && slices.Equal(g.Tokens, w.Tokens) {
					idsOK++
				} else {
					t.Errorf("%.50q: ids %v %q, want %v %q", w.Text, g.InputIDs, g.Tokens, w.InputIDs, w.Tokens)
				}
				d := 0.0
				if len(g.Vector) != len(w.Vector) {
					d = math.Inf(1)
				}
				for j := range min(len(g.Vector), len(w.Vector)) {
					d = max(d, math.Abs(float64(g.Vector[j])-float64(w.Vector[j])))
				}
				worst = max(worst, d)
				if d <= 1e-4 {
					vecOK++
				} else {
					t.Errorf("%.50q: vector off by %g", w.Text, d)
				}
			}
			t.Logf("%s via continuity embed: ids %d/%d, vectors %d/%d within 1e-4 (max abs error %.2g)", name, idsOK, len(want), vecOK, len(want), worst)
			if _, err := os.Stat(filepath.Join(cwd, ".praxis-os")); err == nil {
				t.Error("continuity embed created a workspace folder")
			}
			if _, err := os.Stat(filepath.Join(cwd, "no-cache")); err == nil {
				t.Error("continuity embed created the model cache")
			}
		})
	}
}

// TestEmbedMissingModel: an hf model that is not installed is an error
// that says how to pull it, and nothing is downloaded (no network, no
// cache folder created).
func TestEmbedMissingModel(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "models")
	cmd := exec.Command(binPath, "embed", "--embedder", "hf", "--embed-model", "bge-small-en-v1.5", "hello")
	cmd.Env = append(os.Environ(), hf.EnvModels+"="+cache, hf.EnvEndpoint+"=http://127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("embed with a missing model succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "continuity model pull bge-small-en-v1.5") {
		t.Errorf("the error does not say how to pull the model:\n%s", out)
	}
	if _, err := os.Stat(cache); err == nil {
		t.Error("the model cache was created")
	}
}

// TestDaemonHFEmbedder: a daemon started with --embedder hf on a model
// folder embeds the exchanges appended with >>, status shows the hf
// identity with nothing left to embed, and search finds by vectors.
func TestDaemonHFEmbedder(t *testing.T) {
	dir, _ := goldenModel(t, "tiny-bert-mean")
	w := newWorkspace(t)
	lines := []string{
		`{"type":"exchange","session_id":"s1","timestamp":"2026-11-22T10:00:00Z","user":"the watcher tails the conversations folder","ai":"yes, from the committed offset"}`,
		`{"type":"exchange","session_id":"s1","timestamp":"2026-11-22T10:01:00Z","user":"SELECT * FROM events WHERE session_id = 'abc';","ai":"use the index"}`,
		`{"type":"exchange","session_id":"s1","timestamp":"2026-11-22T10:02:00Z","user":"café résumé naïve façade","ai":"accents are stripped"}`,
	}
	for _, l := range lines {
		w.shellAppend("a.jsonl", l+"\n")
	}
	d := w.start(exec.Command(binPath, "daemon", "--root", w.root, "--log-level", "debug", "--embedder", "hf", "--embed-model", dir))
	deadline := time.Now().Add(60 * time.Second)
	var st map[string]any
	for {
		d.alive(t)
		out, errOut, code := w.cli("status", "--json", "--embedder", "hf", "--embed-model", dir)
		if code == 0 {
			st = nil
			if err := json.Unmarshal([]byte(out), &st); err != nil {
				t.Fatalf("status --json: %v\n%s", err, out)
			}
			if st["embed_pending"] == float64(0) && st["exchanges"] == float64(len(lines)) {
				break
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("status: %d %s", code, errOut)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exchanges were not all embedded within 60s: %v\n%s", st, d.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	id, _ := st["embedder"].(string)
	if !strings.HasPrefix(id, "hf:tiny-bert-mean@sha256-") {
		t.Errorf("status embedder %q, want the hf model's identity", id)
	}
	if vecs, _ := st["vectors"].(map[string]any); vecs[id] != float64(len(lines)) {
		t.Errorf("status vectors %v, want %d of %s", st["vectors"], len(lines), id)
	}
	out, errOut, code := w.cli("search", "--json", "--embedder", "hf", "--embed-model", dir, "watcher conversations folder")
	if code != 0 || !strings.Contains(out, "watcher") {
		t.Errorf("search: %d %s %s", code, out, errOut)
	}
	d.stop(t)
}

// TestModelCommands: `model pull NAME --from DIR` installs a copy of a
// folder (without NAME: under the folder's name), `model list` shows it
// and that it loads, `embed` uses it by name, `model rm` removes it; `model pull` of an unknown name without a
// revision is refused before any network use.
func TestModelCommands(t *testing.T) {
	dir, _ := goldenModel(t, "tiny-bert-cls")
	cache := filepath.Join(t.TempDir(), "models")
	run := func(args ...string) (string, int) {
		cmd := exec.Command(binPath, args...)
		cmd.Env = append(os.Environ(), hf.EnvModels+"="+cache, hf.EnvEndpoint+"=http://127.0.0.1:1")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	if out, code := run("model", "pull", "tiny", "--from", dir); code != 0 || !strings.Contains(out, "installed tiny") {
		t.Fatalf("pull --from: %d %s", code, out)
	}
	out, code := run("model", "list", "--json")
	var list struct {
		Models []modelRow `json:"models"`
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Models) != 1 || !list.Models[0].Loads || list.Models[0].Name != "tiny" || list.Models[0].Source != "folder" {
		t.Fatalf("model list: %d %s", code, out)
	}
	if out, code := run("embed", "--embedder", "hf", "--embed-model", "tiny", "--json", "hello"); code != 0 || !strings.Contains(out, `"vector":[`) {
		t.Errorf("embed with the installed model: %d %s", code, out)
	}
	if out, code := run("model", "pull", "owner/model"); code == 0 || !strings.Contains(out, "--revision") {
		t.Errorf("pull of an unknown hub id without a revision: %d %s", code, out)
	}
	if out, code := run("model", "rm", "tiny"); code != 0 || !strings.Contains(out, "removed tiny") {
		t.Errorf("model rm: %d %s", code, out)
	}
	// Without NAME: the folder's name, said.
	if out, code := run("model", "pull", "--from", dir); code != 0 || !strings.Contains(out, `installing the model as "tiny-bert-cls", the folder's name`) || !strings.Contains(out, "installed tiny-bert-cls") {
		t.Errorf("pull --from without a name: %d %s", code, out)
	}
	if out, code := run("model", "rm", "tiny-bert-cls"); code != 0 {
		t.Errorf("model rm: %d %s", code, out)
	}
	if out, _ := run("model", "list"); !strings.Contains(out, "no model installed") {
		t.Errorf("model list after rm: %s", out)
	}
}
