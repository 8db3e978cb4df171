package search

import (
	"context"
	"math"
	"sort"
	"strings"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/index"
)

// Pseudo-relevance feedback (RM3, Lavrenko and Croft's relevance model as
// Abdul-Jaleel et al. use it): the query is expanded with the terms that
// weigh most in its first BM25 results, each result weighing by its score,
// and run again. An evaluation option (Options.Expansion); off by default,
// as it did not help on both dev sets (see cmd/continuity-eval).

// rm3Docs is how many first results feed the expansion.
const rm3Docs = 10

// expand returns the MATCH expression of terms plus n expansion terms
// drawn from the first hits, or "" when there is nothing to add.
func (s *Searcher) expand(ctx context.Context, terms []analyze.Term, hits []index.LexicalHit, n int) string {
	if len(hits) == 0 || n <= 0 {
		return ""
	}
	hits = hits[:min(len(hits), rm3Docs)]
	rows := make([]int64, len(hits))
	for i, h := range hits {
		rows[i] = h.Row
	}
	evs, err := s.db.EventsByRowsWithoutRaw(ctx, rows) // only the texts are read
	if err != nil {
		return ""
	}
	have := map[string]bool{}
	for _, t := range terms {
		have[t.Key] = true
	}
	// P(t|R) ≈ Σ_d P(t|d)·score(d), scores normalised to sum 1.
	var total float64
	for _, h := range hits {
		total += h.Score
	}
	weight := map[string]float64{}
	for _, h := range hits {
		e, ok := evs[h.Row]
		if !ok || total <= 0 {
			continue
		}
		toks := strings.Fields(analyze.Document(head(e.User + "\n" + e.AI)))
		if len(toks) == 0 {
			continue
		}
		for _, t := range toks {
			if have[t] || len(t) < 3 || analyze.IsStopword(t) {
				continue
			}
			weight[t] += (h.Score / total) / float64(len(toks))
		}
	}
	// Favour the terms rare in the whole history: weight · idf.
	cands := make([]string, 0, len(weight))
	for t := range weight {
		cands = append(cands, t)
	}
	docs, all, err := s.termDocs(ctx, cands, nil)
	if err != nil || all == 0 {
		return ""
	}
	for t := range weight {
		n := float64(docs[t])
		weight[t] *= math.Log((float64(all) + 1) / (n + 0.5))
	}
	sort.Slice(cands, func(i, j int) bool { return weight[cands[i]] > weight[cands[j]] })
	out := append([]analyze.Term(nil), terms...)
	for _, t := range cands[:min(n, len(cands))] {
		out = append(out, analyze.Term{Key: t, Expr: `"` + strings.ReplaceAll(t, `"`, `""`) + `"`})
	}
	return analyze.MatchAny(out)
}
