package resume

import (
	"context"
	"errors"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/search"
)

// SearchRanker ranks with the hybrid search (BM25 and vectors fused),
// restricted to the chain of the first session given (S): the ranking
// resume uses when a Searcher is at hand. Results of sessions beyond the
// chain's depth cap are dropped by the selection.
func SearchRanker(s *search.Searcher) Ranker { return SearchRankerAt(s, time.Time{}) }

// SearchRankerAt is SearchRanker for a query asked at a given time: the
// relative times it names ("what we did last week") are read against at
// (see search.Query.Now); the zero time means now.
func SearchRankerAt(s *search.Searcher, at time.Time) Ranker {
	return searchRanker{s: s, at: at}
}

// searchRanker is SearchRankerAt's Ranker.
type searchRanker struct {
	s  *search.Searcher
	at time.Time
}

// Rank implements Ranker: the search's ranking of the chain's exchanges
// (sessions, as the selection followed it, depth cap included), without
// reading their texts (search.Searcher.RankRows): identical texts are
// collapsed by the selection, which reads the texts of the few dozen
// exchanges it looks at, not of all those ranked.
func (r searchRanker) Rank(ctx context.Context, query string, sessions []string, limit int) ([]int64, error) {
	if len(sessions) == 0 {
		return nil, nil
	}
	// No score floor: the floor decides whether a search shows anything
	// at all; resume only needs the order, and an exchange under the
	// floor still beats an unrelated recent one.
	noFloor := 0.0
	rows, err := r.s.RankRows(ctx, search.Query{Text: query, Sessions: sessions, Limit: min(limit, search.MaxLimit), Now: r.at, MinScore: &noFloor})
	if errors.Is(err, search.ErrEmptyQuery) || errors.Is(err, index.ErrNoFullText) {
		// No query ranking possible (the full-text index is being
		// rebuilt and no vector answered): recency alone chooses.
		return nil, nil
	}
	return rows, err
}
