package resume

import (
	"context"

	"github.com/praxis-os/continuity/index"
)

// Source is what resume reads: the index (links, timeline, texts) and a
// ranking (search). The policy in this package depends on nothing else, so
// tests can give it a Source of their own.
type Source interface {
	// LinksInto returns the session_resume links whose new session is
	// session, i.e. the sessions it resumes. Any order: Chain sorts them.
	LinksInto(ctx context.Context, session string) ([]index.SessionLink, error)
	// Timeline returns the exchanges and context resets of these sessions,
	// without texts, by timestamp then row id.
	Timeline(ctx context.Context, sessions []string) ([]index.TimelineEntry, error)
	// Events returns the events with these row ids, in that order.
	Events(ctx context.Context, rows []int64) ([]index.Event, error)
	// Relevant returns the rows of the exchanges of these sessions that
	// best match query, best first. Exchanges of identical texts may all
	// be listed, and rows of events deleted since: the selection keeps
	// the first row of each text and counts limit of them (so the list
	// may hold a few times limit rows).
	Relevant(ctx context.Context, query string, sessions []string, limit int) ([]int64, error)
	// LatestSession returns the session of the most recent event, "" when
	// the index holds none.
	LatestSession(ctx context.Context) (string, error)
	// SessionExists reports whether the index knows the session.
	SessionExists(ctx context.Context, id string) (bool, error)
}
