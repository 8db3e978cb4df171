package resume

import (
	"context"
	"errors"

	"github.com/praxis-os/continuity/search"
)

// SearchRanker ranks with the hybrid search (BM25 and vectors fused),
// restricted to the chain of the first session given (S): the ranking
// resume uses when a Searcher is at hand. Results of sessions beyond the
// chain's depth cap are dropped by the selection.
func SearchRanker(s *search.Searcher) Ranker {
	return RankFunc(func(ctx context.Context, query string, sessions []string, limit int) ([]int64, error) {
		if len(sessions) == 0 {
			return nil, nil
		}
		res, err := s.Search(ctx, search.Query{Text: query, Chain: sessions[0], Limit: min(limit, search.MaxLimit)})
		if errors.Is(err, search.ErrEmptyQuery) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		rows := make([]int64, len(res))
		for i, r := range res {
			rows[i] = r.Row
		}
		return rows, nil
	})
}
