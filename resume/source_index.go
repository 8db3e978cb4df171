package resume

import (
	"github.com/praxis-os/continuity/analyze"

	"context"
	"errors"

	"github.com/praxis-os/continuity/index"
)

// Ranker ranks exchanges by relevance to a query, restricted to sessions:
// the rows of the best matches, best first, at most limit.
type Ranker interface {
	Rank(ctx context.Context, query string, sessions []string, limit int) ([]int64, error)
}

// RankFunc adapts a function to Ranker.
type RankFunc func(ctx context.Context, query string, sessions []string, limit int) ([]int64, error)

// Rank calls f.
func (f RankFunc) Rank(ctx context.Context, query string, sessions []string, limit int) ([]int64, error) {
	return f(ctx, query, sessions, limit)
}

// IndexSource is the Source of a real workspace: the index for links,
// timelines and texts, and a Ranker (the search) for relevance.
type IndexSource struct {
	DB *index.DB
	// Ranker ranks for Relevant; without one, a query only steers how
	// long exchanges are cut, and selection falls back to recency.
	Ranker Ranker
	// Cache, when set, keeps links, timelines, layouts, texts and token
	// counts between packs (cache.go). Build brings it up to date with
	// the index before each pack; LinksInto, Timeline and Events answer
	// from it as of that moment.
	Cache *Cache
}

var _ Source = (*IndexSource)(nil)

// LinksInto implements Source.
func (s *IndexSource) LinksInto(ctx context.Context, session string) ([]index.SessionLink, error) {
	if s.Cache != nil {
		return s.Cache.linksInto(ctx, s.DB, session)
	}
	return s.DB.LinksInto(ctx, session)
}

// Timeline implements Source.
func (s *IndexSource) Timeline(ctx context.Context, sessions []string) ([]index.TimelineEntry, error) {
	if s.Cache != nil {
		return s.Cache.timeline(ctx, s.DB, sessions)
	}
	return s.DB.Timeline(ctx, sessions)
}

// Events implements Source.
func (s *IndexSource) Events(ctx context.Context, rows []int64) ([]index.Event, error) {
	if s.Cache != nil {
		return s.Cache.events(ctx, s.DB, rows)
	}
	byRow, err := s.DB.EventsByRowsWithoutRaw(ctx, rows) // resume never shows the raw line
	if err != nil {
		return nil, err
	}
	out := make([]index.Event, 0, len(rows))
	for _, r := range rows {
		if e, ok := byRow[r]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// LexicalRanker ranks with the index's full-text search alone (BM25 over
// the exchanges' texts, stemmed: see package analyze): any of the query's words, the
// rarer ones weighing more. It is the fallback when no hybrid search is
// available.
func LexicalRanker(db *index.DB) Ranker {
	return RankFunc(func(ctx context.Context, query string, sessions []string, limit int) ([]int64, error) {
		// The words as the full-text index analyses them (stems, CJK
		// bigrams): analyze.Words, then analyze.WordTerms.
		var terms []analyze.Term
		seen := map[string]bool{}
		for _, w := range analyze.Words(query) {
			if analyze.IsStopword(w) {
				continue
			}
			for _, t := range analyze.WordTerms(w) {
				if !seen[t.Expr] {
					seen[t.Expr] = true
					terms = append(terms, t)
				}
			}
		}
		if len(terms) == 0 {
			return nil, nil
		}
		hits, err := db.Lexical(ctx, analyze.MatchAny(terms), [2]float64{}, index.Filter{Sessions: sessions}, limit)
		if err != nil {
			return nil, err
		}
		rows := make([]int64, len(hits))
		for i, h := range hits {
			rows[i] = h.Row
		}
		return rows, nil
	})
}

// Relevant implements Source.
func (s *IndexSource) Relevant(ctx context.Context, query string, sessions []string, limit int) ([]int64, error) {
	if s.Ranker == nil {
		return nil, nil
	}
	return s.Ranker.Rank(ctx, query, sessions, limit)
}

// LatestSession implements Source.
func (s *IndexSource) LatestSession(ctx context.Context) (string, error) {
	return s.DB.LatestSession(ctx)
}

// SessionExists implements Source.
func (s *IndexSource) SessionExists(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, errors.New("empty session id")
	}
	return s.DB.SessionExists(ctx, id)
}

// AgentGone implements goneSource: why no agent holds the session's own
// exchanges in its window, "" when one may (index.DB.AgentGone).
func (s *IndexSource) AgentGone(ctx context.Context, session string) (string, error) {
	return s.DB.AgentGone(ctx, session)
}

// LatestSessionWithExchanges implements latestMaterial.
func (s *IndexSource) LatestSessionWithExchanges(ctx context.Context) (string, error) {
	return s.DB.LatestSessionWithExchanges(ctx)
}
