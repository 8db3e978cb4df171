package resume

// Token counting. The budget of a pack is in tokens of a real BPE
// tokenizer (tiktoken's encodings, through github.com/tiktoken-go/tokenizer,
// which embeds its vocabularies: no network), counted over the whole text
// returned, headers and notes included.

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// DefaultEncoding is the tokenizer used when none is configured: the
// encoding of GPT-4 and GPT-3.5, a fair stand-in for most models' counts.
const DefaultEncoding = "cl100k_base"

// Counter counts tokens of one encoding. It is safe for concurrent use.
type Counter struct {
	name  string
	codec tokenizer.Codec
	// encoding is the codec's name (name may be a model's); chunked says
	// whether counts add up over line-start chunks (counts.go).
	encoding string
	chunked  bool
	dropsDEL bool // the codec counts nothing for U+007F (countUncached)
	// cache, when set, remembers counts between packs (counts.go).
	cache *countCache
}

var (
	countersMu sync.Mutex
	counters   = map[string]*Counter{}
)

// NewCounter returns the counter of an encoding ("cl100k_base",
// "o200k_base", "p50k_base", "p50k_edit", "r50k_base") or of an OpenAI
// model name ("gpt-4o", "gpt-4", ...); "" is DefaultEncoding. Counters are
// cached: loading a vocabulary takes a moment, once per process.
func NewCounter(encoding string) (*Counter, error) {
	if encoding == "" {
		encoding = DefaultEncoding
	}
	countersMu.Lock()
	defer countersMu.Unlock()
	if c, ok := counters[encoding]; ok {
		return c, nil
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(encoding))
	if err != nil {
		codec, err = tokenizer.ForModel(tokenizer.Model(encoding))
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer %q: not an encoding (cl100k_base, o200k_base, p50k_base, p50k_edit, r50k_base) or a known model name", encoding)
	}
	c := &Counter{name: encoding, codec: codec, encoding: codec.GetName(), chunked: chunkSafe[codec.GetName()], dropsDEL: dropsDEL(codec)}
	counters[encoding] = c
	return c, nil
}

// Name is the encoding or model name the counter was made for.
func (c *Counter) Name() string { return c.name }

// withCache returns a counter of the same encoding that remembers counts
// in cc; nil cc: c itself.
func (c *Counter) withCache(cc *countCache) *Counter {
	if cc == nil {
		return c
	}
	d := *c
	d.cache = cc
	return &d
}

// Count returns the number of tokens of s.
func (c *Counter) Count(s string) int {
	if c.cache != nil {
		return c.cache.count(c, s)
	}
	return c.countUncached(s)
}

// atLeast returns a lower bound of Count(s) found without encoding: for
// the encodings whose counts add up over chunks (counts.go), the number of
// chunks after the first (each starts with a space or a visible character,
// so holds a token; the first may not: the codec drops some characters,
// such as DEL, altogether), else 0. Most exchanges are far too long for
// the room they are offered: this says so without counting them.
func (c *Counter) atLeast(s string) int {
	if !c.chunked {
		return 0
	}
	n := 0
	for i := 1; i < len(s); i++ {
		if chunkStart(s, i) {
			n++
		}
	}
	return n
}

// countUncached counts s with the codec.
func (c *Counter) countUncached(s string) int {
	if s == "" {
		return 0
	}
	n, err := c.codec.Count(s)
	if err != nil {
		// The codec only fails on a regexp engine error. Every token is
		// at least one byte, so the length in bytes is an upper bound.
		return len(s)
	}
	if c.dropsDEL {
		// A DEL is a token (or part of one) for the model; the codec's
		// pre-tokenizer drops it. One token each: never under the count.
		n += strings.Count(s, "\x7f")
	}
	return n
}

// dropsDEL reports whether codec counts no token for a DEL character (the
// tokenizer library's pre-tokenizer skips U+007F: TestCountDEL).
func dropsDEL(codec tokenizer.Codec) bool {
	n, err := codec.Count("\x7f")
	return err == nil && n == 0
}

// boundaries returns the byte offsets where the tokens of s start, plus
// len(s): token i is s[b[i]:b[i+1]].
func (c *Counter) boundaries(s string) []int {
	_, toks, err := c.codec.Encode(s)
	if err != nil {
		// Fall back to one "token" per byte, an over-count.
		b := make([]int, len(s)+1)
		for i := range b {
			b[i] = i
		}
		return b
	}
	b := make([]int, 0, len(toks)+1)
	off := 0
	for _, t := range toks {
		b = append(b, off)
		off += len(t)
	}
	return append(b, off)
}

// window returns the longest substring of s of at most n tokens that
// starts at token from (or as near as a character boundary allows), cut at
// character boundaries. It is s itself when s has at most n tokens.
func (c *Counter) window(s string, from, n int) string {
	if n <= 0 {
		return ""
	}
	b := c.boundaries(s)
	tokens := len(b) - 1
	if tokens <= n && from <= 0 {
		return s
	}
	from = max(0, min(from, tokens-1))
	to := min(tokens, from+n)
	// Byte-level tokens may split a multi-byte character: move the start
	// forward and the end backward to character boundaries.
	start, end := b[from], b[to]
	for start < end && !utf8.RuneStart(s[start]) {
		start++
	}
	for end > start && end < len(s) && !utf8.RuneStart(s[end]) {
		end--
	}
	out := s[start:end]
	// Tokenized alone, the substring may take a token more or less than
	// the span it came from; shrink until it fits.
	for out != "" && c.Count(out) > n {
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	return out
}

// Truncate returns the longest prefix of s that has at most n tokens, cut
// at a character boundary.
func (c *Counter) Truncate(s string, n int) string {
	return c.window(s, 0, n)
}
