package main

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The rest of the fault matrix (issue 11); see faults_e2e_test.go for the
// restores, the deleted cache and the deleted full-text index.

// checkDoctor runs doctor and fails unless the check named name has status
// want and its message or fix says each of words.
func (w *workspace) checkDoctor(name, want string, words ...string) {
	w.t.Helper()
	checks, text := w.doctor()
	c, ok := checks[name]
	if !ok || c.Status != want {
		w.t.Errorf("doctor %q: %+v (present %v), want %s\n%s", name, c, ok, want, text)
		return
	}
	for _, word := range words {
		if !strings.Contains(c.Message+" "+c.Fix, word) {
			w.t.Errorf("doctor %q does not say %q: %s / %s", name, word, c.Message, c.Fix)
		}
	}
}

// TestFaultENOSPC: the cache folder's filesystem fills up while lines
// arrive. Commits fail and are retried, the daemon keeps running, doctor
// says the disk is full; once there is room every line is indexed, once.
// It mounts a 4 MiB tmpfs (root only); elsewhere the daemon's commits fail
// with an injected ENOSPC (CONTINUITY_TEST_FAULT_COMMIT).
func TestFaultENOSPC(t *testing.T) {
	ws := newWorkspace(t)
	cache := filepath.Join(ws.root, ".praxis-os", ".cache")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(cache, "filler")
	mounted := true
	mount := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", cache)
	if os.Getenv("CONTINUITY_TEST_NO_MOUNT") != "" { // to run the other variant
		mount = exec.Command("false")
	}
	if out, err := mount.CombinedOutput(); err != nil {
		// Not root: the daemon's commits fail as on a full disk while
		// the flag file exists (a test-only hook).
		t.Logf("cannot mount a small tmpfs (%v %s): injecting ENOSPC instead", err, strings.TrimSpace(string(out)))
		mounted = false
		filler = filepath.Join(t.TempDir(), "disk-full")
		t.Setenv(envTestFaultCommit, filler)
	} else {
		t.Cleanup(func() { exec.Command("umount", "-l", cache).Run() })
	}
	ws.writeLines("a.jsonl", "a", 0, 100)
	d := ws.startDaemon()
	ws.waitExchanges(100, 30*time.Second)

	// Fill the filesystem.
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for mounted {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	n := 300
	if soak() {
		n = 3000
	}
	ws.writeLines("a.jsonl", "a", 100, n)
	eventually(t, 20*time.Second, "the daemon reports the full disk", func() bool {
		s := strings.ToLower(d.stderr.String())
		return strings.Contains(s, "full") || strings.Contains(s, "no space")
	})
	d.alive(t)
	if mounted {
		ws.checkDoctor("disk space", "FAIL", "free some space")
	}
	if got := ws.exchanges(); got < 100 || got > int64(100+n) {
		t.Fatalf("%d exchanges while the disk is full", got)
	}

	os.Remove(filler)
	ws.waitExchanges(int64(100+n), 60*time.Second)
	eventually(t, 60*time.Second, "full-text index caught up", func() bool { return ws.status().FullTextPending == 0 })
	checkFullText(t, ws.root)
	ws.writeLines("a.jsonl", "a", 100+n, 1)
	ws.waitExchanges(int64(101+n), 20*time.Second)
	d.alive(t)
	d.stop(t)
	showDaemonLog(t, d)
}

// TestFaultSQLiteBusy: another process holds index.db's write lock longer
// than the daemon's busy timeout (5 s). Commits fail with "database is
// locked" and are retried; doctor names the holder; when it lets go,
// every line is indexed once.
func TestFaultSQLiteBusy(t *testing.T) {
	ws := newWorkspace(t)
	ws.writeLines("a.jsonl", "a", 0, 50)
	d := ws.startDaemon()
	ws.waitExchanges(50, 30*time.Second)

	dbPath := filepath.Join(ws.root, ".praxis-os", ".cache", "continuity", "index.db")
	other, err := sql.Open("sqlite3", "file:"+dbPath+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin() // BEGIN IMMEDIATE: the write lock, held
	if err != nil {
		t.Fatal(err)
	}
	ws.writeLines("a.jsonl", "a", 50, 100)
	hold := 7 * time.Second
	if soak() {
		hold = 20 * time.Second
	}
	eventually(t, hold+5*time.Second, "the daemon reports the locked database", func() bool {
		return strings.Contains(d.stderr.String(), "locked")
	})
	// Self-check: this process is the one doctor must name. The
	// lock is on index.db-shm, so doctor runs as another process.
	ws.checkDoctor("index write lock", "FAIL", fmt.Sprint(os.Getpid()))
	d.alive(t)
	if got := ws.exchanges(); got != 50 {
		t.Fatalf("%d exchanges while the index is locked, want 50", got)
	}
	time.Sleep(hold - 5*time.Second)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	ws.waitExchanges(150, 60*time.Second)
	checks, _ := ws.doctor()
	if c, ok := checks["index write lock"]; ok {
		t.Errorf("doctor after the lock ended: %+v", c)
	}
	d.alive(t)
	d.stop(t)
	showDaemonLog(t, d)
}

// TestFaultInotifyOverflow: thousands of logs appear at once while the
// daemon cannot read its notifications (stopped with SIGSTOP), more events
// than the kernel queues (fs.inotify.max_queued_events, 16384 by default):
// the queue overflows, the daemon rescans, every line is indexed once.
func TestFaultInotifyOverflow(t *testing.T) {
	files, appends := 1000, 16000
	if soak() {
		files, appends = 5000, 40000
	}
	ws := newWorkspace(t)
	d := ws.startDaemon()
	defer showDaemonLog(t, d)
	ws.waitExchanges(0, 10*time.Second)
	eventually(t, 10*time.Second, "daemon serving", func() bool { return servingPID(ws) == d.cmd.Process.Pid })
	if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < files; i++ {
		name := fmt.Sprintf("burst-%05d.jsonl", i)
		ws.appendRaw(name, []byte(idlessLine(name, 0, 10)))
	}
	// Appends alternating between two files are not merged by inotify:
	// one event each.
	for i := 0; i < appends; i++ {
		ws.appendRaw([]string{"x.jsonl", "y.jsonl"}[i%2], []byte(idlessLine("xy", i, 0)))
	}
	if err := d.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	ws.waitExchanges(int64(files+appends), 120*time.Second)
	if !strings.Contains(d.stderr.String(), "overflowed") {
		t.Logf("fsnotify did not report an overflow (is fs.inotify.max_queued_events above %d?)", files*2+appends)
	}
	ws.checkDoctor("lag", "OK")
	ws.caughtUp(int64(files+appends)+1, 0) // every log read again: nothing twice
	d.alive(t)
	d.stop(t)
}

// TestFaultLogFolderRecreated: the logs folder is deleted (rm -rf) and
// recreated with a new log and an old one restored: the new lines are
// indexed, the restored ones not again.
func TestFaultLogFolderRecreated(t *testing.T) {
	ws := newWorkspace(t)
	backup := t.TempDir()
	ws.writeLines("a.jsonl", "a", 0, 40)
	runIn(t, ws.logs, "cp", "a.jsonl", backup)
	d := ws.startDaemon()
	defer showDaemonLog(t, d)
	ws.waitExchanges(40, 30*time.Second)
	for round := 0; round < 2; round++ {
		if err := os.RemoveAll(ws.logs); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if err := os.MkdirAll(ws.logs, 0o700); err != nil {
			t.Fatal(err)
		}
		ws.writeLines(fmt.Sprintf("new%d.jsonl", round), fmt.Sprintf("n%d", round), 0, 5)
		runIn(t, ws.logs, "cp", filepath.Join(backup, "a.jsonl"), "a.jsonl")
		ws.waitExchanges(int64(40+5*(round+1)), 30*time.Second)
		ws.waitFileCaughtUp("a.jsonl", 20*time.Second)
		if got := ws.exchanges(); got != int64(40+5*(round+1)) {
			t.Fatalf("round %d: %d exchanges", round, got)
		}
	}
	ws.checkDoctor("logs folder", "OK")
	d.alive(t)
	d.stop(t)
}

// TestFaultPermissions: a log loses its read permission and gets it back.
// The open file goes on being read; a daemon restarted meanwhile lists it
// as skipped (status, doctor) and reads on from its checkpoint once the
// permission is back. As root (who reads any file) the daemon runs as
// nobody.
func TestFaultPermissions(t *testing.T) {
	ws := newWorkspace(t)
	ws.writeLines("a.jsonl", "a", 0, 20)
	start := ws.startDaemon
	if os.Getuid() == 0 {
		start = ws.asNobody(t)
	}
	d := start()
	ws.waitExchanges(20, 30*time.Second)
	path := filepath.Join(ws.logs, "a.jsonl")
	// Write-only: the agent can still append (as itself), the daemon
	// cannot open it for reading.
	if err := os.Chmod(path, 0o200); err != nil {
		t.Fatal(err)
	}
	ws.writeLines("a.jsonl", "a", 20, 10) // the daemon has it open: read
	ws.waitExchanges(30, 20*time.Second)
	d.kill()
	d = start()
	eventually(t, 20*time.Second, "the unreadable log listed as skipped", func() bool {
		for _, s := range ws.status().Skipped {
			if s.Name == "a.jsonl" && strings.Contains(s.Reason, "permission denied") {
				return true
			}
		}
		return false
	})
	ws.checkDoctor("skipped files", "WARN", "a.jsonl")
	ws.writeLines("a.jsonl", "a", 30, 5)
	time.Sleep(500 * time.Millisecond)
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	ws.waitExchanges(35, 30*time.Second)
	eventually(t, 10*time.Second, "no file skipped any more", func() bool { return len(ws.status().Skipped) == 0 })
	ws.writeLines("a.jsonl", "a", 35, 1)
	ws.waitExchanges(36, 20*time.Second)
	d.alive(t)
	d.stop(t)
	showDaemonLog(t, d)
}

// asNobody makes the workspace and the binary reachable by the user
// nobody and returns a function starting the daemon as nobody; the
// workspace's CLI runs as nobody from then on (workspace.cred).
func (w *workspace) asNobody(t *testing.T) func(...string) *daemonProc {
	const uid, gid = 65534, 65534
	for dir := w.root; dir != "/" && dir != os.TempDir(); dir = filepath.Dir(dir) {
		os.Chmod(dir, 0o711)
	}
	os.Chmod(filepath.Dir(binPath), 0o711)
	filepath.Walk(w.root, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			os.Lchown(p, uid, gid)
		}
		return nil
	})
	w.cred = &syscall.Credential{Uid: uid, Gid: gid}
	return func(extra ...string) *daemonProc {
		cmd := exec.Command(binPath, append([]string{"daemon", "--root", w.root, "--log-level", "debug"}, extra...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: w.cred}
		return w.start(cmd)
	}
}

// TestFaultClockSkew: timestamps from the far future and the far past.
// Times the index can store are indexed once as written; those it cannot
// (after 2262, before 1970) are rejected with the reason; doctor warns
// about events dated ahead of the clock.
func TestFaultClockSkew(t *testing.T) {
	ws := newWorkspace(t)
	d := ws.startDaemon()
	lines := []struct {
		ts     string
		reject bool
	}{
		{`"2026-11-01T10:00:00Z"`, false},
		{`"2200-01-01T00:00:00Z"`, false},
		{`"1970-01-01T00:00:01Z"`, false},
		{`0`, false},
		{`"2999-06-01T00:00:00Z"`, true},
		{`"9999-12-31T23:59:59Z"`, true},
		{`"1969-12-31T23:59:59Z"`, true},
		{`253402300799999`, true},
	}
	var want, rejects int64
	for i, l := range lines {
		ws.appendRaw("s.jsonl", []byte(fmt.Sprintf(`{"type":"exchange","session_id":"s","timestamp":%s,"user":"clock line %d","ai":"a"}`+"\n", l.ts, i)))
		if l.reject {
			rejects++
		} else {
			want++
		}
	}
	ws.waitExchanges(want, 20*time.Second)
	eventually(t, 10*time.Second, "the rejects recorded", func() bool { return int64(len(ws.rejects())) == rejects })
	for _, r := range ws.rejects() {
		if !strings.Contains(r.Reason, "timestamp") {
			t.Errorf("reject without the field: %+v", r)
		}
	}
	out, errs, code := ws.cli("export", "--session", "s", "--format", "markdown")
	if code != 0 || !strings.Contains(out, "2200-01-01") || strings.Contains(out, "18") && strings.Contains(out, "[18") {
		t.Errorf("export: exit %d %s\n%s", code, errs, out)
	}
	ws.checkDoctor("event times", "WARN", "future", "2200-01-01")
	d.alive(t)
	d.stop(t)
	showDaemonLog(t, d)
}

// TestFaultSymlinkFIFO: a log is replaced by a symlink (to a file outside
// the folder), then by a FIFO, then restored: neither is followed or
// blocks the daemon; both are listed as skipped; the restore is
// recognised; a line appended after is indexed once.
func TestFaultSymlinkFIFO(t *testing.T) {
	ws := newWorkspace(t)
	backup := t.TempDir()
	outside := filepath.Join(backup, "outside.jsonl")
	if err := os.WriteFile(outside, []byte(idlessLine("secret", 0, 10)), 0o600); err != nil {
		t.Fatal(err)
	}
	ws.writeLines("a.jsonl", "a", 0, 20)
	runIn(t, ws.logs, "cp", "a.jsonl", filepath.Join(backup, "a.jsonl"))
	d := ws.startDaemon()
	ws.waitExchanges(20, 30*time.Second)
	path := filepath.Join(ws.logs, "a.jsonl")
	skippedAs := func(word string) func() bool {
		return func() bool {
			for _, s := range ws.status().Skipped {
				if s.Name == "a.jsonl" && strings.Contains(s.Reason, word) {
					return true
				}
			}
			return false
		}
	}
	os.Remove(path)
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "symlink listed as skipped", skippedAs("symbolic link"))
	ws.checkDoctor("skipped files", "WARN", "a.jsonl")
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "FIFO listed as skipped", skippedAs("FIFO"))
	// A writer on the FIFO must not hang the daemon.
	go func() {
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Write([]byte(idlessLine("fifo", 0, 10)))
			f.Close()
		}
	}()
	ws.writeLines("b.jsonl", "b", 0, 1)
	ws.waitExchanges(21, 10*time.Second)
	os.Remove(path)
	runIn(t, ws.logs, "cp", filepath.Join(backup, "a.jsonl"), "a.jsonl")
	ws.waitFileCaughtUp("a.jsonl", 20*time.Second)
	ws.writeLines("a.jsonl", "a", 20, 1)
	ws.waitExchanges(22, 20*time.Second)
	eventually(t, 10*time.Second, "nothing skipped any more", func() bool { return len(ws.status().Skipped) == 0 })
	d.alive(t)
	d.stop(t)
	showDaemonLog(t, d)
}

