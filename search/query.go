package search

import (
	"strings"

	"github.com/praxis-os/continuity/analyze"
)

// Query analysis: free text in, a safe FTS5 MATCH expression out.

// maxQueryTerms bounds the terms of a MATCH expression: a pasted page as a
// query would otherwise become an OR of thousands of terms, each a
// posting-list scan.
const maxQueryTerms = 64

// queryTerms splits a query into words the way the full-text index does
// (analyze.Words: runs of letters, digits, combining marks and private-use
// characters, lowercased). It drops duplicates, stopwords, single ASCII
// letters (the "s" of "Mary's") and conversational filler (see
// fillerWords; when dropFiller), unless nothing would be left: "who am I"
// still searches for something.
func queryTerms(text string, dropFiller bool) []string {
	var all, kept []string
	seen := map[string]bool{}
	for _, w := range analyze.Words(text) {
		if seen[w] {
			continue
		}
		seen[w] = true
		all = append(all, w)
		if analyze.Meaningless(w) || dropFiller && fillerWords[w] {
			continue
		}
		kept = append(kept, w)
	}
	if len(kept) == 0 {
		kept = all
	}
	return kept[:min(len(kept), maxQueryTerms)]
}

// indexTerms are the index terms of words (analyze.WordTerms), without
// repeats ("runs" and "running" are one stem).
func indexTerms(words []string) []analyze.Term {
	var out []analyze.Term
	seen := map[string]bool{}
	for _, w := range words {
		for _, t := range analyze.WordTerms(w) {
			if !seen[t.Expr] {
				seen[t.Expr] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// matchExpr turns a free-text query into an FTS5 MATCH expression: the
// index terms of its words (queryTerms), each quoted — so that no word can
// be read as an operator (AND, NOT, NEAR), a column filter ("user:") or a
// syntax error — joined by OR, so that BM25 ranks exchanges by how many of
// the query's rarer terms they hold rather than requiring all of them. It
// returns "" when the query has no term.
func matchExpr(text string, dropFiller bool) string {
	return analyze.MatchAny(indexTerms(queryTerms(text, dropFiller)))
}

// fillerWords are words of questions about past conversations that say
// nothing about their subject ("can you remind me what you told me in our
// previous chat", "the event I mentioned two weeks ago"). In a log of
// conversations they are rare enough in the text to get a high IDF, so
// they would pull up whichever exchange happens to use them.
// Dropping them helped BM25 and hybrid recall on the dev set
// (continuity-eval).
var fillerWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`mention mentioned remember remind told tell said say
		previous previously earlier conversation chat discussed talked ago recall`) {
		m[w] = true
	}
	return m
}()
