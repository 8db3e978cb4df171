package main

import (
	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/share/sharetest"

	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binPath is the continuity binary built once for the end-to-end tests.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "continuity-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "continuity")
	// The binaries these tests start use the hashed embedder unless a test
	// says otherwise: thousands of exchanges embed in a second with it, in
	// minutes with the default model on a busy CI machine. The tests of the
	// default model (TestDefaultEmbedderMigration,
	// TestSecretsRedactedBeforeStorage) set CONTINUITY_EMBEDDER themselves.
	if os.Getenv(embed.EnvProvider) == "" {
		os.Setenv(embed.EnvProvider, embed.ProviderHash)
	}
	// The machine's name is in the names of the files continuity writes
	// (session-<id>~m1.jsonl): the same on every test machine. The
	// two-machine tests set their own.
	os.Setenv(logformat.MachineEnv, "m1")
	if bin := os.Getenv("CONTINUITY_E2E_BIN"); bin != "" {
		// Another build (an older commit's, to see a test fail before a
		// change): the tests run against it as they are.
		binPath = bin
	} else {
		// The binary carries the fault injection of engine/testhooks.go
		// (its build tag), which the shipped one does not.
		args := []string{"build", "-tags", "sqlite_fts5,continuity_testhooks", "-buildvcs=auto", "-o", binPath}
		if raceEnabled {
			// go test -race: the daemon, ingest and mcp these tests
			// start are checked for data races too (a race makes the
			// binary exit 66 and print the report on stderr).
			args = append(args, "-race")
		}
		build := exec.Command("go", append(args, ".")...)
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building continuity for end-to-end tests:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	sharetest.Stop() // the PostgreSQL of the team memory tests, if they started one
	os.RemoveAll(dir)
	os.Exit(code)
}

// The test hooks of the binary built above (engine/testhooks.go):
// while the file envTestFaultCommit names exists, the daemon's commits
// fail with ENOSPC; envTestBM25Pause (a duration) pauses the bm25
// engine's build after each step, and envTestBM25Flush (a count) makes it
// flush that often.
const (
	envTestFaultCommit = "CONTINUITY_TEST_FAULT_COMMIT"
	envTestBM25Pause   = "CONTINUITY_TEST_BM25_PAUSE"
	envTestBM25Flush   = "CONTINUITY_TEST_BM25_FLUSH"
)

// workspace is a temporary workspace with its logs folder.
type workspace struct {
	t    *testing.T
	root string
	logs string
	// cred, when set, is the user the daemon runs as (asNobody); the
	// CLI runs as that user too, as a user's CLI runs as its daemon's
	// user. A CLI run as root beside a daemon of another user races it:
	// SQLite creates index.db's -wal or -shm as root and hands it to the
	// file's owner a moment later, and a daemon opening it in between
	// fails with "permission denied" (seen in CI: TestFaultPermissions).
	cred *syscall.Credential
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	root := t.TempDir()
	logs := filepath.Join(root, ".praxis-os", ".conversations")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	return &workspace{t: t, root: root, logs: logs}
}

// cli runs the binary to completion and returns stdout, stderr and the
// exit code.
func (w *workspace) cli(args ...string) (string, string, int) {
	w.t.Helper()
	cmd := exec.Command(binPath, append([]string{"--root", w.root}, args...)...)
	if w.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: w.cred}
	}
	return runCmd(w.t, cmd)
}

// runCmd runs cmd to completion and returns its stdout, stderr and exit
// code; a binary built with -race that reported a data race fails the
// test.
func runCmd(t *testing.T, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	checkRace(t, fmt.Sprint(cmd.Args[1:]), errb.String())
	return out.String(), errb.String(), code
}

// checkRace fails the test when a binary built with -race reported a
// data race on its stderr.
func checkRace(t *testing.T, what, stderr string) {
	t.Helper()
	if i := strings.Index(stderr, "WARNING: DATA RACE"); i >= 0 {
		t.Errorf("continuity %s: data race:\n%s", what, stderr[i:])
	}
}

// daemonProc is a running `continuity daemon`.
type daemonProc struct {
	cmd    *exec.Cmd
	stderr *syncWriter // read while the daemon writes it
	done   chan error
}

func (w *workspace) startDaemon(extra ...string) *daemonProc {
	w.t.Helper()
	return w.start(exec.Command(binPath, append([]string{"daemon", "--root", w.root, "--log-level", "debug"}, extra...)...))
}

// start runs a daemon command and kills it at the end of the test.
func (w *workspace) start(cmd *exec.Cmd) *daemonProc {
	w.t.Helper()
	errb := &syncWriter{b: &bytes.Buffer{}}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	d := &daemonProc{cmd: cmd, stderr: errb, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	w.t.Cleanup(func() {
		d.kill()
		checkRace(w.t, fmt.Sprint(cmd.Args[1:]), d.stderr.String())
	})
	return d
}

func (d *daemonProc) kill() {
	if d.cmd.ProcessState == nil {
		d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
		d.done <- nil
	}
}

// stop sends SIGTERM and checks the daemonProc exits cleanly.
func (d *daemonProc) stop(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err
		if err != nil {
			t.Errorf("daemonProc exited with %v; stderr:\n%s", err, d.stderr)
		}
	case <-time.After(waitLimit(60 * time.Second)):
		t.Fatalf("daemonProc did not stop within a minute of SIGTERM; stderr:\n%s", d.stderr)
	}
}

