// Package resume builds resume context: when an agent starts a new session,
// or its context window was reset, what it needs from its past, as one
// text ready to paste into a prompt and never over a token budget.
//
// The policy, one concept per file:
//
//   - chain.go: which sessions count (S and the sessions it resumes,
//     following session_resume links back; cycles and a depth cap).
//   - select.go: which exchanges are candidates (everything before the
//     latest context reset of S) and which are chosen: the tail just before
//     that boundary, then the exchanges most relevant to the query, then the
//     most recent ones, until the budget is used.
//   - cut.go: how an exchange too long for its room is cut to its relevant
//     part, with a visible marker.
//   - render.go: how the pack reads (chronological, grouped by session).
//   - budget.go: token counting with a real tokenizer.
//
// Build ties them together; Source (source.go) is all it reads, so the
// policy does not depend on how the index or the search are built.
package resume

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultBudget is the token budget when none is given.
const DefaultBudget = 2000

// ErrUnknownSession is returned (wrapped) for a session the index does not
// know: as an *UnknownSessionError, which names it.
var ErrUnknownSession = errors.New("unknown session")

// UnknownSessionError is the error for a session the index does not know,
// Session: the one asked for, or the latest one (Options.Latest), which
// its caller did not name. It is ErrUnknownSession (errors.Is).
type UnknownSessionError struct {
	Session string
}

func (e *UnknownSessionError) Error() string {
	return fmt.Sprintf("%v %q", ErrUnknownSession, e.Session)
}

// Is makes errors.Is(err, ErrUnknownSession) hold.
func (e *UnknownSessionError) Is(target error) bool { return target == ErrUnknownSession }

// ErrNoSessions is returned (wrapped) by a --latest resume of an index that
// holds no session.
var ErrNoSessions = errors.New("no session indexed yet")

// Options say what to resume.
type Options struct {
	// Session is S, the session being resumed into. Ignored when Latest.
	Session string
	// Latest picks S as the session of the most recent event.
	Latest bool
	// Query steers the selection towards what the agent is about to do.
	Query string
	// Budget is the most tokens the text may take; DefaultBudget when 0.
	Budget int
	// IncludeCurrent also offers the exchanges of S after its latest
	// context reset (normally assumed to be still in the agent's window).
	IncludeCurrent bool
	// MaxDepth caps the chain; DefaultMaxDepth when 0.
	MaxDepth int
	// Encoding is the tokenizer (see NewCounter); DefaultEncoding when "".
	Encoding string
	// Policy tunes the selection; DefaultPolicy when nil.
	Policy *Policy
	// Explain adds Pack.Explain: why each exchange is in, cut or left out.
	Explain bool
}

// Pack is a resume context.
type Pack struct {
	SessionID string   `json:"session_id"`
	Chain     []string `json:"chain"`
	Budget    int      `json:"budget"`
	Encoding  string   `json:"encoding"`
	Tokens    int      `json:"tokens"` // of Text
	// Exchanges are exactly those in Text, chronologically, with the text
	// as included.
	Exchanges []Exchange `json:"exchanges"`
	// Omitted counts the candidate exchanges left out (for the budget, or
	// as duplicates of a shown text).
	Omitted int `json:"omitted"`
	// InContext counts the exchanges of S after its latest context reset,
	// left out as still in the agent's window.
	InContext int      `json:"in_context"`
	Files     []string `json:"files"`
	Text      string   `json:"text"`
	// Explain is there when Options.Explain asked for it.
	Explain *Explanation `json:"explain,omitempty"`
	// AgentGone says why the session's own exchanges were offered
	// although IncludeCurrent was not asked: its agent is gone (imported,
	// continued in another session, reset since; goneSource).
	AgentGone string `json:"agent_gone,omitempty"`
	// Instead names the latest session when it had nothing to resume and
	// the pack is of the latest session that has (Options.Latest).
	Instead string `json:"latest_had_nothing,omitempty"`
	// Pending says what was written to the logs before the pack was
	// asked for and is not in it (not indexed yet); absent when it saw
	// everything. Filled by the engine, which waits for such lines first.
	Pending *Pending `json:"pending,omitempty"`
}

// Pending is what of the logs an answer (a resume pack, a search) could
// not see: lines just written and not indexed yet, or exchanges without a
// vector yet.
type Pending struct {
	// Bytes of complete lines written to the logs before the question
	// and not indexed yet.
	Bytes int64 `json:"bytes,omitempty"`
	// Lines: how many lines those bytes hold (-1 when too many bytes to
	// count them).
	Lines int64 `json:"lines,omitempty"`
	// Unembedded: of the newest exchanges, how many have no vector yet
	// (found by their words only).
	Unembedded int64 `json:"unembedded,omitempty"`
	// NotInFullText: exchanges indexed but not yet in the full-text index
	// (an answer made from the index by a reader, which cannot add them):
	// found by their meaning only, if at all.
	NotInFullText int64 `json:"not_in_fulltext,omitempty"`
	// Note says it in words.
	Note string `json:"note"`
}

