package search

import (
	"context"
	"fmt"
	"time"
)

// A result can carry its neighbours (Query.Context, like grep -C): the
// exchanges of its session just before and after it, so that an agent
// that finds a question also sees its answer ("go with it", logged one
// exchange later), and one that finds "done" sees what was asked. They
// are shown as context, never as matches: they are not scored, and a
// neighbour may be a result of its own.

// MaxContext bounds Query.Context.
const MaxContext = 10

// ContextExchange is a neighbour of a result in its session: Offset -1 is
// the exchange just before it, 1 the one just after.
type ContextExchange struct {
	Offset    int       `json:"offset"`
	ID        string    `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	User      string    `json:"user,omitempty"`
	AI        string    `json:"ai,omitempty"`
	Files     []string  `json:"files,omitempty"`
	File      string    `json:"file"`
	Line      int64     `json:"line"`
}

// withContext sets each result's Context: up to n exchanges of its session
// before it and after it, in the session's order.
func (s *Searcher) withContext(ctx context.Context, res []Result, n int) error {
	if n <= 0 || len(res) == 0 {
		return nil
	}
	rows := make([]int64, len(res))
	for i, r := range res {
		rows[i] = r.Row
	}
	nbs, err := s.db.SessionNeighbours(ctx, rows, n)
	if err != nil {
		return fmt.Errorf("search: context: %w", err)
	}
	var need []int64
	for _, nb := range nbs {
		need = append(need, nb.Before...)
		need = append(need, nb.After...)
	}
	evs, err := s.db.ExchangesByRows(ctx, need)
	if err != nil {
		return fmt.Errorf("search: context: %w", err)
	}
	for i := range res {
		nb := nbs[res[i].Row]
		var out []ContextExchange
		for k := len(nb.Before) - 1; k >= 0; k-- {
			if e, ok := evs[nb.Before[k]]; ok {
				out = append(out, ContextExchange{Offset: -k - 1, ID: e.EventID, Timestamp: e.Timestamp, User: e.User, AI: e.AI, Files: e.Files, File: e.File, Line: e.Line})
			}
		}
		for k, row := range nb.After {
			if e, ok := evs[row]; ok {
				out = append(out, ContextExchange{Offset: k + 1, ID: e.EventID, Timestamp: e.Timestamp, User: e.User, AI: e.AI, Files: e.Files, File: e.File, Line: e.Line})
			}
		}
		res[i].Context = out
	}
	return nil
}
