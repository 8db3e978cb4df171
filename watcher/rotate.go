package watcher

import (
	"bytes"
	"context"

	"github.com/praxis-os/continuity/logformat"
)

// Rotated logs (protocol.md, section 8, "Rotation"): x.jsonl.N,
// x.jsonl.N.gz and x.jsonl.gz beside x.jsonl are read as part of the
// history, exactly once whether they were seen live or not. A log renamed
// by the rotation (mv x.jsonl x.jsonl.1) is the same file: reading goes
// on where it was. A compressed one (gzip x.jsonl.1) is read decompressed
// (source.go): its content, offsets and fingerprints are those of the log
// it was made from, so it is recognised as that log and not read again.
// What needs more is a rotated copy that appears while the log it copies
// is still there and being read: gzip writes x.jsonl.1.gz before it
// deletes x.jsonl.1, logrotate's copytruncate copies x.jsonl before it
// truncates it. rotatedCopy recognises those.

// rotatedCopy checks whether f (called name, identity k, head its first
// bytes, size its content's size) is a rotated copy of a log of the same
// base name that is open and in the folder: it holds the bytes committed
// from it. Then its lines are that log's (which reads them from its own
// file, up to its end even if it leaves the folder): f gets a generation
// that starts at the end of its complete lines, so that only lines
// written to it later, if any, are read from it. nil when it is not;
// like is then the generation of such a log that f starts like but holds
// fewer bytes than were read from (a copy still being written: cp writes
// a large file in parts), or 0: like a copy of an indexed log, it must not
// be read until it is whole or its size settles (protocol.md, section 8,
// "File identity").
func (w *Watcher) rotatedCopy(ctx context.Context, f source, k fileKey, name string, head []byte, size int64) (_ *tail, like int64) {
	ln, ok := logformat.ParseLogName(name)
	if !ok || ln.Live() {
		return nil, 0
	}
	for _, tk := range w.sortedTails() {
		t := w.tails[tk]
		if !t.vanishedAt.IsZero() {
			continue
		}
		if tn, _ := logformat.ParseLogName(t.name); tn.Base != ln.Base {
			continue
		}
		if t.gen.Offset <= 0 {
			// Nothing committed of it yet (its first line was still
			// being written when last read): what it holds now is read
			// first, else a copy of it made since (rotated and gzipped
			// at once) would be read as a new log, its lines duplicates.
			w.drain(ctx, tk, t)
		}
		g := t.gen
		if g.Offset <= 0 {
			continue
		}
		if size < g.Offset {
			// The whole of what it holds is the log's start (too
			// short to compare fingerprints: its first bytes).
			starts := bytes.HasPrefix(t.head, head)
			if g.Head.Len <= len(head) {
				starts = sum(head[:g.Head.Len]) == g.Head
			}
			if starts && like == 0 {
				like = g.ID
			}
			continue
		}
		if g.Head.Len > len(head) || sum(head[:g.Head.Len]) != g.Head {
			continue
		}
		if fp, err := fingerprintAt(f, g.Offset-int64(g.Tail.Len), g.Tail.Len); err != nil || fp != g.Tail {
			continue
		}
		// The log reads what it still holds first: lines of the copy it
		// has not read yet may be gone from it (copytruncate empties it
		// right after the copy).
		w.drain(ctx, tk, t)
		emptied := t.gen.ID != g.ID // the copy holds g's lines now (handOver)
		if !emptied {
			g = t.gen
		}
		probe := &tail{gen: Generation{Path: name, Dev: k.dev, Ino: k.ino}, f: f, name: name}
		buf := make([]byte, 64<<10)
		for {
			b, more, err := probe.readBatch(buf, w.cfg.MaxLineBytes, w.cfg.BatchLines, w.cfg.BatchBytes)
			if err != nil {
				w.log.Warn("cannot read a rotated copy of a log", "file", name, "err", err)
				return nil, 0
			}
			probe.gen = b.Gen
			if !more {
				break
			}
		}
		if probe.gen.Offset > g.Offset {
			// The copy holds lines the log could not read (emptied
			// or rewritten since): they are read from the copy, from
			// where the log stopped (the same bytes up to there).
			cg := g
			cg.ID, cg.Path, cg.Dev, cg.Ino, cg.Gone = 0, name, k.dev, k.ino, false
			ct, err := openTail(f, name, cg)
			if err != nil {
				continue
			}
			id, err := w.store.CreateGeneration(ctx, cg, 0)
			if err != nil {
				w.log.Error("cannot record a rotated copy of a log", "file", name, "err", err)
				return nil, 0
			}
			ct.gen.ID = id
			if mv, ok := w.store.(LineMover); ok && emptied {
				w.moveLines(ctx, mv, g, id, name)
			}
			w.log.Info("rotated copy of a log holds lines the log could not read (emptied since): reading them from the copy", "file", name,
				"copy_of", t.name, "of_generation", g.ID, "generation", id, "offset", cg.Offset)
			return ct, 0
		}
		id, err := w.store.CreateGeneration(ctx, probe.gen, 0)
		if err != nil {
			w.log.Error("cannot record a rotated copy of a log", "file", name, "err", err)
			return nil, 0
		}
		probe.gen.ID = id
		if mv, ok := w.store.(LineMover); ok && emptied {
			w.moveLines(ctx, mv, g, id, name)
		}
		w.log.Info("rotated copy of a log being read: its lines are that log's, not read again", "file", name,
			"copy_of", t.name, "of_generation", g.ID, "generation", id, "offset", probe.gen.Offset)
		return probe, 0
	}
	return nil, like
}
