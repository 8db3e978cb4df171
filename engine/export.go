package engine

import (
	"cmp"
	"context"
	"slices"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/resume"
)

// Event is an event as the index stores it.
type Event = index.Event

// Reject is a log line that was not indexed, with its place and reason.
type Reject = index.Reject

// Export is a session's events (and its chain's) for `continuity export`.
type Export struct {
	// Chain is the sessions exported, newest first: the session, then
	// those it resumes when asked.
	Chain Chain
	// Events are their events by time (then id).
	Events []Event
}

// Chain is a session and the sessions it resumes (its session_resume
// links followed back), as resume follows them.
type Chain struct {
	// Sessions are the session first, then the resumed sessions in
	// breadth-first order, newest link first.
	Sessions []string
	// Depth[i] is how many links Sessions[i] is from the first.
	Depth []int
	// Cycle: a link led back to a session already in the chain; Capped:
	// links beyond the depth asked for were left out.
	Cycle, Capped bool
}

// Export reads every event of a session, and with chain of the sessions
// it resumes (up to maxDepth links back, as resume follows them), from
// the index.
func (c *Client) Export(ctx context.Context, session string, chain bool, maxDepth int) (Export, error) {
	db, err := openReader(c.ws)
	if err != nil {
		return Export{}, err
	}
	defer db.Close()
	ok, err := db.SessionExists(ctx, session)
	if err != nil {
		return Export{}, err
	}
	if !ok {
		return Export{}, unknownSession(ctx, db, session)
	}
	x := Export{Chain: Chain{Sessions: []string{session}}}
	if chain {
		c, err := resume.FollowChain(ctx, &resume.IndexSource{DB: db}, session, maxDepth)
		if err != nil {
			return Export{}, err
		}
		x.Chain = Chain{Sessions: c.Sessions, Depth: c.Depth, Cycle: c.Cycle, Capped: c.Capped}
	}
	for _, s := range x.Chain.Sessions {
		evs, err := db.EventsBySession(ctx, s)
		if err != nil {
			return Export{}, err
		}
		x.Events = append(x.Events, evs...)
	}
	slices.SortStableFunc(x.Events, func(a, b Event) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return x, nil
}

// Rejects lists the log lines that were not indexed, at most limit, oldest
// first, from the index.
func (c *Client) Rejects(ctx context.Context, limit int) ([]Reject, error) {
	db, err := openReader(c.ws)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Rejects(ctx, limit)
}
