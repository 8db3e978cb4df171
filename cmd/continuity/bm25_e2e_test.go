package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/follow/lexicon"
)

// bm25Words are the words of TestBM25EngineE2E's exchanges.
var bm25Words = func() []string {
	ws := strings.Fields(`the and of deploy deployed pipeline cache cached docker image layer timeout retry
		webhook stripe payment invoice database migration index query latency sqlite lock watcher token
		budget resume session search vector fusion ranking kernel memory leak Leak café naïve`)
	for i := range 400 {
		ws = append(ws, fmt.Sprintf("w%d", i))
	}
	return ws
}()

// bm25Log writes n exchanges of random words over sessions s0..s9 (s(k+1)
// resumes s(k) for k < 3), in one write per 1000 lines, as `>>` does.
func bm25Log(ws *workspace, rng *rand.Rand, file string, first, n int) {
	z := rand.NewZipf(rng, 1.1, 2, uint64(len(bm25Words)-1))
	text := func(k int) string {
		var b []string
		for range k {
			b = append(b, bm25Words[z.Uint64()])
		}
		return strings.Join(b, " ")
	}
	var buf strings.Builder
	for i := first; i < first+n; i++ {
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		b, _ := json.Marshal(map[string]string{"type": "exchange", "session_id": fmt.Sprintf("s%d", i%10), "timestamp": ts,
			"user": text(1 + rng.IntN(10)), "ai": text(rng.IntN(30))})
		buf.Write(b)
		buf.WriteByte('\n')
		if i == first {
			for k := range 3 {
				b, _ := json.Marshal(map[string]string{"type": "session_resume", "previous_session": fmt.Sprintf("s%d", k),
					"new_session": fmt.Sprintf("s%d", k+1), "timestamp": ts})
				buf.Write(b)
				buf.WriteByte('\n')
			}
		}
		if buf.Len() > 0 && (i-first)%1000 == 999 {
			ws.appendRaw(file, []byte(buf.String()))
			buf.Reset()
		}
	}
	if buf.Len() > 0 {
		ws.appendRaw(file, []byte(buf.String()))
	}
}

// bm25Queries are the searches whose answers TestBM25EngineE2E compares:
// plain words (which the engine answers) in BM25 and hybrid modes, with
// and without a session, chain or time filter, and a query of a word no
// exchange holds.
func bm25Queries(rng *rand.Rand) [][]string {
	var qs [][]string
	for i := range 24 {
		var ws []string
		for range 1 + rng.IntN(4) {
			ws = append(ws, bm25Words[rng.IntN(len(bm25Words))])
		}
		q := []string{"search", "--json", "--min-score", "0", "--limit", "30"}
		switch i % 4 {
		case 0:
			q = append(q, "--mode", "bm25")
		case 1:
			q = append(q, "--mode", "bm25", "--chain", "s3")
		case 2:
			q = append(q, "--session", "s6", "--since", "2026-01-02")
		}
		qs = append(qs, append(q, strings.Join(ws, " ")))
	}
	return append(qs, []string{"search", "--json", "--mode", "bm25", "nowhere"})
}

// answers runs the queries and returns their outputs.
func (w *workspace) answers(qs [][]string) []string {
	w.t.Helper()
	out := make([]string, len(qs))
	for i, q := range qs {
		o, errs, code := w.cli(q...)
		if code != 0 {
			w.t.Fatalf("%v: exit %d: %s", q, code, errs)
		}
		out[i] = o
	}
	return out
}

// waitBM25 waits until the daemon's bm25 engine is ready and holds docs
// exchanges, and returns its status.
func (w *workspace) waitBM25(docs int) lexicon.Status {
	w.t.Helper()
	var st engine.StatusReport
	eventually(w.t, 60*time.Second, fmt.Sprintf("the bm25 engine ready with %d exchanges", docs), func() bool {
		st = w.status()
		// FTS5 too must hold every exchange: the read-only search the
		// answers are compared with is FTS5's, and only the daemon's
		// indexer brings it up to date.
		return st.BM25 != nil && st.BM25.State == "ready" && st.BM25.Docs == docs && st.LagBytes == 0 && st.EmbedPending == 0 &&
			st.FullTextPending == 0
	})
	// Hybrid answers compare only once the daemon's vector space is
	// loaded too.
	eventually(w.t, 30*time.Second, "the daemon's vector space loaded", func() bool {
		out, _, code := w.cli("search", "--json", "docker")
		return code == 0 && !strings.Contains(out, "vectors_missing")
	})
	return *st.BM25
}

