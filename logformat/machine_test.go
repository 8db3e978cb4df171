package logformat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSanitizeMachine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"laptop", "laptop"},
		{" My Desk/Top ", "My-Desk-Top"},
		{"..", ""},
		{"dev~box", "dev-box"},
		{"a.b_c-d", "a.b_c-d"},
		{string(make([]byte, 100)), ""},
	} {
		if got := SanitizeMachine(tt.in); got != tt.want {
			t.Errorf("SanitizeMachine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	t.Setenv(MachineEnv, "desk top")
	if got := MachineName(); got != "desk-top" {
		t.Errorf("MachineName with %s set = %q", MachineEnv, got)
	}
	t.Setenv(MachineEnv, "")
	if got := MachineName(); got == "" {
		t.Error("MachineName without the variable is empty")
	}
}

// A session's files on two machines, and a sync tool's conflict copies of
// them, give the same session id; a sync tool's temp file is none.
func TestSessionFromMachineAndConflictNames(t *testing.T) {
	for _, name := range []string{
		"session-abc.jsonl",
		MachineLogName("session-abc", "laptop"),
		"session-abc~desk.sync-conflict-20261129-101500-ABCDEFG.jsonl",
		"session-abc.sync-conflict-20261129-101500-ABCDEFG.jsonl",
		"session-abc~desk (laptop's conflicted copy 2026-11-29).jsonl",
		"session-abc~desk.jsonl.1",
	} {
		if got, err := SessionFromFileName(name); err != nil || got != "abc" {
			t.Errorf("SessionFromFileName(%q) = %q, %v; want abc", name, got, err)
		}
	}
	for name, want := range map[string]bool{
		"x.sync-conflict-20261129-101500-ABCDEFG.jsonl": true, "x (conflicted copy 2026-11-29).jsonl": true,
		"x.jsonl": false, "sync-conflict.jsonl": false,
	} {
		if _, got := ConflictCopy(name); got != want {
			t.Errorf("ConflictCopy(%q) = %v", name, got)
		}
	}
	for name, want := range map[string]bool{".syncthing.x.jsonl.tmp": true, "~syncthing~x.jsonl.tmp": true, "x.jsonl": false} {
		if got := SyncTemp(name); got != want {
			t.Errorf("SyncTemp(%q) = %v", name, got)
		}
	}
}

// Each machine writes its own tombstone file; every one is read: the
// old .forgotten, another machine's, a conflict copy (whose last line,
// cut short, is left out); a sync temp file is not.
func TestTombstonesOfEveryMachine(t *testing.T) {
	dir := t.TempDir()
	t1 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	line := func(s string, at time.Time) string {
		return `{"session":"` + s + `","forgotten_at":"` + at.Format(time.RFC3339) + `"}` + "\n"
	}
	for name, data := range map[string]string{
		TombstoneFile:           line("old", t1),
		TombstoneFileOf("desk"): line("a", t1),
		".forgotten.sync-conflict-20261129-101500-AB":      line("b", t1) + `{"session":"cut`,
		".forgotten (laptop's conflicted copy 2026-11-29)": line("c", t1),
		".syncthing..forgotten.laptop.tmp":                 line("tmp", t1),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(MachineEnv, "laptop")
	if err := AppendTombstones(dir, []Tombstone{{Session: "d", At: t1}, {Session: "a", At: t1.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".forgotten.laptop")); err != nil {
		t.Errorf("this machine's tombstone file: %v", err)
	}
	ts, err := ReadTombstones(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"old", "a", "b", "c", "d"} {
		if _, ok := ts[s]; !ok {
			t.Errorf("the forget of %s is not read: %v", s, ts)
		}
	}
	if _, ok := ts["tmp"]; ok || len(ts) != 5 {
		t.Errorf("tombstones %v", ts)
	}
	if !ts["a"].At.Equal(t1.Add(time.Hour)) {
		t.Errorf("a forgotten at %v, want the later forget", ts["a"].At)
	}
}

// FuzzConflictCopy: the file a conflict copy copies is no conflict copy
// of one more mark, a machine name is always safe in a file name, and a
// session read from a machine's or a conflict copy's file name is the
// one of the file it stands for.
func FuzzConflictCopy(f *testing.F) {
	for _, s := range []string{"session-a.jsonl", "x.sync-conflict-20261129-101500-ABC.jsonl", "x (m's conflicted copy 2026-11-29).jsonl",
		"s~m.jsonl", "~syncthing~x.tmp", ".forgotten.sync-conflict-20261129-101500-A"} {
		f.Add(s, "laptop")
	}
	f.Fuzz(func(t *testing.T, name, machine string) {
		of, ok := ConflictCopy(name)
		if !ok && of != name {
			t.Fatalf("ConflictCopy(%q) = %q, false", name, of)
		}
		if ok && len(of) >= len(name) {
			t.Fatalf("ConflictCopy(%q) = %q: not shorter", name, of)
		}
		m := SanitizeMachine(machine)
		if strings.ContainsAny(m, "/~\x00") || len(m) > maxMachineLen {
			t.Fatalf("SanitizeMachine(%q) = %q", machine, m)
		}
		if m == "" || !strings.HasSuffix(name, ".jsonl") || strings.Contains(name, "/") {
			return
		}
		base := strings.TrimSuffix(name, ".jsonl")
		want, err := SessionFromFileName(name)
		if err != nil || strings.Contains(base, MachineSep) {
			return
		}
		if got, err := SessionFromFileName(MachineLogName(base, m)); err != nil || got != want {
			t.Fatalf("session of %q is %q, of %q is %q (%v)", name, want, MachineLogName(base, m), got, err)
		}
	})
}
