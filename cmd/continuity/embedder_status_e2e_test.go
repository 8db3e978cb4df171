package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
)

// TestStatusNamesTheDaemonsEmbedder: `status` and `doctor` describe the
// embedder of the running daemon (hash here), with its vectors all built,
// and say so when the command's environment (CONTINUITY_EMBEDDER=uselite)
// chooses another, naming both and how to align them.
func TestStatusNamesTheDaemonsEmbedder(t *testing.T) {
	w := newWorkspace(t)
	for i, q := range []string{"our stripe webhook retries create duplicate orders", "center a div with flexbox", "the postgres pool is exhausted"} {
		w.shellAppend("p.jsonl", exchangeLine("s1", string(rune('a'+i)), q, "an answer about "+q))
	}
	const hashSpace = "builtin:hash-v2:256#user|ai"
	d := w.startDaemon("--embedder", "hash")
	eventually(t, 20*time.Second, "the daemon's vectors", func() bool {
		st := w.status()
		return st.Embedding != nil && st.Embedding.Done == 3 && st.Embedding.Total == 3
	})
	d.alive(t)
	home := t.TempDir()

	for _, c := range []struct {
		name     string
		embedder string // CONTINUITY_EMBEDDER of the commands
		differ   bool
	}{
		{"the same settings", embed.ProviderHash, false},
		{"the default in the environment", embed.ProviderUSELite, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := []string{embed.EnvProvider + "=" + c.embedder, "CONTINUITY_AGENT_HOME=" + home}
			var st engine.StatusReport
			decode(t, w.run(t, env, "status", "--json"), &st)
			i := st.EmbedderInfo
			if st.Embedder != hashSpace || i == nil || i.Source != engine.EmbedderOfDaemon || i.Provider != embed.ProviderHash || st.EmbedPending != 0 {
				t.Fatalf("status describes %q, %+v, %d pending; want the daemon's %s, none pending", st.Embedder, i, st.EmbedPending, hashSpace)
			}
			var doc engine.DoctorReport
			decode(t, w.run(t, env, "doctor", "--json"), &doc)
			if ch, ok := doc.Get("embedder"); !ok || ch.Status != engine.StatusOK || !strings.Contains(ch.Message, "the daemon's hash embedder ("+hashSpace+")") {
				t.Errorf("doctor's embedder check: %+v", ch)
			}
			warn, warned := doc.Get("embedder settings")
			text := w.run(t, env, "status")
			if !c.differ {
				if i.Note != "" || warned || strings.Contains(text, "note") {
					t.Errorf("a note when the settings agree: %q; %+v\n%s", i.Note, warn, text)
				}
				return
			}
			align := "continuity daemon --embedder uselite"
			if !strings.Contains(i.Note, "uselite:") || !strings.Contains(i.Note, align) || !strings.Contains(i.Note, "CONTINUITY_EMBEDDER=hash") {
				t.Errorf("status's note: %q", i.Note)
			}
			if !strings.Contains(text, hashSpace+" (the daemon's: hash, in the binary)") || !strings.Contains(text, align) {
				t.Errorf("status's table:\n%s", text)
			}
			if !warned || warn.Status != engine.StatusWarn || !strings.Contains(warn.Message, hashSpace) || !strings.Contains(warn.Message, "uselite:") || !strings.Contains(warn.Fix, align) {
				t.Errorf("doctor's warning: %+v", warn)
			}
		})
	}
	d.stop(t)
}

// run runs the binary with env added to the test's environment and
// returns its standard output; a failure fails the test.
func (w *workspace) run(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"--root", w.root}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s%s", args, err, out.String(), errb.String())
	}
	return out.String()
}

func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%v:\n%s", err, s)
	}
}
