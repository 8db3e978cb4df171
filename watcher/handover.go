package watcher

import (
	"context"

	"github.com/praxis-os/continuity/logformat"
)

// A rotated copy recognised while the log it copies is still there (gzip
// writes x.jsonl.1.gz before it deletes x.jsonl.1; gzip --keep; cp before
// copytruncate, see rotatedCopy) gets a generation of its own that starts
// where the log's committed lines end: the lines before are the log's. When
// the log then leaves the folder, those lines are only in the copy, and
// what the index says of them (a reject's file:line) must name the copy,
// as it does when the copy is seen only after the log left (adopt: the copy
// continues the log's generation). Which of the two happens depends on when
// a scan falls between gzip's write and its unlink; handOver makes both
// end the same.

// LineMover is implemented by stores that can hand the lines a generation
// stored to another generation whose file holds the same bytes at the same
// offsets (a rotated copy of the log).
type LineMover interface {
	// MoveLines moves the events and rejects generation from stored
	// (lines before offset upto) to generation to, whose file is called
	// file, and ends from (if it has not ended yet), in one transaction.
	// It moves nothing and returns false when to has ended or stored a
	// line before upto itself (it is not a copy that starts where from's
	// lines end).
	MoveLines(ctx context.Context, from, to int64, upto int64, file string) (bool, error)
}

// handOver is called when generation g's file has left the folder for
// good, or no longer holds g's lines (emptied by copytruncate): when an
// open file in the folder of the same base name holds g's committed bytes
// (the same head, the same bytes before g's offset) and committed from at
// least there on, g's lines move to that file's generation and g ends.
// It reports whether they did.
func (w *Watcher) handOver(ctx context.Context, g Generation) bool {
	mv, ok := w.store.(LineMover)
	if !ok || g.Offset <= 0 {
		return false
	}
	gn, ok := logformat.ParseLogName(g.Path)
	if !ok {
		return false
	}
	for _, k := range w.sortedTails() {
		c := w.tails[k]
		if c.gen.ID == g.ID || !c.vanishedAt.IsZero() || c.gen.Offset < g.Offset || c.f == nil {
			continue
		}
		if cn, _ := logformat.ParseLogName(c.name); cn.Base != gn.Base {
			continue
		}
		// Its first bytes as read (a sealed compressed log that is not
		// a copy is not decompressed again to tell).
		if len(c.head) < g.Head.Len || sum(c.head[:g.Head.Len]) != g.Head {
			continue
		}
		if gz, ok := c.f.(*gzFile); ok && c.sealed {
			defer gz.release() // read to its end: its content is not kept
		}
		if fp, err := fingerprintAt(c.f, g.Offset-int64(g.Tail.Len), g.Tail.Len); err != nil || fp != g.Tail {
			continue
		}
		if w.moveLines(ctx, mv, g, c.gen.ID, c.name) {
			return true
		}
	}
	return false
}

// moveLines hands generation g's lines to generation to, of the file
// called name that holds them.
func (w *Watcher) moveLines(ctx context.Context, mv LineMover, g Generation, to int64, name string) bool {
	moved, err := mv.MoveLines(ctx, g.ID, to, g.Offset, name)
	if err != nil {
		w.log.Error("cannot hand the lines of a log to its rotated copy", "file", g.Path,
			"generation", g.ID, "copy", name, "copy_generation", to, "err", err)
		return false
	}
	if moved {
		w.log.Info("log left the folder or was emptied; its lines are its rotated copy's now", "file", g.Path, "generation", g.ID,
			"copy", name, "copy_generation", to, "offset", g.Offset)
	}
	return moved
}
