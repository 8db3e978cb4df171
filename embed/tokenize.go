package embed

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/praxis-os/continuity/analyze"
)

// Text analysis shared by the builtin embedder and, through Tokens, Terms
// by query analysis elsewhere. Stems come from package analyze.
//
// A word is a maximal run of Unicode letters, digits and combining marks;
// everything else (white space, punctuation, '_', '-', '\'', symbols)
// separates words, so snake_case and kebab-case split. Inside a run,
// camelCase splits too:
//
//	ConversationWatcher -> conversation watcher
//	HTTPServer          -> http server   (acronym, then a capitalised word)
//	Base64Encode        -> base64 encode (a capitalised word after digits)
//	URLs, IPv4, sha256  -> urls, ipv4, sha256 (kept whole)
//
// Words are lowercased (unicode.ToLower). Letters and digits are not split
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

// span is a word inside a byte buffer: buf[start:end].
type span struct{ start, end int }

// tokenizer holds reusable scratch space for splitting text into words.
type tokenizer struct {
	runes []rune
	cls   []uint8
}

// appendWords splits text into lowercased words, appending their bytes to
// buf and their positions in buf to spans.
func (t *tokenizer) appendWords(buf []byte, spans []span, text string) ([]byte, []span) {
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
func (t *tokenizer) splitRun(buf []byte, spans []span) ([]byte, []span) {
	rs, cs := t.runes, t.cls
	start := len(buf)
	for j, r := range rs {
		if j > 0 && camelBoundary(cs, j) && len(buf) > start {
			spans = append(spans, span{start, len(buf)})
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
		spans = append(spans, span{start, len(buf)})
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

// Tokens splits text into lowercased words (see the package's splitting
// rules) without dropping stopwords or stemming.
func Tokens(text string) []string {
	var t tokenizer
	buf, spans := t.appendWords(nil, nil, text)
	s := string(buf)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = s[sp.start:sp.end]
	}
	return out
}

// Terms returns the index terms of text, as the builtin embedder sees them:
// the words of [Tokens], without stopwords and single ASCII letters,
// stemmed with analyze.Stem. Two texts that differ only in case, camelCase versus
// snake_case versus spaces, or regular English inflections (run, running,
// runs) have the same terms.
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
	sc.buf, sc.spans = sc.t.appendWords(sc.buf[:0], sc.spans[:0], text)
	for _, sp := range sc.spans {
		w := sc.buf[sp.start:sp.end]
		if skipWord(w) {
			continue
		}
		sc.st = sc.stemmer.AppendStem(sc.st[:0], w)
		f(sc.st)
	}
}

// termScratchSpace is EachTerm's scratch space, reused across calls
// (resume lists the terms of every line of the exchanges it cuts).
type termScratchSpace struct {
	t       tokenizer
	buf, st []byte
	spans   []span
	stemmer analyze.Stemmer
}

var termScratch = sync.Pool{New: func() any { return new(termScratchSpace) }}

// skipWord reports whether a lowercased word carries no meaning of its own:
// a stopword or a single ASCII letter (the "s" of "user's", the "t" of
// "don't").
func skipWord(w []byte) bool {
	if len(w) == 1 && w[0] >= 'a' && w[0] <= 'z' {
		return true
	}
	_, ok := stopwords[string(w)]
	return ok
}

// IsStopword reports whether the lowercased word w is on the stopword list.
func IsStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}

// stopwords is a small list of English function words, plus the fragments
// contractions split into (don't -> don t).
var stopwords = func() map[string]struct{} {
	words := []string{
		"a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at",
		"be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could",
		"did", "do", "does", "doing", "down", "during",
		"each", "either",
		"few", "for", "from", "further",
		"had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how",
		"i", "if", "in", "into", "is", "it", "its", "itself",
		"just",
		"me", "more", "most", "my", "myself",
		"no", "nor", "not", "now",
		"of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
		"same", "she", "should", "so", "some", "such",
		"than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
		"under", "until", "up", "us",
		"very",
		"was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
		"you", "your", "yours", "yourself", "yourselves",
		// contraction fragments
		"don", "doesn", "didn", "isn", "aren", "wasn", "weren", "haven", "hasn", "hadn",
		"won", "wouldn", "shouldn", "couldn", "mustn", "needn", "ll", "ve", "re",
	}
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}()
