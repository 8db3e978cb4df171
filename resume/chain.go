package resume

// The chain: which sessions a resume draws from.
//
// The chain of S is S, then the sessions S resumes (session_resume events
// with new_session = S name them in previous_session), then the sessions
// those resume, and so on, breadth-first. A session that resumes several
// sessions has several links: all are followed, the newest link (by the
// session_resume event's timestamp, then its position in the index) first.
// A session is visited once, so cycles (A resumes B resumes A) end there;
// a session more than MaxDepth links away from S is left out.

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/praxis-os/continuity/index"
)

// DefaultMaxDepth is how many links back the chain goes by default.
//
// It was 20. But an agent that starts a session a day resumes a 20-link
// chain within a month, and the development set's chains (LongMemEval,
// one session per day of chat) are about 50 sessions long: with 20, the
// evidence of many of its questions was out of reach and resume recall
// fell (continuity-eval --mode resume). The cap is a guard against
// pathological link graphs, not a relevance filter (the budget and the
// ranking are): following 100 links costs a resume less than the search
// over their exchanges.
const DefaultMaxDepth = 100

// Chain is the result of following the links from a session.
type Chain struct {
	// Sessions are S first, then the resumed sessions in breadth-first
	// order, newest link first.
	Sessions []string
	// Depth[i] is how many links Sessions[i] is from S.
	Depth []int
	// Cycle is set when a link led back to a session already in the chain.
	Cycle bool
	// Capped is set when links beyond MaxDepth were left out.
	Capped bool
}

// FollowChain walks the session_resume links back from session, at most
// maxDepth links deep (DefaultMaxDepth when maxDepth <= 0).
func FollowChain(ctx context.Context, src Source, session string, maxDepth int) (Chain, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	c := Chain{Sessions: []string{session}, Depth: []int{0}}
	seen := map[string]bool{session: true}
	edges := map[string][]string{}
	for i := 0; i < len(c.Sessions); i++ {
		links, err := src.LinksInto(ctx, c.Sessions[i])
		if err != nil {
			return Chain{}, fmt.Errorf("resume: chain of %s: %w", session, err)
		}
		// Newest link first; ties by the linking event's row, then the
		// session id, so that the order never depends on the source's.
		slices.SortFunc(links, func(a, b index.SessionLink) int {
			if c := b.Timestamp.Compare(a.Timestamp); c != 0 {
				return c
			}
			if c := cmp.Compare(b.Event, a.Event); c != 0 {
				return c
			}
			return cmp.Compare(a.Previous, b.Previous)
		})
		for _, l := range links {
			switch {
			case seen[l.Previous]:
				edges[c.Sessions[i]] = append(edges[c.Sessions[i]], l.Previous)
			case c.Depth[i]+1 > maxDepth:
				c.Capped = true
			default:
				seen[l.Previous] = true
				edges[c.Sessions[i]] = append(edges[c.Sessions[i]], l.Previous)
				c.Sessions = append(c.Sessions, l.Previous)
				c.Depth = append(c.Depth, c.Depth[i]+1)
			}
		}
	}
	c.Cycle = hasCycle(edges, session)
	return c, nil
}

// hasCycle reports whether the links among the chain's sessions (edges
// from a session to the sessions it resumes) contain a cycle: a session
// reached twice through a diamond (S resumes A and B, both resume C) is not
// one; A resumes B resumes A is.
func hasCycle(edges map[string][]string, start string) bool {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var visit func(s string) bool
	visit = func(s string) bool {
		state[s] = open
		for _, p := range edges[s] {
			switch state[p] {
			case open:
				return true
			case unseen:
				if visit(p) {
					return true
				}
			}
		}
		state[s] = done
		return false
	}
	return visit(start)
}
