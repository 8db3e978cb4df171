package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDoctorFindsDeletedIndex: a process holding a deleted file of the
// cache folder open (a daemon whose cache was deleted under it) is named.
func TestDoctorFindsDeletedIndex(t *testing.T) {
	cache := t.TempDir()
	f := filepath.Join(cache, "index.db")
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `exec 3<"$1"; rm "$1"; echo ready; exec sleep 30`, "sh", f)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	got := deletedIndexHolders(cache)
	if len(got) != 1 || got[0] != cmd.Process.Pid {
		t.Fatalf("deletedIndexHolders = %v, want [%d]", got, cmd.Process.Pid)
	}
}