// alive fails the test if the daemonProc has exited.
func (d *daemonProc) alive(t *testing.T) {
	t.Helper()
	select {
	case err := <-d.done:
		d.done <- err
		t.Fatalf("daemonProc exited (%v); stderr:\n%s", err, d.stderr)
	default:
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// status runs `status --json`.
func (w *workspace) status() engine.StatusReport {
	w.t.Helper()
	out, errs, code := w.cli("status", "--json")
	var st engine.StatusReport
	if code != 0 {
		w.t.Logf("status failed (exit %d): %s", code, errs)
		return st
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		w.t.Fatalf("status --json: %v\n%s%s", err, out, errs)
	}
	return st
}

type rejectJSON struct {
	File    string `json:"file"`
	Line    int64  `json:"line"`
	Offset  int64  `json:"offset"`
	Reason  string `json:"reason"`
	Excerpt string `json:"excerpt"`
}

func (w *workspace) rejects() []rejectJSON {
	w.t.Helper()
	out, errs, code := w.cli("rejects", "--json")
	if code != 0 {
		w.t.Fatalf("rejects --json: exit %d: %s", code, errs)
	}
	var r struct {
		Rejects []rejectJSON `json:"rejects"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		w.t.Fatalf("rejects --json: %v\n%s", err, out)
	}
	return r.Rejects
}

// waitLimit is a wait's limit as the test states it, times waitScale.
func waitLimit(d time.Duration) time.Duration { return d * waitScale }

// eventually polls cond until it holds or the timeout (times waitScale)
// passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	timeout = waitLimit(timeout)
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// appendRaw appends p to a log with one write(2) on an O_APPEND descriptor,
// as `>>` does.
func (w *workspace) appendRaw(name string, p []byte) {
	w.t.Helper()
	f, err := os.OpenFile(filepath.Join(w.logs, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	if n, err := f.Write(p); err != nil || n != len(p) {
		w.t.Fatalf("append %d bytes: %d, %v", len(p), n, err)
	}
}

// shellAppend appends with a real shell `>>` redirection.
func (w *workspace) shellAppend(name, text string) {
	w.t.Helper()
	cmd := exec.Command("sh", "-c", `printf '%s' "$1" >> "$2"`, "sh", text, filepath.Join(w.logs, name))
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("sh >>: %v %s", err, out)
	}
}

func exchangeLine(session, id, user, ai string) string {
	b, _ := json.Marshal(map[string]string{"type": "exchange", "session_id": session, "id": id, "user": user, "ai": ai, "timestamp": "2026-11-01T10:00:00Z"})
	return string(b) + "\n"
}

func hasReject(rs []rejectJSON, file string, line int64, reasonPart string) bool {
	for _, r := range rs {
		if r.File == file && r.Line == line && strings.Contains(strings.ToLower(r.Reason), reasonPart) {
			return true
		}
	}
	return false
}

// caughtUp appends a marker exchange to a new log and waits until the
// daemon has indexed it and status shows every log followed (none not
// seen yet or missing) with lagBytes bytes of them not indexed (an
// unfinished last line): want counts the exchanges, the marker
// included. A new file makes the daemon rescan the folder and read every
// log, so what was written before the call has then been read; more
// exchanges than want fail at once (a line indexed twice). It replaces a
// sleep before a check that something did not happen.
func (w *workspace) caughtUp(want, lagBytes int64) {
	w.t.Helper()
	name := fmt.Sprintf("caught-up-%d.jsonl", time.Now().UnixNano())
	w.shellAppend(name, exchangeLine("caught-up", name, "the caught-up marker "+name, "ok"))
	deadline := time.Now().Add(waitLimit(30 * time.Second))
	for {
		st := w.status()
		if st.Exchanges > want {
			w.t.Fatalf("index holds %d exchanges, want %d: lines indexed twice", st.Exchanges, want)
		}
		settled := st.Exchanges == want && st.LagBytes == lagBytes
		for _, f := range st.Files {
			settled = settled && !f.NotSeen && !f.Missing
		}
		if settled {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("not caught up in 30 s: %d exchanges (want %d), %d bytes behind (want %d), files %+v", st.Exchanges, want, st.LagBytes, lagBytes, st.Files)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// importPolled waits until the daemon's follower of agent transcripts
// has ended two more passes over each agent's files (status: import
// polls): one begun after the call has then ended, so what the
// transcripts held at the call is imported. It replaces a sleep before a
// check that nothing more came.
func (w *workspace) importPolled() {
	w.t.Helper()
	polls := func() map[string]int64 {
		out := map[string]int64{}
		if st := w.status(); st.Import != nil {
			for _, a := range st.Import.Agents {
				out[a.Agent] = a.Polls
			}
		}
		return out
	}
	start := polls()
	if len(start) == 0 {
		w.t.Fatal("status lists no agent followed")
	}
	eventually(w.t, 30*time.Second, "two more passes of the transcripts' follower", func() bool {
		now := polls()
		for a, n := range start {
			if now[a] < n+2 {
				return false
			}
		}
		return true
	})
}
