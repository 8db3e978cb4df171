package analyze

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Tokens are a finer split than Words (the full-text index's, terms.go):
// the hash embedder's features and resume's line terms are made of them.
//
// A token is a maximal run of Unicode letters, digits and combining marks;
// everything else (white space, punctuation, '_', '-', '\'', symbols)
// separates words, so snake_case and kebab-case split. Inside a run,
// camelCase splits too:
//
//	ConversationWatcher -> conversation watcher
//	HTTPServer          -> http server   (acronym, then a capitalised word)
//	Base64Encode        -> base64 encode (a capitalised word after digits)
//	URLs, IPv4, sha256  -> urls, ipv4, sha256 (kept whole)
//
// Tokens are lowercased (unicode.ToLower). Letters and digits are not split
// apart, and scripts without case (CJK, ...) are not segmented.

// Character classes used for splitting.
const (
	clsSep   uint8 = iota // not part of a word
	clsLower              // lowercase letter, or a combining mark
	clsUpper              // uppercase or titlecase letter
	clsDigit              // decimal digit
	clsOther              // letter without case
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clsLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clsUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clsDigit
	}
	return t
}()

func runeClass(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return clsUpper
	case unicode.IsLower(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r):
		return clsLower
	case unicode.IsLetter(r):
		return clsOther
	case unicode.IsDigit(r):
		return clsDigit
	}
	return clsSep
}

// Span is a token inside a byte buffer: buf[Start:End].
type Span struct{ Start, End int }

// Tokenizer splits texts into tokens (see Tokens) with reusable scratch
// space: for a caller that splits many texts on one goroutine. The zero
// value is ready.
type Tokenizer struct {
	runes []rune
	cls   []uint8
}

// AppendTokens splits text into lowercased tokens (as Tokens), appending
// their bytes to buf and their positions in buf to spans.
func (t *Tokenizer) AppendTokens(buf []byte, spans []Span, text string) ([]byte, []Span) {
	i := 0
	for i < len(text) {
		// Skip separators.
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		c := runeClass(r)
		if c == clsSep {
			i += size
			continue
		}
		// Collect the run of word characters.
		t.runes, t.cls = t.runes[:0], t.cls[:0]
		for {
			t.runes = append(t.runes, r)
			t.cls = append(t.cls, c)
			i += size
			if i >= len(text) {
				break
			}
			r, size = rune(text[i]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRuneInString(text[i:])
			}
			c = runeClass(r)
			if c == clsSep {
				break
			}
		}
		buf, spans = t.splitRun(buf, spans)
	}
	return buf, spans
}

// splitRun splits the collected run at camelCase boundaries.
func (t *Tokenizer) splitRun(buf []byte, spans []Span) ([]byte, []Span) {
	rs, cs := t.runes, t.cls
	start := len(buf)
	for j, r := range rs {
		if j > 0 && camelBoundary(cs, j) && len(buf) > start {
			spans = append(spans, Span{start, len(buf)})
			start = len(buf)
		}
		if r < utf8.RuneSelf {
			if cs[j] == clsUpper {
				r += 'a' - 'A'
			}
			buf = append(buf, byte(r))
		} else {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
	}
	if len(buf) > start {
		spans = append(spans, Span{start, len(buf)})
	}
	return buf, spans
}

// camelBoundary reports whether a word starts at position j of a run.
func camelBoundary(cs []uint8, j int) bool {
	if cs[j] != clsUpper {
		return false
	}
	lowerAt := func(k int) bool { return k < len(cs) && cs[k] == clsLower }
	switch cs[j-1] {
	case clsLower: // fooBar
		return true
	case clsDigit: // base64Encode, but not 3D or 2FA
		return lowerAt(j + 1)
	case clsUpper: // HTTPServer, but not URLs or IPv4
		return lowerAt(j+1) && lowerAt(j+2)
	}
	return false
}

// Tokens splits text into lowercased tokens (see above) without dropping
// stopwords or stemming.
func Tokens(text string) []string {
	var t Tokenizer
	buf, spans := t.AppendTokens(nil, nil, text)
	s := string(buf)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = s[sp.Start:sp.End]
	}
	return out
}

// Terms returns the terms of text, as the hash embedder sees them: the
// tokens of [Tokens], without stopwords and single ASCII letters
// ([Meaningless]), stemmed with Stem. Two texts that differ only in case,
// camelCase versus snake_case versus spaces, or regular English
// inflections (run, running, runs) have the same terms.
func Terms(text string) []string {
	var out []string
	EachTerm(text, func(term []byte) { out = append(out, string(term)) })
	return out
}

// EachTerm calls f with each term of text, in order, as Terms returns
// them, without making a string of each: term is only valid during the
// call.
func EachTerm(text string, f func(term []byte)) {
	sc := termScratch.Get().(*termScratchSpace)
	defer termScratch.Put(sc)
	sc.buf, sc.spans = sc.t.AppendTokens(sc.buf[:0], sc.spans[:0], text)
	for _, sp := range sc.spans {
		w := sc.buf[sp.Start:sp.End]
		if Meaningless(w) {
			continue
		}
		sc.st = sc.stemmer.AppendStem(sc.st[:0], w)
		f(sc.st)
	}
}

// termScratchSpace is EachTerm's scratch space, reused across calls
// (resume lists the terms of every line of the exchanges it cuts).
type termScratchSpace struct {
	t       Tokenizer
	buf, st []byte
	spans   []Span
	stemmer Stemmer
}

var termScratch = sync.Pool{New: func() any { return new(termScratchSpace) }}
