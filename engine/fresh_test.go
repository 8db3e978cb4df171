package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompleteLines: what a search waits for in a log is its complete
// lines past the committed offset; a line still being written (no newline
// yet) is not written.
func TestCompleteLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	tests := []struct {
		text         string
		from         int64
		bytes, lines int64
	}{
		{"{}\n{}\n", 0, 6, 2},
		{"{}\n{}\n", 3, 3, 1},
		{"{}\n{}\n", 6, 0, 0},
		{"{}\n{\"partial", 3, 0, 0},
		{"{}\n{}\n{\"partial", 0, 6, 2},
		{strings.Repeat("x", maxTailCheck+10) + "\n", 0, maxTailCheck + 11, -1}, // too long to read: all of it
	}
	for _, tc := range tests {
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		b, l := completeLines(path, tc.from, int64(len(tc.text)))
		if b != tc.bytes || l != tc.lines {
			t.Errorf("%.20q from %d: %d bytes, %d lines; want %d, %d", tc.text, tc.from, b, l, tc.bytes, tc.lines)
		}
	}
	if u := (unindexed{bytes: 10, lines: 1}); u.words() != "1 line" {
		t.Errorf("words %q", u.words())
	}
	if u := (unindexed{bytes: 10, lines: -1}); u.words() != "10 bytes of lines" {
		t.Errorf("words %q", u.words())
	}
}
