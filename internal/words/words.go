// Package words holds the small helpers of wording that several packages
// need: a noun by its count, a text cut to a size without splitting a
// character. (A default for an empty string is the standard library's
// cmp.Or.)
package words

import (
	"strconv"
	"unicode/utf8"
)

// Plural is one when n is 1, else many: "1 warning", "2 warnings" are
// fmt.Sprintf("%d %s", n, Plural(n, "warning", "warnings")).
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n and word, with an "s" unless n is 1: "1 exchange",
// "3 exchanges".
func Count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// Cut is s cut to at most n bytes on a character boundary (a UTF-8
// sequence is never split; invalid bytes are kept as they are), and
// whether it was cut.
func Cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
