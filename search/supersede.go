package search

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/index"
)

// Supersession: when a later exchange of the workspace asks the same
// question as an earlier one and answers it differently ("which node
// version for the frontend build?" — "Node 16" in January, "Node 22 since
// the upgrade" last week), the later one supersedes the earlier: it says
// what holds now. Search ranks it at least as high as the one it
// supersedes (so above it: newer first at equal score), and marks both
// (Result.Supersedes, Result.SupersededBy); resume packs say it too.
//
// The same question: the prompts' terms (analyze.Terms: stems, stopwords
// left out) overlap by SameQuestion or more (Jaccard: shared / all), with
// at least minQuestionTerms terms each ("go on", "run the tests" say too
// little to be the same question), and the same numbers ("issue 12" and
// "issue 13" are two questions). Answered differently: the answers
// differ (white space and case aside). Not a supersession: the later part
// of one turn cut in several exchanges (an imported "[continued]" prompt),
// nor a question asked again in the same session within sameTurn.

// SameQuestion is the least overlap of two prompts' terms for them to ask
// the same question.
const SameQuestion = 0.7

// minQuestionTerms is the fewest terms a prompt needs to be recognised as
// a question asked again.
const minQuestionTerms = 3

// sameTurn: a prompt repeated within this time in the same session is a
// retry or a continuation, not a question asked again later.
const sameTurn = 10 * time.Minute

// maxQuestionBytes: only this much of a prompt is compared (a pasted log
// is not a question asked again).
const maxQuestionBytes = 2000

// continuedPrefix opens the prompt of an imported turn's later parts
// (importer: "[continued] " and the turn's prompt).
const continuedPrefix = "[continued]"

// markSupersessions finds the supersessions among hits (each later
// exchange against each earlier one), raises each superseding hit's
// relevance to at least that of those it supersedes, and links them.
func markSupersessions(hits []*hit) {
	if len(hits) < 2 {
		return
	}
	terms := make([]map[string]bool, len(hits))
	for i, h := range hits {
		terms[i] = questionTerms(h.e.User)
	}
	for i, a := range hits {
		for j, b := range hits {
			if i == j || !Supersedes(a.e, b.e, terms[i], terms[j]) {
				continue
			}
			a.supersedes = append(a.supersedes, b)
			a.c.rel = max(a.c.rel, b.c.rel)
			if b.supersededBy == nil || newer(a.e, b.supersededBy.e) {
				b.supersededBy = a
			}
		}
	}
	// A chain (c supersedes b supersedes a) raises c to a's relevance
	// too: c supersedes a directly whenever the three ask the same
	// question, and the pairwise pass above saw that. Order the lists.
	for _, h := range hits {
		if len(h.supersedes) > 1 {
			sortByTime(h.supersedes)
		}
	}
}

// sortByTime orders hits newest first.
func sortByTime(hs []*hit) {
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && newer(hs[j].e, hs[j-1].e); j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
}

// questionTerms are the terms of a prompt compared for supersession; nil
// when it has too few to be recognised (or is a continuation).
func questionTerms(user string) map[string]bool {
	if strings.HasPrefix(strings.TrimSpace(user), continuedPrefix) {
		return nil
	}
	if len(user) > maxQuestionBytes {
		return nil
	}
	set := map[string]bool{}
	analyze.EachTerm(user, func(t []byte) { set[string(t)] = true })
	if len(set) < minQuestionTerms {
		return nil
	}
	return set
}

// Supersedes reports whether exchange a supersedes exchange b (see
// above); at and bt are their prompts' terms (questionTerms).
func Supersedes(a, b index.Event, at, bt map[string]bool) bool {
	if at == nil || bt == nil || !newer(a, b) {
		return false
	}
	if a.SessionID == b.SessionID && a.Timestamp.Sub(b.Timestamp) < sameTurn {
		return false
	}
	if jaccard(at, bt) < SameQuestion || numbersDiffer(at, bt) {
		return false
	}
	return !sameFolded(a.AI, b.AI)
}

// QuestionTerms is questionTerms, for callers comparing exchanges
// themselves (resume).
func QuestionTerms(user string) map[string]bool { return questionTerms(user) }

// numbersDiffer reports whether a term with a digit is in one set and not
// the other: "the status of issue 12" and "of issue 13", "module 1" and
// "module 6" are different questions however alike their words.
func numbersDiffer(a, b map[string]bool) bool {
	for _, pair := range [2][2]map[string]bool{{a, b}, {b, a}} {
		for t := range pair[0] {
			if !pair[1][t] && strings.ContainsAny(t, "0123456789") {
				return true
			}
		}
	}
	return false
}

// jaccard is |a ∩ b| / |a ∪ b|.
func jaccard(a, b map[string]bool) float64 {
	shared := 0
	for t := range a {
		if b[t] {
			shared++
		}
	}
	all := len(a) + len(b) - shared
	if all == 0 {
		return 0
	}
	return float64(shared) / float64(all)
}

// sameFolded reports whether a and b are the same text, white space and
// case aside (runs of white space alike, at either end none, each rune
// lowered: what comparing strings.ToLower of their strings.Fields joined
// by spaces says, FuzzSameFolded), without building the folded copies: a search compares the
// answers of every pair of its first hits that ask the same question
// (markSupersessions), and folding both answers for each pair was a
// quarter of a search's CPU on a workspace whose questions recur
// (BenchmarkSearchWorkspace).
func sameFolded(a, b string) bool {
	i, j := skipSpace(a, 0), skipSpace(b, 0)
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if ca < utf8.RuneSelf && cb < utf8.RuneSelf && !asciiSpace[ca] && !asciiSpace[cb] {
			// ASCII letters and signs: most of an answer.
			if ca != cb && lowerASCII(ca) != lowerASCII(cb) {
				return false
			}
			i, j = i+1, j+1
			continue
		}
		ra, na := utf8.DecodeRuneInString(a[i:])
		rb, nb := utf8.DecodeRuneInString(b[j:])
		sa, sb := unicode.IsSpace(ra), unicode.IsSpace(rb)
		switch {
		case sa && sb:
			// A run of white space on each side is one space.
			i, j = skipSpace(a, i), skipSpace(b, j)
			if (i == len(a)) != (j == len(b)) {
				return false
			}
			continue
		case sa || sb:
			return false
		case ra != rb && unicode.ToLower(ra) != unicode.ToLower(rb):
			return false
		}
		i, j = i+na, j+nb
	}
	// Whatever is left of one side must be white space only.
	return skipSpace(a, i) == len(a) && skipSpace(b, j) == len(b)
}

// asciiSpace: the ASCII bytes unicode.IsSpace (and strings.Fields) take
// for white space.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// lowerASCII lowers an ASCII letter.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// skipSpace is the index of the first rune of s at or after i that is
// not white space (len(s) when none).
func skipSpace(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !asciiSpace[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return i
}
