package watcher

import (
	"context"
)

// LineMatcher is implemented by stores that can tell whether lines read
// from a file are the lines a generation indexed from the same offsets.
// With it, a log restored from an older backup (it starts like an indexed
// log but holds less) is recognised as that log's beginning and its lines
// are not indexed twice; without it, such a file is read as a new log.
type LineMatcher interface {
	// MatchLines compares lines, read from a file at the offsets they
	// carry, with what generation gen (or an earlier generation of the
	// same file name) stored from the same offsets (an event or a reject). same counts the lines stored and equal; differ
	// is true when a line stored there differs (other bytes, or other
	// offsets). Lines nobody stored (blank ones, duplicates skipped, those
	// of a forgotten session) count in neither.
	MatchLines(ctx context.Context, gen int64, lines []Line) (same int, differ bool, err error)
}

// olderVersion checks whether f (name, key k, shorter than generation
// like's committed bytes and starting like them) holds only lines that
// like indexed from the same offsets: an older copy of that log. If so it
// starts a generation for f that begins where f's complete lines end, so
// that only what is appended later is read, and returns its tail. It
// returns nil when the store cannot tell, a line differs, or no line could
// be compared: f is then read as a new log.
func (w *Watcher) olderVersion(ctx context.Context, f source, k fileKey, name string, like, replaces int64) *tail {
	if _, ok := w.store.(Editor); ok {
		return w.restored(ctx, f, k, name, like, replaces)
	}
	m, ok := w.store.(LineMatcher)
	if !ok {
		return nil
	}
	probe := &tail{gen: Generation{Path: name, Dev: k.dev, Ino: k.ino}, f: f, name: name}
	buf := make([]byte, 64<<10)
	same := 0
	var g Generation
	for {
		b, more, err := probe.readBatch(buf, w.cfg.MaxLineBytes, w.cfg.BatchLines, w.cfg.BatchBytes)
		if err != nil {
			w.log.Warn("cannot compare the log with the one it starts like", "file", name, "err", err)
			return nil
		}
		g = b.Gen
		if len(b.Lines) > 0 {
			n, differ, err := m.MatchLines(ctx, like, b.Lines)
			if err != nil {
				w.log.Warn("cannot compare the log with the one it starts like", "file", name, "err", err)
				return nil
			}
			if differ {
				return nil
			}
			same += n
		}
		if !more {
			break
		}
	}
	if same == 0 || g.Offset == 0 {
		return nil
	}
	id, err := w.store.CreateGeneration(ctx, g, replaces)
	if err != nil {
		w.log.Error("cannot record the older copy of a log", "file", name, "err", err)
		return nil
	}
	g.ID = id
	if replaces != 0 {
		delete(w.known, replaces)
	}
	// The probe read every complete line and holds what follows them (an
	// unfinished line): it is the new generation's tail as is.
	probe.gen = g
	w.log.Warn("log is an older copy of one already indexed (restored from a backup?): its lines are not indexed again; reading on from its end",
		"file", name, "like_generation", like, "generation", id, "offset", g.Offset, "lines", g.Line, "lines_compared", same)
	return probe
}

// restored is olderVersion with an Editor: the copy's lines are compared
// with what generation like stored, as for an edit; when every one of
// them is a stored line, the copy continues like's lines (their events
// and rejects move to its generation, so that an edit of it later is
// compared with them) and reading goes on from its end.
func (w *Watcher) restored(ctx context.Context, f source, k fileKey, name string, like, replaces int64) *tail {
	prev, ok := w.known[like]
	for _, t := range w.tails {
		if t.gen.ID == like {
			prev, ok = t.gen, true
		}
	}
	if !ok {
		return nil
	}
	probe, plan, err := w.planEdit(ctx, f, k, name, prev)
	if err != nil {
		w.log.Warn("cannot compare the log with the one it starts like", "file", name, "err", err)
		return nil
	}
	s := plan.Summary()
	if s.Lines == 0 || s.Kept != s.Lines {
		return nil
	}
	g := probe.gen
	id, err := plan.Restore(ctx, g, replaces)
	if err != nil {
		w.log.Error("cannot record the older copy of a log", "file", name, "err", err)
		return nil
	}
	probe.gen.ID = id
	if replaces != 0 {
		delete(w.known, replaces)
	}
	w.log.Warn("log is an older copy of one already indexed (restored from a backup?): its lines are not indexed again; reading on from its end",
		"file", name, "like_generation", like, "generation", id, "offset", g.Offset, "lines", g.Line, "lines_compared", s.Kept)
	return probe
}
