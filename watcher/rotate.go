package watcher

import (
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
// written to it later, if any, are read from it. nil when it is not.
func (w *Watcher) rotatedCopy(ctx context.Context, f source, k fileKey, name string, head []byte, size int64) *tail {
	ln, ok := logformat.ParseLogName(name)
	if !ok || ln.Live() {
		return nil
	}
	for _, ok := range w.sortedTails() {
		t := w.tails[ok]
		g := t.gen
		if !t.vanishedAt.IsZero() || g.Offset <= 0 || size < g.Offset || g.Head.Len > len(head) || sum(head[:g.Head.Len]) != g.Head {
			continue
		}
		if tn, _ := logformat.ParseLogName(t.name); tn.Base != ln.Base {
			continue
		}
		if fp, err := fingerprintAt(f, g.Offset-int64(g.Tail.Len), g.Tail.Len); err != nil || fp != g.Tail {
			continue
		}
		probe := &tail{gen: Generation{Path: name, Dev: k.dev, Ino: k.ino}, f: f, name: name}
		buf := make([]byte, 64<<10)
		for {
			b, more, err := probe.readBatch(buf, w.cfg.MaxLineBytes, w.cfg.BatchLines, w.cfg.BatchBytes)
			if err != nil {
				w.log.Warn("cannot read a rotated copy of a log", "file", name, "err", err)
				return nil
			}
			probe.gen = b.Gen
			if !more {
				break
			}
		}
		id, err := w.store.CreateGeneration(ctx, probe.gen, 0)
		if err != nil {
			w.log.Error("cannot record a rotated copy of a log", "file", name, "err", err)
			return nil
		}
		probe.gen.ID = id
		w.log.Info("rotated copy of a log being read: its lines are that log's, not read again", "file", name,
			"copy_of", t.name, "of_generation", g.ID, "generation", id, "offset", probe.gen.Offset)
		return probe
	}
	return nil
}