// TestFaultThousandLogs: 1,000 logs (10,000 with CONTINUITY_SOAK=1) written
// while the daemon runs, then appended to again: every line indexed once,
// status and doctor answer.
func TestFaultThousandLogs(t *testing.T) {
	n := 1000
	if soak() {
		n = 10000
	}
	ws := newWorkspace(t)
	// A session per log: identical lines without id of one session in
	// two files are one event (protocol.md, section 3, id).
	for i := 0; i < n/2; i++ {
		ws.writeLines(fmt.Sprintf("log-%05d.jsonl", i), fmt.Sprintf("s%05d", i), 0, 3)
	}
	d := ws.startDaemon()
	for i := n / 2; i < n; i++ {
		ws.writeLines(fmt.Sprintf("log-%05d.jsonl", i), fmt.Sprintf("s%05d", i), 0, 3)
	}
	ws.waitExchanges(int64(3*n), 120*time.Second)
	for i := 0; i < n; i += 7 {
		ws.writeLines(fmt.Sprintf("log-%05d.jsonl", i), fmt.Sprintf("s%05d", i), 3, 1)
	}
	ws.waitExchanges(int64(3*n+(n+6)/7), 60*time.Second)
	if got := len(ws.status().Files); got != n {
		t.Errorf("status lists %d files, want %d", got, n)
	}
	ws.checkDoctor("lag", "OK")
	d.alive(t)
	d.stop(t)
	showDaemonLog(t, d)
}
