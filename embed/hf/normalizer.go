package hf

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// bertNormalizer is tokenizer.json's BertNormalizer, in the order the
// tokenizers library applies its steps: clean the text, pad CJK
// ideographs with spaces, strip accents, lowercase.
//
// The character classes follow the library: a "control" character is one
// of the general categories Cc, Cf and Co except \t, \n and \r (the
// unicode_categories crate it uses has no Cn table), "whitespace" is
// Unicode White_Space plus \t, \n and \r. Go's Unicode tables (15.0) stand
// in for the crate's (older) ones: the few characters assigned since
// then may be classed differently.
type bertNormalizer struct {
	cleanText          bool
	handleChineseChars bool
	stripAccents       bool
	lowercase          bool
}

// normalize returns s normalized. It returns s itself when nothing
// changes (plain lowercase ASCII without control characters is common).
func (n *bertNormalizer) normalize(s string) string {
	if n.unchanged(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if n.cleanText {
			if r == 0 || r == utf8.RuneError || isControl(r) {
				continue
			}
			if isWhitespace(r) {
				r = ' '
			}
		}
		if n.handleChineseChars && isChineseChar(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if n.stripAccents {
		out = stripAccents(out)
	}
	if n.lowercase {
		out = lowercase(out)
	}
	return out
}

// unchanged reports whether normalize(s) == s without working it out:
// s is ASCII with no control character, no upper-case letter when n
// lowercases, and no white space other than ' ' when n cleans the text.
func (n *bertNormalizer) unchanged(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return false
		case c == ' ':
		case c < 0x20 || c == 0x7f:
			if n.cleanText || c == 0 {
				return false
			}
		case c >= 'A' && c <= 'Z':
			if n.lowercase {
				return false
			}
		}
	}
	return true
}

// stripAccents decomposes s (NFD) and drops the nonspacing marks (Mn).
func stripAccents(s string) string {
	d := norm.NFD.String(s)
	if !strings.ContainsFunc(d, isNonspacingMark) {
		return d
	}
	return strings.Map(func(r rune) rune {
		if isNonspacingMark(r) {
			return -1
		}
		return r
	}, d)
}

func isNonspacingMark(r rune) bool { return r >= 0x300 && unicode.Is(unicode.Mn, r) }

// lowercase lowercases s one character at a time, as Rust's
// char::to_lowercase does: the simple mappings, plus İ (U+0130), the one
// character whose lowercase is two ("i̇"). No context (a final Σ is σ).
func lowercase(s string) string {
	if strings.Contains(s, "İ") {
		s = strings.ReplaceAll(s, "İ", "i\u0307")
	}
	return strings.Map(unicode.ToLower, s)
}

// isWhitespace is the library's is_whitespace: \t, \n, \r and Unicode
// White_Space.
func isWhitespace(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r)
}

// isControl is the library's is_control: categories Cc, Cf and Co, except
// \t, \n and \r (which count as white space).
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	if r < 0x7f {
		return r < 0x20
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co)
}

// isChineseChar reports whether r is in one of the CJK ideograph blocks
// the library pads with spaces.
func isChineseChar(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF,
		r >= 0x3400 && r <= 0x4DBF,
		r >= 0x20000 && r <= 0x2A6DF,
		r >= 0x2A700 && r <= 0x2B73F,
		r >= 0x2B740 && r <= 0x2B81F,
		r >= 0x2B920 && r <= 0x2CEAF,
		r >= 0xF900 && r <= 0xFAFF,
		r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// isBertPunct is BertPreTokenizer's punctuation: ASCII punctuation
// (symbols such as $ + < = > ^ ` | ~ included) and Unicode P*.
func isBertPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
	}
	return unicode.IsPunct(r)
}