// TestBM25EngineE2E: the daemon builds its bm25 engine in the background
// and survives a kill -9 in the middle of the build; once ready, it answers
// BM25 and hybrid searches exactly as FTS5 does (the same output as the
// read-only search of a stopped daemon), after appends made with `>>`,
// after a restart from its files, and after a forget, which removes its
// files and builds it again.
func TestBM25EngineE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and rebuilds an index of 12,000 exchanges")
	}
	ws := newWorkspace(t)
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 12000
	bm25Log(ws, rng, "big.jsonl", 0, n)
	if out, errs, code := ws.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: exit %d: %s %s", code, out, errs)
	}
	dir := filepath.Join(ws.root, ".praxis-os", ".cache", "continuity", lexicon.DirName)

	// A slow build (a pause after each step of 4000 events, a flush after
	// each), killed once it has flushed part of the exchanges.
	cmd := exec.Command(binPath, "daemon", "--root", ws.root, "--log-level", "debug")
	cmd.Env = append(os.Environ(), envTestBM25Pause+"=400ms", envTestBM25Flush+"=1000")
	d := ws.start(cmd)
	eventually(t, 60*time.Second, "the bm25 engine building", func() bool {
		st := ws.status()
		return st.BM25 != nil && st.BM25.State == "building" && st.BM25.Docs >= 4000
	})
	d.kill()
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		t.Fatalf("no engine files after a partial build: %v %v", entries, err)
	}

	// Restarted, it goes on from its files (or starts again if they are
	// unusable) and gets ready.
	d = ws.startDaemon()
	st := ws.waitBM25(n)
	if st.Behind != 0 {
		t.Fatalf("ready but behind: %+v", st)
	}
	checkPrivate(t, dir)

	// Appends with >> while it runs: the engine follows.
	bm25Log(ws, rng, "more.jsonl", n, 5)
	ws.shellAppend("more.jsonl", exchangeLine("s5", "late-1", "docker cache timeout appended late", "retry the webhook"))
	ws.waitBM25(n + 6)
	qs := bm25Queries(rng)
	viaEngine := ws.answers(qs)
	st = ws.waitBM25(n + 6)
	if st.Answered < int64(len(qs)) || st.FellBack != 0 {
		t.Fatalf("the engine answered %d plain-word queries and left %d to FTS5, want %d and 0", st.Answered, st.FellBack, len(qs))
	}
	text, _, _ := ws.cli("status")
	if want := fmt.Sprintf(`bm25 engine +ready: %d exchanges, .*[1-9][0-9]* queries answered, 0 left to FTS5`, n+6); !regexp.MustCompile(want).MatchString(text) {
		t.Errorf("status does not say %q:\n%s", want, text)
	}
	d.stop(t)
	if text, _, _ := ws.cli("status"); !strings.Contains(text, "bm25 engine") || !strings.Contains(text, "not running") {
		t.Errorf("status without a daemon does not say the engine is not running:\n%s", text)
	}
	if got := ws.answers(qs); !slicesEqualReport(t, "after appends", qs, viaEngine, got) {
		return
	}

	// A restart opens the engine from its files, without a build.
	d = ws.startDaemon()
	ws.waitBM25(n + 6)
	if strings.Contains(d.stderr.String(), "catching up with the index") {
		t.Errorf("the engine was built again after a clean restart:\n%s", d.stderr)
	}
	if again := ws.answers(qs); !slicesEqualReport(t, "after a restart", qs, viaEngine, again) {
		return
	}

	// Forget: the engine's files go with the session, and it is built
	// again without it.
	out, _, _ := ws.cli("sessions", "--json")
	var ss struct {
		Sessions []struct {
			ID        string `json:"id"`
			Exchanges int64  `json:"exchanges"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &ss); err != nil {
		t.Fatalf("sessions --json: %v\n%s", err, out)
	}
	var exchanges int64
	for _, s := range ss.Sessions {
		if s.ID == "s5" {
			exchanges = s.Exchanges
		}
	}
	if exchanges == 0 {
		t.Fatalf("no exchange of s5:\n%s", out)
	}
	if out, errs, code := ws.cli("forget", "--session", "s5"); code != 0 {
		t.Fatalf("forget: exit %d: %s %s", code, out, errs)
	}
	ws.waitBM25(n + 6 - int(exchanges))
	viaEngine = ws.answers(qs)
	d.stop(t)
	if got := ws.answers(qs); !slicesEqualReport(t, "after a forget", qs, viaEngine, got) {
		return
	}
	for _, a := range viaEngine {
		if strings.Contains(a, `"session_id": "s5"`) {
			t.Fatalf("a forgotten session's exchange was found:\n%s", a)
		}
	}
}

// slicesEqualReport fails the test when a query's answers differ.
func slicesEqualReport(t *testing.T, when string, qs [][]string, daemon, readOnly []string) bool {
	t.Helper()
	for i := range qs {
		if daemon[i] != readOnly[i] {
			t.Errorf("%s: %v: the daemon (bm25 engine) answered\n%s\nthe read-only search (FTS5)\n%s", when, qs[i], daemon[i], readOnly[i])
			return false
		}
	}
	return true
}
