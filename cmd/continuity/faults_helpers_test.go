package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
)

// Helpers of the fault-matrix tests (faults_e2e_test.go).

// soak reports whether the long variants run (CONTINUITY_SOAK=1).
func soak() bool { return os.Getenv("CONTINUITY_SOAK") != "" }

// idlessLine is an exchange line without a producer id: a duplicate of it
// is stored twice (ids would hide duplicates behind the id deduplication),
// so counting events catches any line indexed twice.
func idlessLine(session string, n int, pad int) string {
	b, _ := json.Marshal(map[string]string{
		"type": "exchange", "session_id": session, "timestamp": "2026-11-01T10:00:00Z",
		"user": fmt.Sprintf("%s question %d %s", session, n, strings.Repeat("words of padding ", pad/17)),
		"ai":   fmt.Sprintf("answer %d", n),
	})
	return string(b) + "\n"
}

// writeLogOfSize writes a log of about size bytes of idless exchanges and
// returns how many lines it holds.
func writeLogOfSize(t *testing.T, path, session string, size int) int {
	t.Helper()
	var b strings.Builder
	n := 0
	for b.Len() < size {
		n++
		b.WriteString(idlessLine(session, n, 500))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return n
}

// exchanges is the number of exchanges the index holds (status --json), -1
// when status fails (no index yet: the cache was just deleted).
func (w *workspace) exchanges() int64 {
	w.t.Helper()
	out, _, code := w.cli("status", "--json")
	var st engine.StatusReport
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		return -1
	}
	return st.Exchanges
}

// waitExchanges waits until the index holds want exchanges, failing if it
// ever holds more.
func (w *workspace) waitExchanges(want int64, timeout time.Duration) {
	w.t.Helper()
	timeout = waitLimit(timeout)
	deadline := time.Now().Add(timeout)
	for {
		got := w.exchanges()
		if got > want {
			w.t.Fatalf("index holds %d exchanges, want %d: lines indexed twice", got, want)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			if got < 0 {
				// No count: say why status failed, not "lines lost".
				_, errs, code := w.cli("status", "--json")
				w.t.Fatalf("no exchange count after %s, want %d: status exits %d: %s", timeout, want, code, errs)
			}
			w.t.Fatalf("index holds %d exchanges after %s, want %d: lines lost", got, timeout, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFileCaughtUp waits until exactly one live generation follows name and
// its committed offset is the file's size.
func (w *workspace) waitFileCaughtUp(name string, timeout time.Duration) {
	w.t.Helper()
	eventually(w.t, timeout, name+" followed by one generation, caught up", func() bool {
		fi, err := os.Stat(filepath.Join(w.logs, name))
		if err != nil {
			return false
		}
		var live []engine.FileStatus
		for _, f := range w.status().Files {
			if f.Path == name && !f.Gone {
				live = append(live, f)
			}
		}
		return len(live) == 1 && live[0].Offset == fi.Size()
	})
}

// runIn runs a command in dir and fails the test on error.
func runIn(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// doctor runs `doctor --json` and returns its checks by name.
func (w *workspace) doctor() (map[string]doctorCheckJSON, string) {
	w.t.Helper()
	out, _, _ := w.cli("doctor", "--json")
	var r struct {
		Checks []doctorCheckJSON `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		w.t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	m := map[string]doctorCheckJSON{}
	for _, c := range r.Checks {
		m[c.Name] = c
	}
	text, _, _ := w.cli("doctor")
	return m, text
}

type doctorCheckJSON struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// showDaemonLog logs the daemon's non-debug log lines when the test failed
// or CONTINUITY_FAULT_LOG=1: what happened during a fault, for the record.
func showDaemonLog(t *testing.T, d *daemonProc) {
	t.Helper()
	if os.Getenv("CONTINUITY_FAULT_LOG") == "" && !t.Failed() {
		return
	}
	var keep []string
	for _, l := range strings.Split(d.stderr.String(), "\n") {
		if l != "" && !strings.Contains(l, "level=DEBUG") {
			keep = append(keep, l)
		}
	}
	if len(keep) > 40 {
		keep = append(keep[:20], append([]string{"…"}, keep[len(keep)-20:]...)...)
	}
	t.Logf("daemon log:\n%s", strings.Join(keep, "\n"))
}
