//go:build unix

package logformat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestAppendLineCreates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws", ".praxis-os", ".conversations")
	path := filepath.Join(dir, "session-a.jsonl")
	if err := AppendLine(path, []byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	if err := AppendLine(path, []byte("{\"a\":2}\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "{\"a\":1}\n{\"a\":2}\n" {
		t.Errorf("file holds %q", got)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, filepath.Dir(dir): 0o700 | os.ModeDir, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode(), want)
		}
	}
}

func TestAppendLineKeepsExistingMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendLine(path, []byte("y\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(got) != "x\ny\n" || fi.Mode() != 0o644 {
		t.Errorf("file %q mode %v", got, fi.Mode())
	}
}

func TestAppendLineRefuses(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.jsonl")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub.jsonl")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	line := []byte("{}\n")
	tests := []struct {
		name, path string
		line       []byte
	}{
		{"symlink", link, line},
		{"fifo", fifo, line},
		{"directory", sub, line},
		{"/dev/null", "/dev/null", line},
		{"no newline", target, []byte("{}")},
		{"empty", target, nil},
		{"two lines", target, []byte("{}\n{}\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- AppendLine(tt.path, tt.line) }()
			select {
			case err := <-done:
				if err == nil {
					t.Errorf("AppendLine(%s) succeeded", tt.path)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("AppendLine(%s) blocked", tt.path)
			}
		})
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Errorf("target written through a refused call: %q", b)
	}
}

// TestAppendLineConcurrent appends lines far larger than PIPE_BUF from many
// goroutines (each its own open file, as separate processes would be) and
// checks that no two lines interleave.
func TestAppendLineConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session-c.jsonl")
	const writers, lines = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*lines)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				size := 100 + (w*lines+i)*997%200_000
				e := Event{Type: TypeExchange, Timestamp: time.Unix(1714557600, 0), SessionID: "c",
					ID:   fmt.Sprintf("w%d-%d", w, i),
					User: strings.Repeat(string(rune('a'+w)), size), AI: "line \"with\" quotes\nand newlines"}
				b, err := e.MarshalLine()
				if err == nil {
					err = AppendLine(path, b)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		e, err := Parse(sc.Bytes(), "session-c.jsonl", testNow)
		if err != nil {
			t.Fatalf("line %d: %v", len(seen)+1, err)
		}
		if strings.Trim(e.User, e.User[:1]) != "" || seen[e.ID] {
			t.Fatalf("line %d mixed or repeated: id %s", len(seen)+1, e.ID)
		}
		seen[e.ID] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != writers*lines {
		t.Errorf("%d lines, want %d", len(seen), writers*lines)
	}
	if b, _ := os.ReadFile(path); !bytes.HasSuffix(b, []byte("\n")) {
		t.Error("file does not end in a newline")
	}
}

// TestAppendLineAfterPartialLine: a crashed writer left a last line
// without its "\n". The appended line must not be glued onto it: it starts
// on a fresh line, so that the fragment is rejected alone and the new event
// survives whole.
func TestAppendLineAfterPartialLine(t *testing.T) {
	for _, tc := range []struct{ name, before string }{
		{"partial", `{"type":"exchange","user":"crashed mid-wr`},
		{"complete line then partial", "{\"a\":1}\n{\"type\":\"exch"},
		{"one byte", "{"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session-a.jsonl")
			if err := os.WriteFile(path, []byte(tc.before), 0o600); err != nil {
				t.Fatal(err)
			}
			line := "{\"type\":\"exchange\",\"session_id\":\"a\",\"user\":\"kept\"}\n"
			if err := AppendLine(path, []byte(line)); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if want := tc.before + "\n" + line; string(got) != want {
				t.Fatalf("file holds %q, want %q", got, want)
			}
			// The appended line parses alone.
			lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
			if _, err := Parse([]byte(lines[len(lines)-1]), "session-a.jsonl", time.Now()); err != nil {
				t.Errorf("appended line does not parse: %v", err)
			}
		})
	}
}

// TestAppendLineGluedAfterAll: an unterminated end on a page boundary is
// taken for another writer's line in progress, so the line is not
// prefixed; the check after the write finds it glued and writes it again
// on a fresh line.
func TestAppendLineGluedAfterAll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session-a.jsonl")
	frag := strings.Repeat("x", os.Getpagesize())
	if err := os.WriteFile(path, []byte(frag), 0o600); err != nil {
		t.Fatal(err)
	}
	line := "{\"type\":\"exchange\",\"session_id\":\"a\",\"user\":\"kept\"}\n"
	if err := AppendLine(path, []byte(line)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := frag + line + line; string(got) != want {
		t.Fatalf("file holds %q..., want the glued copy then the line", got[len(frag)-4:])
	}
}
