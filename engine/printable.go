package engine

import (
	"fmt"
	"io"
	"strings"
	"unicode"
)

// Printable is s with its control characters escaped, for output read
// on a terminal: a stored text may hold any character its JSON escapes
// spell (`\u001b[2J` clears the screen, `\u0000` makes grep call the
// output binary). C0 controls but newline and tab, and a carriage return
// not followed by a newline, are written as \x1b; DEL as \x7f; C1
// controls as \u009b. Everything else is left as it is (JSON output needs
// none of this: encoding/json escapes them).
func Printable(s string) string {
	i := strings.IndexFunc(s, escaped)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for j, r := range s[i:] {
		switch {
		case r == '\r' && strings.HasPrefix(s[i+j+1:], "\n"):
			b.WriteRune(r) // CRLF, as a Windows producer writes line ends
		case !escaped(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// escaped reports whether Printable escapes r (a carriage return only
// when no newline follows it).
func escaped(r rune) bool {
	return r != '\n' && r != '\t' && unicode.IsControl(r)
}

// PrintableWriter writes through Printable: every Write must hold whole
// characters (as fmt's do), so that an escape sequence split between two
// writes is not missed.
type PrintableWriter struct{ W io.Writer }

func (p PrintableWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.W, Printable(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
