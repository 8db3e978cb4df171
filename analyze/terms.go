package analyze

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Words are split the way SQLite FTS5's unicode61 tokenizer splits them:
// a word is a maximal run of letters, digits, combining marks and
// private-use characters; everything else separates words. Words are
// lowercased. Inside a word, CJK characters (isCJK) form segments of their
// own: "日本語のテスト" is one CJK segment, "utf8エンコード" a word
// segment and a CJK one.
//
// In the index, a word segment becomes its stem; a CJK segment of n
// characters becomes its n-1 bigrams followed by its last character
// ("日本語" -> "日本 本語 語"), one character alone stays as it is. So a
// query of any CJK substring of two characters or more is the phrase of
// its bigrams, which occur in a row in the document ("本語" -> "本語");
// one character is a prefix query ("語"*), which matches the bigrams it
// starts and the trailing character.

// isCJK reports whether r is a Han, Hiragana, Katakana or Hangul
// character, or the Katakana prolonged sound mark: the scripts written
// without spaces between words.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー'
}

// IsWordRune reports whether r, lowercased, belongs to a word as Words
// splits them: for code that counts words without building them.
func IsWordRune(r rune) bool { return isWordRune(unicode.ToLower(r)) }

// isWordRune reports whether r belongs to a word (see above).
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Co, r)
}

// Words splits text into lowercased words (see above), in order, with
// repeats. Diacritics are removed outside CJK segments ("naïve" ->
// "naive", "Café" -> "cafe"), before any stemming, so that a query
// without them finds a text with them and the other way round.
func Words(text string) []string {
	ws := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !isWordRune(r) })
	for i, w := range ws {
		ws[i] = fold(w)
	}
	return ws
}

// fold removes the diacritics of w outside its CJK segments (where a
// combining mark is part of the letter: Japanese dakuten).
func fold(w string) string {
	ascii := true
	for i := 0; i < len(w) && ascii; i++ {
		ascii = w[i] < utf8.RuneSelf
	}
	if ascii {
		return w
	}
	var b strings.Builder
	segments(w, func(seg string, cjk bool) {
		if cjk {
			b.WriteString(seg)
			return
		}
		if f, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), seg); err == nil && f != "" {
			seg = f
		}
		b.WriteString(seg)
	})
	return b.String()
}

// segments calls f for each segment of the lowercased word w, with
// whether it is CJK.
func segments(w string, f func(seg string, cjk bool)) {
	start, cjk := 0, false
	for i, r := range w {
		c := isCJK(r)
		if i > start && c != cjk {
			f(w[start:i], cjk)
			start = i
		}
		if i == start {
			cjk = c
		}
	}
	if start < len(w) {
		f(w[start:], cjk)
	}
}

// appendCJK appends the index form of a CJK segment to dst, whose terms
// start at start: its bigrams, then its last character.
func appendCJK(dst []byte, start int, seg string) []byte {
	sep := func() {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
	}
	prev := -1 // byte offset of the previous rune
	for i := range seg {
		if prev >= 0 {
			sep()
			dst = append(dst, seg[prev:nextRune(seg, i)]...)
		}
		prev = i
	}
	sep()
	return append(dst, seg[prev:]...)
}

func nextRune(s string, i int) int {
	_, n := utf8.DecodeRuneInString(s[i:])
	return i + n
}

// Document returns the index form of text: its terms separated by
// spaces, for a full-text index whose tokenizer splits on spaces and
// lowercases (FTS5 unicode61).
func Document(text string) string {
	return string(AppendDocument(make([]byte, 0, len(text)), text))
}

// AppendDocument appends the index form of text (as Document) to dst,
// with an Analyzer from a pool.
func AppendDocument(dst []byte, text string) []byte {
	a := recentPool.Get().(*Analyzer)
	defer recentPool.Put(a)
	return a.AppendDocument(dst, text)
}

// Analyzer turns texts into their index form (Document) for one goroutine
// at a time, remembering the stems of the words it met last: a goroutine
// that analyses many texts (the full-text indexer) keeps one.
type Analyzer struct {
	recent recentStems
}

// Document is Document with a's cache.
func (a *Analyzer) Document(text string) string {
	return string(a.AppendDocument(make([]byte, 0, len(text)), text))
}

// AppendDocument appends the index form of text (as Document) to dst. It
// is what the full-text indexer runs on every exchange, so it reads the
// text once and takes a fast path for words of ASCII letters and digits
// (most words of most logs): lowercased and stemmed in place, without the
// copies of the general path (Words, then segments), which the other
// words take. Both give the same terms.
func (a *Analyzer) AppendDocument(dst []byte, text string) []byte {
	start := len(dst)
	var scratch [64]byte
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf && !isASCIIWordByte(c) {
			i++
			continue
		}
		// A word starts at i (or a separator other than ASCII does).
		j, ascii := i, true
		for j < len(text) {
			if c := text[j]; c < utf8.RuneSelf {
				if !isASCIIWordByte(c) {
					break
				}
				j++
				continue
			}
			r, n := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(unicode.ToLower(r)) {
				break
			}
			ascii = false
			j += n
		}
		if j == i { // a separator other than ASCII
			_, n := utf8.DecodeRuneInString(text[i:])
			i += n
			continue
		}
		if !ascii {
			dst = appendWord(dst, start, fold(strings.ToLower(text[i:j])))
			i = j
			continue
		}
		w, h := scratch[:0], fnvInit
		for k := i; k < j; k++ {
			c := text[k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			w, h = append(w, c), fnvAdd(h, c)
		}
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		dst = a.recent.appendStem(dst, w, h)
		i = j
	}
	return dst
}

// isASCIIWordByte reports whether the ASCII character c belongs to a word
// (isWordRune).
func isASCIIWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// appendWord appends the index form of one lowercased, folded word (an
// element of Words) to dst, whose terms start at start: the stem of each
// word segment, the bigrams of each CJK segment.
func appendWord(dst []byte, start int, w string) []byte {
	segments(w, func(seg string, cjk bool) {
		if cjk {
			dst = appendCJK(dst, start, seg)
			return
		}
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		dst = append(dst, Stem(seg)...)
	})
	return dst
}

// Term is what a query word looks for in the index.
type Term struct {
	// Key is the index term whose document count measures how common
	// the term is (the stem); "" for a CJK segment, which is several
	// index terms.
	Key string
	// Expr is the term as an FTS5 query expression: a quoted stem, the
	// quoted phrase of a CJK segment's bigrams, or the prefix query of a
	// single CJK character. No word can be read as an operator or a
	// column filter.
	Expr string
}

// WordTerms returns the terms of one lowercased word (an element of
// Words): one per segment.
func WordTerms(w string) []Term {
	var out []Term
	segments(w, func(seg string, cjk bool) {
		if !cjk {
			s := Stem(seg)
			out = append(out, Term{Key: s, Expr: quote(s)})
			return
		}
		if utf8.RuneCountInString(seg) == 1 {
			out = append(out, Term{Expr: quote(seg) + "*"})
			return
		}
		var b strings.Builder
		prev := -1
		for i := range seg {
			if prev >= 0 {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(seg[prev:nextRune(seg, i)])
			}
			prev = i
		}
		out = append(out, Term{Expr: quote(b.String())})
	})
	return out
}

// MatchAny returns the FTS5 expression matching any of terms (OR), "" for
// none.
func MatchAny(terms []Term) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(t.Expr)
	}
	return b.String()
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
