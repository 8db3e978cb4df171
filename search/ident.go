package search

import (
	"context"
	"slices"
	"strings"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/index"
)

// Identifiers in queries ("send_reset_email", "SendResetEmail",
// "auth/views.py", "E1234", "a3f9c2e"; analyze.Identifiers) match as
// wholes first, then as parts:
//
//   - retrieval: the BM25 query holds the identifier's words as the index
//     splits them (send, reset, email), and its finer parts too (a
//     camelCase name is one word in the index: its parts are added), so an
//     exchange naming it in other forms is found; a second list, asked of
//     FTS5, holds the exchanges where its words stand in a row (the phrase
//     "send reset email"; a hex hash as a prefix), so that the exchanges
//     naming it whole are among the candidates however common its words;
//   - scoring: an identifier counts in the lexical strength as one term,
//     weighing what its parts weigh together, held with the strength of
//     its whole occurrences (CountIdentifier: case ignored, not inside a
//     longer name; in the user text five times an occurrence in the
//     answer or the exchange's files), or with identPartShare of the
//     strength of its parts when it is not there whole. So the only
//     exchange holding send_reset_email outranks one that says "send a
//     reset email", which the index cannot tell apart.

// identPartShare is the share of an identifier's weight that its parts
// alone can earn: an exchange holding the parts but not the whole scores
// at most this much of what one holding the whole scores.
const identPartShare = 0.5

// identTerm is one identifier of a query as the lexical strength counts
// it.
type identTerm struct {
	id analyze.Identifier
	// members are the indices, in the query's lexTerms, of the terms that
	// belong to the identifier (its words and parts: they count through
	// it, not on their own); parts those of its parts, whose strengths
	// make its strength when it is not there whole.
	members, parts []int
	weight         float64
}

// identTerms links each identifier of the text a to the query's terms
// lts.
func identTerms(a *textAnalysis, lts []lexTerm) []identTerm {
	var out []identTerm
	index := map[string]int{}
	for i, t := range lts {
		if t.term.Key != "" {
			index[t.term.Key] = i
		}
	}
	for _, id := range a.ids {
		it := identTerm{id: id.Identifier}
		seen := map[int]bool{}
		add := func(w string, part bool) {
			for _, t := range a.dict[w].terms {
				i, ok := index[t.Key]
				if !ok || t.Key == "" {
					continue
				}
				if !seen[i] {
					seen[i] = true
					it.members = append(it.members, i)
				}
				if part && !slices.Contains(it.parts, i) {
					it.parts = append(it.parts, i)
					it.weight += lts[i].weight
				}
			}
		}
		for _, w := range id.partWords {
			add(w, true)
		}
		for _, w := range id.Words {
			add(w, false)
		}
		if it.weight == 0 {
			it.weight = 1
			for _, i := range it.members {
				it.weight = max(it.weight, lts[i].weight)
			}
		}
		out = append(out, it)
	}
	return out
}

// strength is how strongly an exchange (user text, answer and files) holds
// the identifier: its whole occurrences (saturating with k: bm25K1, length
// normalised), or identPartShare of its parts' strengths (termStrength:
// each of the query's terms').
func (it identTerm) strength(termStrength []float64, lts []lexTerm, user, ai string, k float64) float64 {
	f := 5*float64(analyze.CountIdentifier(user, it.id)) + float64(analyze.CountIdentifier(ai, it.id))
	whole := f / (f + k)
	var got, all float64
	for _, i := range it.parts {
		got += lts[i].weight * termStrength[i]
		all += lts[i].weight
	}
	parts := 0.0
	if all > 0 {
		parts = identPartShare * got / all
	}
	return max(whole, parts)
}

// identMatch is the FTS5 expression of the exchanges that may hold the
// query's identifiers whole (a superset: the index cannot tell
// send_reset_email from "send reset email"): the phrase of the words of
// each that has several, the prefix of a hex hash, the stem of a single
// word; "" when there is none.
func identMatch(ids []queryIdent, dict map[string]queryWord) string {
	var exprs []string
	for _, id := range ids {
		switch {
		case id.Hex && len(id.Words) == 1:
			exprs = append(exprs, `"`+id.Words[0]+`"*`)
		case len(id.Words) == 1:
			if ts := dict[id.Words[0]].terms; len(ts) == 1 && ts[0].Key != "" {
				exprs = append(exprs, ts[0].Expr)
			}
		case len(id.Words) > 1:
			var stems []string
			for _, w := range id.Words {
				ts := dict[w].terms
				if len(ts) != 1 || ts[0].Key == "" {
					stems = nil
					break
				}
				stems = append(stems, ts[0].Key)
			}
			if len(stems) > 1 {
				exprs = append(exprs, `"`+strings.Join(stems, " ")+`"`)
			}
		}
	}
	return strings.Join(exprs, " OR ")
}

// identifierSide links the identifiers of the query's text t to the
// query's terms lts; and asks FTS5 for the exchanges that may hold them
// whole (t.idMatch), under the side's filter, so that they are among the
// candidates: a failure there only loses that list.
func (s *Searcher) identifierSide(ctx context.Context, t *textAnalysis, lts []lexTerm, w [2]float64, sq sideQuery) ([]identTerm, []index.LexicalHit) {
	if len(t.ids) == 0 {
		return nil, nil
	}
	ids := identTerms(t, lts)
	if t.idMatch == "" {
		return ids, nil
	}
	hits, err := s.db.Lexical(ctx, t.idMatch, w, sq.f, sq.depth)
	if err != nil {
		s.log.Debug("identifier query", "match", t.idMatch, "err", err)
		return ids, nil
	}
	return ids, hits
}
