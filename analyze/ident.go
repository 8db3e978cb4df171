package analyze

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Identifiers: the names code is written with. In a query, an identifier
// ("send_reset_email", "SendResetEmail", "auth/views.py",
// "internal/backoff/policy.go", "pkg.Func", "E1234", "a3f9c2e") is more
// than its words: an exchange holding it whole is about it; one holding
// its words apart ("send a reset email") may not be. Words splits an
// identifier where FTS5 does (at '_', '.', '/', '-'), Tokens also at
// camelCase; neither keeps the whole, which Identifier does.

// Identifier is one identifier found in a text.
type Identifier struct {
	// Text is the identifier as written, lowercased, without the
	// punctuation around it ("auth/views.py", "sendresetemail").
	Text string
	// Words are its words as the full-text index splits them (Words).
	Words []string
	// Parts are its finer parts (Tokens: camelCase and snake_case
	// split), without repeats.
	Parts []string
	// Hex is true for a hexadecimal hash (7 to 64 hex digits, with a
	// letter and a digit): a shorter one names a longer one it starts
	// ("a3f9c2e" for "a3f9c2e81b…"), as git's abbreviated hashes do.
	Hex bool
}

// identSeparators join the parts of an identifier: snake_case, dotted
// names, paths, kebab-case, scopes (a::b), anchors (a#b), mentions.
const identSeparators = "_./-:#@\\"

// identTrim is the punctuation around an identifier in prose.
const identTrim = ".,;:!?'\"`()[]{}<>*"

// Identifiers returns the identifiers of text, in order, without repeats:
// the white-space separated tokens (without the punctuation around them)
// that join words with one of _ . / - : # @ \ ("send_reset_email",
// "auth/views.py", "pkg.Func"; a plain hyphenated English word of two
// parts, "front-end", is not one), change case inside a word
// ("SendResetEmail", "getHTTPClient") or mix letters and digits ("E1234",
// "sha256", "a3f9c2e"). A token must hold at least three characters and
// a word of two letters or more.
func Identifiers(text string) []Identifier {
	var out []Identifier
	seen := map[string]bool{}
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;()[]{}<>\"'`=|", r)
	}) {
		tok = strings.Trim(tok, identTrim)
		if utf8.RuneCountInString(tok) < 3 || !isIdentifier(tok) {
			continue
		}
		lower := strings.ToLower(tok)
		if seen[lower] {
			continue
		}
		seen[lower] = true
		id := Identifier{Text: lower, Words: Words(tok), Hex: isHexHash(lower)}
		for _, p := range Tokens(tok) {
			if !slices.Contains(id.Parts, p) {
				id.Parts = append(id.Parts, p)
			}
		}
		long := false
		for _, p := range id.Parts {
			long = long || len(p) >= 2 && !Meaningless(p)
		}
		if long {
			out = append(out, id)
		}
	}
	return out
}

// isIdentifier reports whether tok (trimmed) is an identifier: see
// Identifiers.
func isIdentifier(tok string) bool {
	var letters, digits, seps, hyphens int
	camel := false
	prev := rune(-1)
	for _, r := range tok {
		switch {
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) && prev >= 0 && unicode.IsLower(prev) {
				camel = true
			}
		case unicode.IsDigit(r):
			digits++
		case strings.ContainsRune(identSeparators, r):
			seps++
			if r == '-' {
				hyphens++
			}
		default:
			return false // other punctuation: not a name
		}
		prev = r
	}
	switch {
	case letters == 0:
		return false // numbers, dates, versions without a letter
	case camel, digits > 0:
		return true
	case seps == 0:
		return false
	case seps == hyphens && hyphens == 1:
		return false // front-end, re-run: English, not code
	}
	return true
}

// isHexHash reports whether s (lowercased) looks like a hexadecimal hash.
func isHexHash(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	var letter, digit bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'f':
			letter = true
		default:
			return false
		}
	}
	return letter && digit
}

// CountIdentifier counts the occurrences of id, whole, in text: case
// ignored, not inside a longer name (the characters either side are not
// letters, digits or '_'); a hex hash also counts where it starts a
// longer one.
func CountIdentifier(text string, id Identifier) int {
	n := 0
	if id.Text == "" {
		return 0
	}
	for i := 0; i < len(text); {
		start, size := indexFold(text[i:], id.Text)
		if start < 0 {
			break
		}
		start += i
		if !nameRuneBefore(text, start) && (id.Hex || !nameRuneAt(text, start+size)) {
			n++
		}
		i = start + 1
	}
	return n
}

// indexFold is the byte index of the first match of the lowercased needle
// in s, case ignored, and the length of the match in s; -1 when none.
func indexFold(s, needle string) (at, size int) {
	ascii := isASCII(needle)
	for i := 0; i < len(s); i++ {
		if ascii && lowerASCII(s[i]) != needle[0] || !ascii && !utf8.RuneStart(s[i]) {
			continue
		}
		if n, ok := foldPrefix(s[i:], needle, ascii); ok {
			return i, n
		}
	}
	return -1, 0
}

// foldPrefix reports whether s starts with needle (lowercased), case
// ignored, and how many bytes of s that prefix takes.
func foldPrefix(s, needle string, ascii bool) (int, bool) {
	if ascii {
		if len(needle) > len(s) {
			return 0, false
		}
		for k := 0; k < len(needle); k++ {
			if lowerASCII(s[k]) != needle[k] {
				return 0, false
			}
		}
		return len(needle), true
	}
	n := 0
	for _, nr := range needle {
		r, size := utf8.DecodeRuneInString(s[n:])
		if size == 0 || unicode.ToLower(r) != nr {
			return 0, false
		}
		n += size
	}
	return n, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// nameRuneBefore reports whether the rune before byte i of s belongs to a
// name (a letter, a digit or '_').
func nameRuneBefore(s string, i int) bool {
	if i <= 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isNameRune(r)
}

// nameRuneAt reports whether the rune at byte i of s belongs to a name.
func nameRuneAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isNameRune(r)
}

func isNameRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