// latestMaterial is a Source that can name the latest session holding
// exchanges (IndexSource).
type latestMaterial interface {
	LatestSessionWithExchanges(ctx context.Context) (string, error)
}

// goneSource is a Source that knows when a session's agent is gone: then
// no window holds its exchanges, and resume offers them (IndexSource).
type goneSource interface {
	AgentGone(ctx context.Context, session string) (string, error)
}

// Exchange is one exchange as included in a pack.
type Exchange struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	Timestamp time.Time `json:"timestamp"`
	User      string    `json:"user"`
	AI        string    `json:"ai"`
	Truncated bool      `json:"truncated"`
	// SupersededBy is the id of a later shown exchange that asks the same
	// question and answers it differently; Supersedes the ids of the
	// earlier shown ones this one answers anew (supersede.go).
	SupersededBy string   `json:"superseded_by,omitempty"`
	Supersedes   []string `json:"supersedes,omitempty"`
}

// Build returns the resume context described by opts.
func Build(ctx context.Context, src Source, opts Options) (*Pack, error) {
	if opts.Budget == 0 {
		opts.Budget = DefaultBudget
	}
	if opts.Budget < 0 {
		return nil, fmt.Errorf("resume: budget %d: must be positive", opts.Budget)
	}
	pol := DefaultPolicy
	if opts.Policy != nil {
		pol = *opts.Policy
	}
	// A Source that keeps things between packs (IndexSource with a
	// Cache) first catches up with what changed in the index.
	cs, cached := src.(cachingSource)
	cached = cached && cs.caching()
	var counts *countCache
	if cached {
		if err := cs.sync(ctx); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		counts = cs.counts()
	}
	session := opts.Session
	var err error
	if opts.Latest {
		if session, err = src.LatestSession(ctx); err != nil {
			return nil, fmt.Errorf("resume: latest session: %w", err)
		}
		if session == "" {
			return nil, fmt.Errorf("resume: --latest: %w", ErrNoSessions)
		}
	}
	if session == "" {
		return nil, errors.New("resume: no session given")
	}
	ok, err := src.SessionExists(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("resume: %w", &UnknownSessionError{Session: session})
	}
	// The session's own exchanges are in no agent's window when its
	// agent is gone (imported, continued elsewhere, reset since).
	var gone string
	if gs, ok := src.(goneSource); ok && !opts.Latest && !opts.IncludeCurrent {
		if gone, err = gs.AgentGone(ctx, session); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		opts.IncludeCurrent = gone != ""
	}
	lay := func(session string) (*layout, error) {
		if cached {
			return cs.layout(ctx, session, opts.MaxDepth, opts.IncludeCurrent)
		}
		return buildLayout(ctx, src, session, opts.MaxDepth, opts.IncludeCurrent)
	}
	l, err := lay(session)
	if err != nil {
		return nil, err
	}
	// --latest on a session with nothing to resume (a new session linked
	// to a session the index does not hold, such as the one a /clear
	// starts): the latest session that has something, as a fresh start
	// would show.
	var instead string
	if lm, ok := src.(latestMaterial); ok && opts.Latest && len(l.cands) == 0 && l.inCtx == 0 {
		other, err := lm.LatestSessionWithExchanges(ctx)
		if err != nil {
			return nil, fmt.Errorf("resume: latest session: %w", err)
		}
		if other != "" && other != session {
			if l, err = lay(other); err != nil {
				return nil, err
			}
			instead, session = session, other
		}
	}
	p, err := newPlan(l, opts, pol, counts)
	if err != nil {
		return nil, err
	}
	p.gone, p.instead = gone, instead
	if cached {
		p.cut.shapes = cs.shapes()
	}
	if opts.Explain {
		p.x = &explainer{tried: map[int]bool{}}
	}
	if err := p.choose(ctx, src); err != nil {
		return nil, err
	}
	pack := p.pack()
	if opts.Explain {
		if pack.Explain, err = p.explain(ctx, src, pack); err != nil {
			return nil, err
		}
	}
	return pack, nil
}

// buildLayout follows the chain of session and lays out its timeline.
func buildLayout(ctx context.Context, src Source, session string, maxDepth int, includeCurrent bool) (*layout, error) {
	chain, err := FollowChain(ctx, src, session, maxDepth)
	if err != nil {
		return nil, err
	}
	tl, err := src.Timeline(ctx, chain.Sessions)
	if err != nil {
		return nil, fmt.Errorf("resume: timeline of %s: %w", session, err)
	}
	return newLayout(session, chain, tl, includeCurrent), nil
}
