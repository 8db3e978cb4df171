package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The fault matrix (issue 11): one end-to-end test per fault, each on the
// real binary with a daemon running, each checking that no line is lost or
// indexed twice, that the daemon recovers or exits saying why, and that
// doctor explains. Short variants run in every test run; CONTINUITY_SOAK=1
// runs longer ones.

// TestFaultRestoredLogs: logs of 3 KB, 1.7 MB and 4 MB are deleted and
// restored by git checkout, by cp and by an atomic mv, or rewritten in
// place by cp over them, under a running daemon: the exchange count never changes, and a line appended after the
// restores is indexed once.
func TestFaultRestoredLogs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: the restore test uses git checkout")
	}
	ws := newWorkspace(t)
	sizes := []struct {
		name string
		size int
	}{{"small.jsonl", 3 << 10}, {"mid.jsonl", 1700 << 10}, {"big.jsonl", 4 << 20}}
	rounds := 1
	if soak() {
		sizes = append(sizes, struct {
			name string
			size int
		}{"huge.jsonl", 24 << 20})
		rounds = 3
	}
	backup := t.TempDir()
	var total int64
	for _, s := range sizes {
		total += int64(writeLogOfSize(t, filepath.Join(ws.logs, s.name), s.name, s.size))
		runIn(t, ws.logs, "cp", s.name, filepath.Join(backup, s.name))
	}
	runIn(t, ws.root, "git", "init", "-q")
	runIn(t, ws.root, "git", "add", "-f", ".praxis-os/.conversations")
	runIn(t, ws.root, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "logs")

	d := ws.startDaemon()
	ws.waitExchanges(total, 60*time.Second)
	for round := 0; round < rounds; round++ {
		for _, method := range []string{"git checkout", "cp", "atomic mv", "cp over the file"} {
			for _, s := range sizes {
				path := filepath.Join(ws.logs, s.name)
				if method != "cp over the file" {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
				}
				switch method {
				case "git checkout":
					runIn(t, ws.root, "git", "checkout", "--", filepath.Join(".praxis-os/.conversations", s.name))
				case "cp", "cp over the file":
					runIn(t, ws.logs, "cp", filepath.Join(backup, s.name), s.name)
				case "atomic mv":
					runIn(t, ws.logs, "cp", filepath.Join(backup, s.name), ".restore.tmp")
					runIn(t, ws.logs, "mv", ".restore.tmp", s.name)
				}
				ws.waitFileCaughtUp(s.name, 30*time.Second)
				if got := ws.exchanges(); got != total {
					t.Fatalf("after deleting %s (%d bytes) and restoring it by %s: %d exchanges, want %d\n%s",
						s.name, s.size, method, got, total, d.stderr)
				}
			}
		}
	}
	// Nothing more arrives later (a late re-read would show up here).
	time.Sleep(1500 * time.Millisecond)
	if got := ws.exchanges(); got != total {
		t.Fatalf("after the restores settled: %d exchanges, want %d", got, total)
	}
	ws.appendRaw("big.jsonl", []byte(idlessLine("big.jsonl", 999999, 10)))
	total++
	ws.waitExchanges(total, 20*time.Second)
	time.Sleep(500 * time.Millisecond)
	if got := ws.exchanges(); got != total {
		t.Fatalf("appended line: %d exchanges, want %d", got, total)
	}
	d.alive(t)
	d.stop(t)
}
