package search

import (
	"slices"
	"strings"
	"sync"

	"github.com/praxis-os/continuity/analyze"
)

// Query analysis: free text in, a safe FTS5 MATCH expression out. A
// query's text is read once (ReadTime: the time span it names, and
// readText: its words and identifiers with their index terms), and the
// calls that follow (TimeOnly, the lexical side, the identifier side)
// read that, not the text.

// maxQueryTerms bounds the terms of a MATCH expression: a pasted page as a
// query would otherwise become an OR of thousands of terms, each a
// posting-list scan.
const maxQueryTerms = 64

// queryText is a query's text read once (readText).
type queryText struct {
	textAnalysis
	// phrased: the text names a time (Query.Named: a span, else a
	// weekday named alone); rest is then the text without that phrase,
	// analysed, nil when nothing is left.
	phrased bool
	rest    *textAnalysis
}

// timeOnly reports whether the text names a time and nothing else: the
// words around the phrase are all stopwords, filler or activity words.
func (t *queryText) timeOnly() bool {
	return t.phrased && (t.rest == nil || t.rest.bare)
}

// textAnalysis is one text of a query analysed.
type textAnalysis struct {
	// words are its words (analyze.Words), in order, with repeats.
	words []string
	// ids are its identifiers (analyze.Identifiers, ident.go).
	ids []queryIdent
	// dict holds what the search asks of each word of words and of the
	// identifiers: its index terms and whether it is meaningless.
	dict map[string]queryWord
	// idMatch is the FTS5 expression of the exchanges that may hold the
	// identifiers whole (identMatch).
	idMatch string
	// bare: each word is a stopword, filler or activity word (TimeOnly).
	bare bool
}

// queryIdent is one identifier of a query and the words of its parts
// (analyze.Words), in order.
type queryIdent struct {
	analyze.Identifier
	partWords []string
}

// queryWord is what the search asks of one word of a query.
type queryWord struct {
	terms       []analyze.Term // analyze.WordTerms
	meaningless bool           // analyze.Meaningless
}

// readText analyses a query's text; named is the time it names
// (ReadTime).
func readText(text string, named *NamedTime) *queryText {
	t := &queryText{textAnalysis: analyseText(text)}
	var phrase string
	switch {
	case named.OK:
		phrase = named.Ref.Phrase
	case named.Weekday != nil:
		phrase = named.Weekday.Phrase
	default:
		return t
	}
	t.phrased = true
	if rest := strings.Replace(strings.ToLower(text), phrase, " ", 1); strings.TrimSpace(rest) != "" {
		a := analyseText(rest)
		t.rest = &a
	}
	return t
}

// analyseText analyses one text of a query: its words and identifiers,
// and what the search asks of each word.
func analyseText(text string) textAnalysis {
	a := textAnalysis{dict: map[string]queryWord{}, bare: true}
	found := analyze.Identifiers(text)
	a.words = analyze.Words(text)
	all := slices.Clone(a.words)
	for _, id := range found {
		qi := queryIdent{Identifier: id}
		for _, p := range id.Parts {
			qi.partWords = append(qi.partWords, analyze.Words(p)...)
		}
		a.ids = append(a.ids, qi)
		all = append(append(all, qi.partWords...), id.Words...)
	}
	for _, w := range all {
		if _, ok := a.dict[w]; !ok {
			a.dict[w] = queryWord{meaningless: analyze.Meaningless(w)}
		}
	}
	for _, w := range a.words {
		a.bare = a.bare && (a.dict[w].meaningless || fillerWords()[w] || activityWords()[w])
	}
	for w, qw := range a.dict {
		qw.terms = analyze.WordTerms(w)
		a.dict[w] = qw
	}
	a.idMatch = identMatch(a.ids, a.dict)
	return a
}

// terms are the index terms of the text's BM25 words, without repeats
// ("runs" and "running" are one stem): its words as queryTerms keeps them
// (dropFiller: without conversational filler), and the parts of its
// identifiers that the index does not split off (camelCase).
func (a *textAnalysis) terms(dropFiller bool) []analyze.Term {
	words := queryTerms(a.words, a.dict, dropFiller)
	for _, id := range a.ids {
		for _, w := range id.partWords {
			if !a.dict[w].meaningless && !slices.Contains(id.Words, w) && !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	var out []analyze.Term
	seen := map[string]bool{}
	for _, w := range words {
		for _, t := range a.dict[w].terms {
			if !seen[t.Expr] {
				seen[t.Expr] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// queryTerms are a query's words (analyze.Words: runs of letters, digits,
// combining marks and private-use characters, lowercased) as the BM25
// query keeps them: without duplicates, stopwords, single ASCII letters
// (the "s" of "Mary's": dict's meaningless) and conversational filler
// (see fillerWords; when dropFiller), unless nothing would be left: "who
// am I" still searches for something.
func queryTerms(words []string, dict map[string]queryWord, dropFiller bool) []string {
	var all, kept []string
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] {
			continue
		}
		seen[w] = true
		all = append(all, w)
		if dict[w].meaningless || dropFiller && fillerWords()[w] {
			continue
		}
		kept = append(kept, w)
	}
	if len(kept) == 0 {
		kept = all
	}
	return kept[:min(len(kept), maxQueryTerms)]
}

// matchExpr turns a free-text query into an FTS5 MATCH expression: the
// index terms of its words (textAnalysis.terms, without the identifiers'
// parts), each quoted — so that no word can be read as an operator (AND,
// NOT, NEAR), a column filter ("user:") or a syntax error — joined by OR,
// so that BM25 ranks exchanges by how many of the query's rarer terms they
// hold rather than requiring all of them. It returns "" when the query has
// no term.
func matchExpr(text string, dropFiller bool) string {
	a := analyseText(text)
	a.ids = nil
	return analyze.MatchAny(a.terms(dropFiller))
}

// fillerWords are words of questions about past conversations that say
// nothing about their subject ("can you remind me what you told me in our
// previous chat", "the event I mentioned two weeks ago"). In a log of
// conversations they are rare enough in the text to get a high IDF, so
// they would pull up whichever exchange happens to use them.
// Dropping them helped BM25 and hybrid recall on the dev set
// (continuity-eval).
var fillerWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`mention mentioned remember remind told tell said say
		previous previously earlier conversation chat discussed talked ago recall`) {
		m[w] = true
	}
	return m
})
