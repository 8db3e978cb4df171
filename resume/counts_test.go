package resume

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/internal/shareddata"
)

// chunkedSum counts s chunk by chunk, without any cache.
func chunkedSum(c *Counter, s string) int {
	n := 0
	chunks(s, func(ch string) { n += c.countUncached(ch) })
	return n
}

// trickyText is random text over the characters where pre-tokenizers
// decide piece boundaries: line breaks, spaces of several kinds,
// punctuation (and "/"), letters, digits, contractions, non-ASCII letters.
func trickyText(r *rand.Rand, n int) string {
	parts := []string{"\n", "\n", "\n\n", "\r\n", " ", "  ", "\t", "/", "//", "!", ".", "#", "[", "]", "-", "`", "```", "'s", "'", "\"",
		"a", "word", "Word", "WORD", "x1", "123", "4567", " b", "a b", "x 1", "it's ", "fooBar ", "  ", " 12 ", "e. N", "é", "Ünïcode", "日本語", "\u3000", "\u00a0", "\u2028", "🙂", "-> ", "\\n", "{", "}"}
	var b strings.Builder
	for range n {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// TestChunkedCountExact: for the encodings counted by chunks, the sum over
// chunks equals the count of the whole text, on this repository's own files
// (code, markdown), on the LongMemEval conversations when present, and on
// random text made of the characters that matter to the pre-tokenizers.
func TestChunkedCountExact(t *testing.T) {
	var texts []string
	root := filepath.Join("..")
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); !d.IsDir() && (ext == ".go" || ext == ".md") {
			if b, err := os.ReadFile(path); err == nil && len(texts) < 150 {
				texts = append(texts, string(b[:min(len(b), 16<<10)]))
			}
		}
		return nil
	})
	if data := evalData(); data != "" {
		logs, _ := filepath.Glob(filepath.Join(data, "logs", "*.jsonl"))
		for _, f := range logs[:min(len(logs), 5)] {
			if b, err := os.ReadFile(f); err == nil {
				texts = append(texts, string(b[:min(len(b), 64<<10)]))
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 3000 {
		texts = append(texts, trickyText(r, 1+r.IntN(60)))
	}
	for _, enc := range []string{"cl100k_base", "o200k_base", "gpt-4o"} {
		c, err := NewCounter(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !c.chunked {
			t.Fatalf("%s: not counted by chunks", enc)
		}
		for _, s := range texts {
			whole, sum := c.countUncached(s), chunkedSum(c, s)
			if whole != sum {
				t.Fatalf("%s: chunks sum to %d tokens, the whole text is %d: %q", enc, sum, whole, s[:min(len(s), 300)])
			}
			// The lower bound the selection prunes with.
			if lb := c.atLeast(s); lb > whole {
				t.Fatalf("%s: lower bound %d over the count %d: %q", enc, lb, whole, s[:min(len(s), 300)])
			}
		}
	}
	// The cache gives the same counts, cold and warm.
	c, _ := NewCounter("")
	cc := newCountCache(64) // small: generations turn over
	cached := c.withCache(cc)
	for round := range 2 {
		for _, s := range texts[len(texts)-500:] {
			if got, want := cached.Count(s), c.Count(s); got != want {
				t.Fatalf("round %d: cached count %d, want %d: %q", round, got, want, s)
			}
		}
	}
	if cc.hits.Load() == 0 {
		t.Error("no count came from the cache")
	}
}

// TestChunkedCountUnsafeEncodings: encodings whose pieces depend on what
// follows a line break are counted whole (and would differ by chunks).
func TestChunkedCountUnsafeEncodings(t *testing.T) {
	c, err := NewCounter("p50k_base")
	if err != nil {
		t.Fatal(err)
	}
	if c.chunked {
		t.Fatal("p50k_base counted by chunks")
	}
	s := "first\n\nsecond"
	if chunkedSum(c, s) == c.countUncached(s) {
		t.Skip("p50k_base happens to add up here; the rule still holds for others")
	}
	cc := newCountCache(0)
	if got, want := c.withCache(cc).Count(s), c.countUncached(s); got != want {
		t.Fatalf("cached p50k count %d, want %d", got, want)
	}
}

// FuzzChunkedCount: the chunked count of any text equals its whole count,
// and the lower bound is one.
func FuzzChunkedCount(f *testing.F) {
	for _, s := range []string{"a\nb", "x!\n/y", "\n\n# h\n", "a  \n\tb", "日本\n語", "'s\n's", "```go\nfunc f() {}\n```\n"} {
		f.Add(s)
	}
	cl, _ := NewCounter("cl100k_base")
	o2, _ := NewCounter("o200k_base")
	p5, _ := NewCounter("p50k_base")
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range []*Counter{cl, o2, p5} {
			whole := c.countUncached(s)
			if sum := chunkedSum(c, s); c.chunked && whole != sum {
				t.Fatalf("%s: chunks %d, whole %d: %q", c.encoding, sum, whole, s)
			}
			if lb := c.atLeast(s); lb > whole {
				t.Fatalf("%s: lower bound %d, count %d: %q", c.encoding, lb, whole, s)
			}
		}
	})
}

// evalData is the LongMemEval development set's folder ($CONTINUITY_EVAL_DATA,
// else ../shared/data/longmemeval-s-dev beside the repository), "" when absent.
func evalData() string {
	dir := shareddata.LongMemEval()
	if _, err := os.Stat(filepath.Join(dir, "logs")); err != nil {
		return ""
	}
	return dir
}

// TestCountDEL: the tokenizer library drops DEL (U+007F) without a token;
// a count never says a text with DELs takes fewer tokens than the text
// without them plus one a DEL, so a pack of such text stays within its
// budget.
func TestCountDEL(t *testing.T) {
	for _, enc := range []string{"cl100k_base", "o200k_base", "p50k_base"} {
		c, err := NewCounter(enc)
		if err != nil {
			t.Fatal(err)
		}
		cached := c.withCache(newCountCache(0))
		for _, s := range []string{"\x7f", "a\x7fb", "watcher \x7f\x7f\x7f events\n\x7f# x", strings.Repeat("\x7f", 40)} {
			want := c.countUncached(strings.ReplaceAll(s, "\x7f", "")) + strings.Count(s, "\x7f")
			for _, got := range []int{c.Count(s), cached.Count(s)} {
				if got < want {
					t.Errorf("%s: %q counts %d, want at least %d", enc, s, got, want)
				}
			}
		}
	}
}
