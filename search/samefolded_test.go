package search

import (
	"strings"
	"testing"
)

// folded is the definition sameFolded keeps to: white space runs as one
// space, none at either end, each rune lowered.
func folded(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

func TestSameFolded(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"", " \t\n", true},
		{"Node 22", "node 22", true},
		{"use  Node\t22\n", " use node 22", true},
		{"Node 22", "Node 16", false},
		{"ab", "a b", false},
		{"a b", "ab", false},
		{"a", "a b", false},
		{"a b", "a", false},
		{"a ", "a", true},
		{"ÉCOLE", "école", true},
		{"straße", "STRASSE", false}, // per-rune lowering, no case folding of ß
		{"a\u00a0b", "a b", true},    // no-break space is white space
		{"a\u200bb", "a b", false},   // zero width space is not
		{"\xff", "\xfe", true},       // invalid bytes both read as U+FFFD
		{"\xff", "\ufffd", true},
		{"x", "", false},
	}
	for _, tt := range tests {
		if got := sameFolded(tt.a, tt.b); got != tt.want {
			t.Errorf("sameFolded(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if want := folded(tt.a) == folded(tt.b); want != tt.want {
			t.Errorf("table: %q, %q: the definition says %v", tt.a, tt.b, want)
		}
	}
}

func FuzzSameFolded(f *testing.F) {
	for _, s := range [][2]string{{"Node 22", "node  22"}, {"ab", "a b"}, {"a\u00a0b\xff", "A B\ufffd"}, {"", " "}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := sameFolded(a, b), folded(a) == folded(b); got != want {
			t.Fatalf("sameFolded(%q, %q) = %v, the definition says %v", a, b, got, want)
		}
	})
}

func BenchmarkSameFolded(b *testing.B) {
	x := strings.Repeat("The email worker double-sent because the job was acked after sending. ", 40)
	y := strings.Repeat("the email worker double-sent because the job was  acked after sending.\n", 40)
	b.Run("folded copies", func(b *testing.B) {
		for b.Loop() {
			_ = folded(x) == folded(y)
		}
	})
	b.Run("sameFolded", func(b *testing.B) {
		for b.Loop() {
			_ = sameFolded(x, y)
		}
	})
}
