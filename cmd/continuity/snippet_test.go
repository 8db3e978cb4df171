package main

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// snippetWhole is snippet as it was: every word of the text split out and
// joined, then cut. snippet must print the same.
func snippetWhole(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + " …"
}

func TestSnippetSameAsWholeText(t *testing.T) {
	cases := []string{
		"", " ", "a", "  a  b\t\nc ", strings.Repeat("word ", 100),
		strings.Repeat("x", 301), strings.Repeat("x", 300), strings.Repeat("é", 200),
		strings.Repeat("a", 299) + "é" + " tail", strings.Repeat("a", 300) + " é",
		"\u00a0lead\u2003wide\u3000spaces " + strings.Repeat("日本語 ", 80),
	}
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "bb", " ", "  ", "\n", "\t", "é", "日本", "\u00a0", "\u2028", "ccccccccccccccccccc", "\xff", "\xe6\x97"}
	for range 2000 {
		var b strings.Builder
		for range r.IntN(200) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		for _, n := range []int{0, 1, 2, 3, 10, 300} {
			if got, want := snippet(s, n), snippetWhole(s, n); got != want {
				t.Fatalf("snippet(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}
