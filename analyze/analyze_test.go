package analyze

import (
	"slices"
	"strings"
	"testing"
)

func TestStem(t *testing.T) {
	tests := [][2]string{
		{"running", "run"}, {"runs", "run"}, {"connections", "connect"}, {"authentication", "authent"},
		{"authenticate", "authent"}, {"cooked", "cook"}, {"cooking", "cook"}, {"webhooks", "webhook"},
		{"retries", "retri"}, {"retried", "retri"}, {"generously", "generous"}, {"dying", "die"},
		// Left alone: short words, digits, capitals, other scripts.
		{"go", "go"}, {"ipv4", "ipv4"}, {"sha256", "sha256"}, {"café", "café"}, {"Running", "Running"}, {"日本語", "日本語"},
	}
	for _, tc := range tests {
		if got := Stem(tc[0]); got != tc[1] {
			t.Errorf("Stem(%q) = %q, want %q", tc[0], got, tc[1])
		}
		if got := string(AppendStem([]byte("x"), []byte(tc[0]))); got != "x"+tc[1] {
			t.Errorf("AppendStem(%q) = %q, want %q", tc[0], got, "x"+tc[1])
		}
	}
}

func TestDocument(t *testing.T) {
	tests := []struct{ in, want string }{
		{"The builds are FAILING again!", "the build are fail again"},
		{"snake_case and kebab-case, don't", "snake case and kebab case don t"},
		{"日本語のテスト", "日本 本語 語の のテ テス スト ト"},
		{"utf8エンコード ok", "utf8 エン ンコ コー ード ド ok"},
		{"語", "語"},
		{"한국어 문장", "한국 국어 어 문장 장"},
		{"Naïve café, Ærø", "naiv cafe ærø"},
		{"がぎ", "がぎ ぎ"},
		{"", ""},
		{"... ---", ""},
	}
	for _, tc := range tests {
		if got := Document(tc.in); got != tc.want {
			t.Errorf("Document(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWordTerms(t *testing.T) {
	tests := []struct {
		word string
		want []Term
	}{
		{"retries", []Term{{Key: "retri", Expr: `"retri"`}}},
		{"日本語", []Term{{Expr: `"日本 本語"`}}},
		{"語", []Term{{Expr: `"語"*`}}},
		{"utf8エンコード", []Term{{Key: "utf8", Expr: `"utf8"`}, {Expr: `"エン ンコ コー ード"`}}},
	}
	for _, tc := range tests {
		if got := WordTerms(tc.word); !slices.Equal(got, tc.want) {
			t.Errorf("WordTerms(%q) = %v, want %v", tc.word, got, tc.want)
		}
	}
	if got := MatchAny(append(WordTerms("retries"), WordTerms("語")...)); got != `"retri" OR "語"*` {
		t.Errorf("MatchAny = %s", got)
	}
}

// TestCJKSubstrings: every substring of a CJK run is a phrase of the
// document's terms in a row (or, one character, a prefix of one of them).
func TestCJKSubstrings(t *testing.T) {
	run := []rune("日本語のテストです")
	doc := strings.Fields(Document(string(run)))
	for i := range run {
		for j := i + 1; j <= len(run); j++ {
			sub := string(run[i:j])
			terms := WordTerms(sub)
			if len(terms) != 1 {
				t.Fatalf("WordTerms(%q) = %v", sub, terms)
			}
			expr := terms[0].Expr
			if strings.HasSuffix(expr, "*") {
				p := strings.Trim(expr, `"*`)
				if !slices.ContainsFunc(doc, func(d string) bool { return strings.HasPrefix(d, p) }) {
					t.Errorf("%q: no document term starts with %q", sub, p)
				}
				continue
			}
			phrase := strings.Fields(strings.Trim(expr, `"`))
			found := false
			for k := 0; k+len(phrase) <= len(doc); k++ {
				found = found || slices.Equal(doc[k:k+len(phrase)], phrase)
			}
			if !found {
				t.Errorf("%q: phrase %v not in %v", sub, phrase, doc)
			}
		}
	}
}

func BenchmarkDocument(b *testing.B) {
	text := strings.Repeat("The watcher tails the log files; rotation is detected by inode and fingerprints, then retried. ", 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Document(text)
	}
}

func FuzzDocument(f *testing.F) {
	for _, s := range []string{"日本語のテスト", "utf8エンコード", "Hello, World", "café", "\xff\xfe", "a\u0301b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := Document(s)
		for _, w := range Words(s) {
			for _, term := range WordTerms(w) {
				if term.Key != "" && !slices.Contains(strings.Fields(d), term.Key) {
					t.Errorf("%q: key %q of word %q not in document %q", s, term.Key, w, d)
				}
			}
		}
	})
}
