package words

import "testing"

func TestPluralCount(t *testing.T) {
	for _, c := range []struct {
		n           int
		plural, cnt string
	}{{0, "files", "0 files"}, {1, "file", "1 file"}, {2, "files", "2 files"}} {
		if got := Plural(c.n, "file", "files"); got != c.plural {
			t.Errorf("Plural(%d) = %q", c.n, got)
		}
		if got := Count(c.n, "file"); got != c.cnt {
			t.Errorf("Count(%d) = %q", c.n, got)
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
		cut  bool
	}{
		{"abc", 3, "abc", false},
		{"abcd", 3, "abc", true},
		{"aé", 2, "a", true},         // é is 2 bytes: not split
		{"ééé", 5, "éé", true},       // 4 bytes, not 5
		{"a\xffb", 2, "a\xff", true}, // invalid bytes kept
		{"", 0, "", false},
		{"é", 0, "", true},
	} {
		got, cut := Cut(c.s, c.n)
		if got != c.want || cut != c.cut {
			t.Errorf("Cut(%q, %d) = %q, %v; want %q, %v", c.s, c.n, got, cut, c.want, c.cut)
		}
	}
}
