package search

import (
	"slices"
	"strings"

	"github.com/praxis-os/continuity/analyze"
)

// Query analysis: free text in, a safe FTS5 MATCH expression out. A
// query's text is analysed once, at the start of its search (readQuery):
// the steps that follow (the lexical side, the identifier side, the test
// for a query about nothing but a time) read that analysis, not the text.

// maxQueryTerms bounds the terms of a MATCH expression: a pasted page as a
// query would otherwise become an OR of thousands of terms, each a
// posting-list scan.
const maxQueryTerms = 64

// queryRead is a query read once: its text analysed, and the text
// without the phrase of the time span it names.
type queryRead struct {
	queryText
	// rest is the text without the phrase of the span it names
	// (Query.Named), analysed, when that leaves something: the words the
	// lexical strength counts (withoutTimePhrase). nil otherwise.
	rest *queryText
	// only is the span the query names when it names nothing else
	// (TimeOnly), within its own Since and Until; nil otherwise.
	only *TimeRef
}

// queryText is one text of a query analysed.
type queryText struct {
	// terms are the index terms of its BM25 words (lexicalWords), without
	// repeats: the BM25 query before the common ones are left out.
	terms []analyze.Term
	// ids are its identifiers (analyze.Identifiers, ident.go).
	ids []queryIdent
	// idMatch is the FTS5 expression of the exchanges that may hold the
	// identifiers whole (identMatch).
	idMatch string
	// bare: every word of the text is a stopword, filler or activity
	// word (onlyTime).
	bare bool
}

// queryIdent is one identifier of a query with the index terms of its
// words (analyze.WordTerms): those of the words of its parts, in order,
// and those of its words as the index splits them.
type queryIdent struct {
	analyze.Identifier
	partTerms, wordTerms [][]analyze.Term
}

// readQuery reads q's text, whose time q.Named holds (ReadTime): its
// words and identifiers, and whether it names nothing but a time.
func (s *Searcher) readQuery(q Query) *queryRead {
	dropFiller := !s.opts.KeepFillerWords
	r := &queryRead{queryText: analyseText(q.Text, dropFiller)}
	ref, ok := q.Named.Ref, q.Named.OK
	if !ok && q.Named.Weekday != nil {
		ref, ok = *q.Named.Weekday, true
	}
	if !ok {
		return r
	}
	rest := strings.Replace(strings.ToLower(q.Text), ref.Phrase, " ", 1)
	t := analyseText(rest, dropFiller)
	if t.bare && s.opts.TimeWeight >= 0 {
		if !q.Since.IsZero() && q.Since.After(ref.From) {
			ref.From = q.Since
		}
		if !q.Until.IsZero() && q.Until.Before(ref.To) {
			ref.To = q.Until
		}
		r.only = &ref
	}
	if q.Named.OK && strings.TrimSpace(rest) != "" {
		r.rest = &t
	}
	return r
}

// analyseText analyses one text of a query: its words (analyze.Words),
// each once, less the meaningless ones (queryTerms), and the parts of its
// identifiers that the index does not split off (camelCase: they join its
// words); the index terms of all of them and of its identifiers' words.
func analyseText(text string, dropFiller bool) queryText {
	var t queryText
	ids := analyze.Identifiers(text)
	words := analyze.Words(text)
	partWords := make([][]string, len(ids)) // the words of each one's parts
	for i, id := range ids {
		for _, p := range id.Parts {
			partWords[i] = append(partWords[i], analyze.Words(p)...)
		}
	}
	lexical := queryTerms(words, dropFiller)
	t.bare = true
	for _, w := range words {
		t.bare = t.bare && (analyze.Meaningless(w) || fillerWords[w] || activityWords[w])
	}
	for i, id := range ids {
		for _, w := range partWords[i] {
			if !analyze.Meaningless(w) && !slices.Contains(id.Words, w) && !slices.Contains(lexical, w) {
				lexical = append(lexical, w)
			}
		}
	}
	t.terms = indexTerms(lexical)
	for i, id := range ids {
		qi := queryIdent{Identifier: id}
		for _, w := range partWords[i] {
			qi.partTerms = append(qi.partTerms, analyze.WordTerms(w))
		}
		for _, w := range id.Words {
			qi.wordTerms = append(qi.wordTerms, analyze.WordTerms(w))
		}
		t.ids = append(t.ids, qi)
	}
	t.idMatch = identMatch(t.ids)
	return t
}

// queryTerms are a query's words (analyze.Words: runs of letters, digits,
// combining marks and private-use characters, lowercased) as the BM25
// query keeps them: without duplicates, stopwords, single ASCII letters
// (the "s" of "Mary's") and conversational filler (see fillerWords; when
// dropFiller), unless nothing would be left: "who am I" still searches
// for something.
func queryTerms(words []string, dropFiller bool) []string {
	var all, kept []string
	seen := map[string]bool{}
	for _, w := range words {
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
	return analyze.MatchAny(indexTerms(queryTerms(analyze.Words(text), dropFiller)))
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
