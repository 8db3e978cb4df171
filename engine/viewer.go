package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/praxis-os/continuity/index"
)

// What the viewer (continuity ui) asks besides the other commands' calls:
// a session a page at a time, one exchange whole, and how the sessions a
// list shows begin. Like export, they are
// read from the index directly (read-only), daemon or not: they need
// nothing the daemon keeps in memory.

// FileCount is a file a session's events name, and how many name it.
type FileCount = index.FileCount

// SessionPage is one page of a session's timeline.
type SessionPage struct {
	Session SessionRow `json:"session"`
	// Events are the page's events, by time then order of indexing.
	Events []Event `json:"events"`
	Offset int     `json:"offset"`
	// Files are the files its events name, most named first (at most
	// MaxSessionFiles); FilesTotal counts them all.
	Files      []FileCount `json:"files"`
	FilesTotal int         `json:"files_total"`
}

// MaxSessionFiles is how many files a SessionPage lists.
const MaxSessionFiles = 200

// MaxPage is the most events a SessionPage holds.
const MaxPage = 500

// SessionPage reads the events of session from offset on, at most limit
// (1 to MaxPage), with the session's row and the files it touched.
func (c *Client) SessionPage(ctx context.Context, session string, offset, limit int) (SessionPage, error) {
	if limit < 1 || limit > MaxPage || offset < 0 {
		return SessionPage{}, badRequest(fmt.Sprintf("page of %d events from %d: want 1 to %d events from 0 on", limit, offset, MaxPage))
	}
	db, err := openReader(c.ws)
	if err != nil {
		return SessionPage{}, err
	}
	defer db.Close()
	rows, err := sessionRows(ctx, db)
	if err != nil {
		return SessionPage{}, err
	}
	p := SessionPage{Offset: offset}
	found := false
	for _, r := range rows {
		if r.ID == session {
			p.Session, found = r, true
		}
	}
	if !found {
		return SessionPage{}, unknownSession(ctx, db, session)
	}
	if p.Events, err = db.SessionEventsPage(ctx, session, offset, limit); err != nil {
		return SessionPage{}, err
	}
	if p.Events == nil {
		p.Events = []Event{}
	}
	p.Files, p.FilesTotal, err = db.SessionFiles(ctx, session, MaxSessionFiles)
	return p, err
}

// ErrNoEvent is returned (wrapped, a bad request) for an event id the
// index does not hold.
var ErrNoEvent = errors.New("no event with this id")

// Event reads one event whole by its id.
func (c *Client) Event(ctx context.Context, id string) (Event, error) {
	db, err := openReader(c.ws)
	if err != nil {
		return Event{}, err
	}
	defer db.Close()
	ev, ok, err := db.EventByID(ctx, id)
	if err != nil {
		return Event{}, err
	}
	if !ok {
		return Event{}, &Error{Code: CodeNoEvent, Field: "id", Value: fmt.Sprintf("%q", id)}
	}
	return ev, nil
}

// MaxOpeners is how many sessions one SessionOpeners call may name.
const MaxOpeners = 500

// SessionOpeners reads, by session, the start of its first exchange (at
// most maxRunes characters: the user's text, else the assistant's), for
// the sessions a list shows; sessions without an exchange are absent.
func (c *Client) SessionOpeners(ctx context.Context, sessions []string, maxRunes int) (map[string]string, error) {
	if len(sessions) > MaxOpeners || maxRunes < 1 {
		return nil, badRequest(fmt.Sprintf("openers of %d sessions, %d characters each: want at most %d sessions and at least 1 character", len(sessions), maxRunes, MaxOpeners))
	}
	db, err := openReader(c.ws)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.SessionOpeners(ctx, sessions, maxRunes)
}
