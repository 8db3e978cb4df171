package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, é, 日本", "plain text, é, 日本"},
		{"line one\nline two\ttabbed", "line one\nline two\ttabbed"},
		{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`},
		{"nul\x00byte", `nul\x00byte`},
		{"del\x7f", `del\x7f`},
		{"c1 csi \u009b31m", `c1 csi \u009b31m`},
		{"windows\r\nline ends\r\n", "windows\r\nline ends\r\n"},
		{"overwrite\rthis", `overwrite\x0dthis`},
		{"bell\a and backspace\b", `bell\x07 and backspace\x08`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPrintableNoControls: whatever the text, what Printable returns
// holds no control character but newline, tab and the CR of a CRLF, and
// text without any comes back unchanged.
func TestPrintableNoControls(t *testing.T) {
	var all []rune
	for r := rune(0); r < 0x200; r++ {
		all = append(all, r)
	}
	for _, s := range []string{string(all), "\r", "a\r\r\n", "\r\n\r"} {
		out := Printable(s)
		for i, r := range out {
			if unicode.IsControl(r) && r != '\n' && r != '\t' && !(r == '\r' && strings.HasPrefix(out[i+1:], "\n")) {
				t.Errorf("Printable(%q) keeps %U at byte %d", s, r, i)
			}
		}
		if !utf8.ValidString(out) {
			t.Errorf("Printable(%q) is not UTF-8", s)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(PrintableWriter{&b}, "User: %s\n", "\x1b[2Jhi")
	if b.String() != "User: \\x1b[2Jhi\n" {
		t.Errorf("PrintableWriter: %q", b.String())
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("\x1b[2J\x00\r\n\u009b")
	f.Add("\r")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		out := Printable(s)
		for i, r := range out {
			if unicode.IsControl(r) && r != '\n' && r != '\t' && !(r == '\r' && strings.HasPrefix(out[i+1:], "\n")) {
				t.Fatalf("Printable(%q) keeps %U at byte %d", s, r, i)
			}
		}
		clean := true
		for i, r := range s {
			if unicode.IsControl(r) && r != '\n' && r != '\t' && !(r == '\r' && strings.HasPrefix(s[i+1:], "\n")) {
				clean = false
			}
		}
		if clean && out != s {
			t.Fatalf("Printable(%q) changed a text without controls: %q", s, out)
		}
	})
}
