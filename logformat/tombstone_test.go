package logformat

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTombstones(t *testing.T) {
	dir := t.TempDir()
	if ts, err := ReadTombstones(dir); err != nil || len(ts) != 0 {
		t.Fatalf("no file: %v %v", ts, err)
	}
	t1 := time.Date(2026, 11, 1, 10, 0, 0, 123456789, time.UTC)
	t2 := t1.Add(time.Hour)
	if err := AppendTombstones(dir, []Tombstone{{Session: "b", At: t1, Resumes: []string{"a"}}, {Session: "x", At: t1}}); err != nil {
		t.Fatal(err)
	}
	// A write cut short, then a later forget of b.
	f, _ := os.OpenFile(filepath.Join(dir, TombstoneFileOf(MachineName())), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"session":"cut`)
	f.Close()
	if ts, err := ReadTombstones(dir); err != nil || len(ts) != 2 {
		t.Fatalf("with an unfinished last line: %v %v", ts, err)
	}
	if err := AppendTombstones(dir, []Tombstone{{Session: "b", At: t2, Resumes: []string{"z"}}}); err != nil {
		t.Fatal(err)
	}
	ts, err := ReadTombstones(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Tombstone{"b": {Session: "b", At: t2, Resumes: []string{"a", "z"}}, "x": {Session: "x", At: t1}}
	if !reflect.DeepEqual(ts, want) {
		t.Errorf("read %+v, want %+v", ts, want)
	}
	fi, _ := os.Stat(filepath.Join(dir, TombstoneFileOf(MachineName())))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if !ts["b"].Covers(t2, false) || ts["b"].Covers(t2.Add(1), false) || !ts["b"].Covers(t2.Add(time.Hour), true) {
		t.Errorf("Covers")
	}
}

func TestTombstonesBadLine(t *testing.T) {
	tests := []struct{ line, want string }{
		{`not json`, ":2: not a forgotten session's record"},
		{`{"session":"b"}`, ":2: forgotten_at is missing"},
		{`{"session":"b c","forgotten_at":"2026-11-01T10:00:00Z"}`, ":2: session:"},
		{`{"session":"b","forgotten_at":"2026-11-01T10:00:00Z","resume":["a"]}`, `:2: not a forgotten session's record: field "resume" looks like "resumes"`},
		{`{"session":"b","forgotten_at":"2026-11-01T10:00:00Z","Resumes":["a"]}`, `field "Resumes" looks like "resumes"`},
		{`{"session_id":"b","forgotten_at":"2026-11-01T10:00:00Z"}`, `field "session_id" looks like "session"`},
		{`{"session":"b","forgottenAt":"2026-11-01T10:00:00Z","forgotten_at":"2026-11-01T10:00:00Z"}`, `field "forgottenAt" looks like "forgotten_at"`},
		{`{"session":"b","forgotten_at":"2026-11-01T10:00:00Z","resumez":["a"]}`, `field "resumez" looks like "resumes"`},
		{`["b"]`, ":2: not a forgotten session's record"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, TombstoneFile), []byte(`{"session":"a","forgotten_at":"2026-11-01T10:00:00Z"}`+"\n"+tt.line+"\n"), 0o600)
		if _, err := ReadTombstones(dir); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), TombstoneFile) {
			t.Errorf("%s: %v, want %q", tt.line, err, tt.want)
		}
	}
}

// TestTombstonesOtherFields: a field a later version may add (the forget's
// author, its reason) is ignored, so that an older daemon on a synced
// machine still carries out the forget (it stopped on the line before).
func TestTombstonesOtherFields(t *testing.T) {
	dir := t.TempDir()
	line := `{"session":"b","forgotten_at":"2026-11-01T10:00:00Z","resumes":["a"],"by":"alice@laptop","why":"pasted a key"}` + "\n"
	os.WriteFile(filepath.Join(dir, TombstoneFile), []byte(line), 0o600)
	ts, err := ReadTombstones(dir)
	if err != nil || len(ts) != 1 || !reflect.DeepEqual(ts["b"].Resumes, []string{"a"}) {
		t.Fatalf("read %+v, %v; want b's forget, resumes [a], the other fields ignored", ts, err)
	}
}

// FuzzReadTombstones: any file content is read or refused with an error
// naming the file; what is read is always a valid session with a time.
func FuzzReadTombstones(f *testing.F) {
	f.Add([]byte(`{"session":"a","forgotten_at":"2026-11-01T10:00:00Z","resumes":["b"]}` + "\n"))
	f.Add([]byte(`{"session":"a","forgotten_at":"2026-11-01T10:00:00Z","by":"x"}` + "\n" + `{"session":"cut`))
	f.Add([]byte(`{"session_id":"a","forgotten_at":"2026-11-01T10:00:00Z"}` + "\n"))
	f.Add([]byte("\n\n[1]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := map[string]Tombstone{}
		err := readTombstones("f", data, out)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f:") {
				t.Fatalf("error without the file and line: %v", err)
			}
			return
		}
		for s, ts := range out {
			if ValidSessionID(s) != nil || ts.Session != s || ts.At.IsZero() {
				t.Fatalf("read an invalid tombstone %q: %+v", s, ts)
			}
		}
	})
}
