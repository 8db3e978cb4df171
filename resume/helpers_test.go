package resume

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/watcher"
)

var ctx = context.Background()

var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// memSource is an in-memory Source: events in row order, links derived
// from session_resume events, and a ranking by shared query terms.
type memSource struct {
	events []index.Event
	links  []index.SessionLink
	// rankErr, when set, is returned by Relevant.
	rankErr error
}

// add appends an event at row len(events)+1; its time is t0 plus minutes.
func (m *memSource) add(ev index.Event) *memSource {
	ev.ID = int64(len(m.events) + 1)
	if ev.EventID == "" {
		ev.EventID = fmt.Sprintf("ev%d", ev.ID)
	}
	if ev.Type == logformat.TypeSessionResume {
		if ev.SessionID == "" {
			ev.SessionID = ev.NewSession
		}
		if !slices.ContainsFunc(m.links, func(l index.SessionLink) bool {
			return l.Previous == ev.PreviousSession && l.New == ev.NewSession
		}) {
			m.links = append(m.links, index.SessionLink{Previous: ev.PreviousSession, New: ev.NewSession, Event: ev.ID, Timestamp: ev.Timestamp})
		}
	}
	m.events = append(m.events, ev)
	return m
}

func (m *memSource) ex(session string, minute int, user, ai string, files ...string) *memSource {
	return m.add(index.Event{Type: logformat.TypeExchange, SessionID: session,
		Timestamp: t0.Add(time.Duration(minute) * time.Minute), User: user, AI: ai, Files: files})
}

func (m *memSource) reset(session string, minute int) *memSource {
	return m.add(index.Event{Type: logformat.TypeContextReset, SessionID: session,
		Timestamp: t0.Add(time.Duration(minute) * time.Minute), Reason: "full"})
}

func (m *memSource) link(prev, next string, minute int) *memSource {
	return m.add(index.Event{Type: logformat.TypeSessionResume, PreviousSession: prev, NewSession: next,
		Timestamp: t0.Add(time.Duration(minute) * time.Minute)})
}

func (m *memSource) LinksInto(_ context.Context, session string) ([]index.SessionLink, error) {
	var out []index.SessionLink
	for _, l := range m.links {
		if l.New == session {
			out = append(out, l)
		}
	}
	return out, nil
}

func (m *memSource) Timeline(_ context.Context, sessions []string) ([]index.TimelineEntry, error) {
	var out []index.TimelineEntry
	for _, e := range m.events {
		if slices.Contains(sessions, e.SessionID) && (e.Type == logformat.TypeExchange || e.Type == logformat.TypeContextReset) {
			out = append(out, index.TimelineEntry{Row: e.ID, SessionID: e.SessionID, Type: e.Type,
				Timestamp: e.Timestamp})
		}
	}
	slices.SortStableFunc(out, func(a, b index.TimelineEntry) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.Row, b.Row)
	})
	return out, nil
}

func (m *memSource) Events(_ context.Context, rows []int64) ([]index.Event, error) {
	var out []index.Event
	for _, r := range rows {
		if r >= 1 && int(r) <= len(m.events) {
			out = append(out, m.events[r-1])
		}
	}
	return out, nil
}

func (m *memSource) Relevant(_ context.Context, query string, sessions []string, limit int) ([]int64, error) {
	if m.rankErr != nil {
		return nil, m.rankErr
	}
	q := analyse(query)
	type scored struct {
		row   int64
		score int
	}
	var ss []scored
	for _, e := range m.events {
		if e.Type != logformat.TypeExchange || !slices.Contains(sessions, e.SessionID) {
			continue
		}
		n := 0
		for _, t := range analyze.Terms(e.User + " " + e.AI) {
			if q[t] {
				n++
			}
		}
		if n > 0 {
			ss = append(ss, scored{e.ID, n})
		}
	}
	slices.SortStableFunc(ss, func(a, b scored) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return cmp.Compare(b.row, a.row)
	})
	var out []int64
	for _, s := range ss[:min(limit, len(ss))] {
		out = append(out, s.row)
	}
	return out, nil
}

func (m *memSource) LatestSession(context.Context) (string, error) {
	best := -1
	for i, e := range m.events {
		if e.SessionID == "" {
			continue
		}
		if best < 0 || !e.Timestamp.Before(m.events[best].Timestamp) {
			best = i
		}
	}
	if best < 0 {
		return "", nil
	}
	return m.events[best].SessionID, nil
}

func (m *memSource) SessionExists(_ context.Context, id string) (bool, error) {
	for _, e := range m.events {
		if e.SessionID == id || e.PreviousSession == id {
			return true, nil
		}
	}
	return false, nil
}

func build(t *testing.T, src Source, opts Options) *Pack {
	t.Helper()
	p, err := Build(ctx, src, opts)
	if err != nil {
		t.Fatalf("Build(%+v): %v", opts, err)
	}
	checkPack(t, p)
	return p
}

// counter returns the default counter or fails the test.
func counter(t testing.TB) *Counter {
	t.Helper()
	c, err := NewCounter("")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkPack checks the invariants of every pack: within budget, tokens
// counted right, every listed exchange's texts present in the text.
func checkPack(t *testing.T, p *Pack) {
	t.Helper()
	c, err := NewCounter(p.Encoding)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count(p.Text); n != p.Tokens || n > p.Budget {
		t.Fatalf("pack has %d tokens (says %d), budget %d:\n%s", n, p.Tokens, p.Budget, p.Text)
	}
	for _, e := range p.Exchanges {
		block := renderExchange("", e.User, e.AI)
		block = block[strings.IndexByte(block, '\n')+1:]
		if !strings.Contains(p.Text, block) || !strings.Contains(p.Text, e.Timestamp.Format("15:04")) {
			t.Fatalf("exchange %s not in the text as listed:\n%q\ntext:\n%s", e.ID, block, p.Text)
		}
	}
}

// indexDir indexes the logs of the workspace at root through the real
// stack (index.Open, watcher CatchUp) and returns the index, open for
// writing and reading.
func indexDir(root string) (*index.DB, error) {
	db, err := index.Open(filepath.Join(root, ".praxis-os", ".cache", "continuity"), index.Options{})
	if err != nil {
		return nil, err
	}
	w, err := watcher.New(watcher.Config{Dir: filepath.Join(root, ".praxis-os", ".conversations"), NoNotify: true}, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := w.CatchUp(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("index %s: %w", root, err)
	}
	return db, nil
}
