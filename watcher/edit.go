package watcher

import (
	"context"
	"fmt"
)

// A log edited in place (sed -i, an editor saving by writing a new file and
// renaming it over the log, a truncate-and-rewrite) no longer holds the
// bytes committed from it. When the store is an Editor, the rewritten file
// is compared line by line with what the old generation stored: when most
// of it is the same log, the index follows the edit (unchanged lines keep
// their events, changed and removed lines lose theirs, new lines are read
// as usual) instead of reading the file again as a new log, which would
// index every unchanged line twice. protocol.md, section 8, says what
// "most" is.

// EditSummary says how a rewritten file compares with what its old
// generation stored.
type EditSummary struct {
	// Same: the file is the old log, edited; its index follows the edit.
	// Otherwise it is read as a new log and the old generation's events
	// stay (a truncated log, another log moved over it).
	Same bool
	// Stored counts the lines the old generation stored (events and
	// rejects) that could be compared; Lines the non-blank lines of the
	// rewritten file.
	Stored, Lines int
	// Kept lines are unchanged (by content, or by id and content); a
	// changed line replaces a stored one (the same id with other content,
	// or a line in the place of another); removed lines are gone, added
	// lines are new. Matched counts the kept lines and the changed ones
	// recognisably the same line (the same id; the same type, session
	// and explicit timestamp; mostly the same text): with Kept, what
	// decides Same.
	Kept, Changed, Removed, Added, Matched int
	// KeptTo is the offset before which every non-blank line of the file
	// is kept, KeptLines the lines before it (blank ones included): the
	// new generation is committed up to there. -1 when every line is.
	KeptTo, KeptLines int64
}

// An EditPlan is the comparison of a rewritten file with its old
// generation, ready to be carried out.
type EditPlan interface {
	Summary() EditSummary
	// Apply carries the edit out in one transaction: the old generation
	// ends and g (its ID ignored; committed up to KeptTo) takes its
	// place, the kept lines' events and rejects move to g at their new
	// offsets, those of changed and removed lines are deleted. The
	// changed and added lines are stored afterwards by Commit as g is
	// read on (a line already stored at its offset is skipped). It
	// returns g's ID and the row ids of the events it deleted.
	Apply(ctx context.Context, g Generation) (id int64, removed []int64, err error)
	// Restore records g (its ID ignored), a restored older copy of the
	// old generation whose every line is kept (Kept == Lines), ending
	// generation replaces if not 0, and moves the kept lines' events and
	// rejects to it; what the old generation holds besides stays. It
	// returns g's ID.
	Restore(ctx context.Context, g Generation, replaces int64) (id int64, err error)
}

// Editor is implemented by stores that can carry a log's index through an
// edit of the log in place. Without it, a rewritten log is read as a new
// log.
type Editor interface {
	// PlanEdit compares the complete lines of a rewritten file (read
	// gives them, batch by batch, in order) with what generation prev
	// stored, name being the file's name now.
	PlanEdit(ctx context.Context, prev Generation, name string, read func(yield func([]Line) error) error) (EditPlan, error)
}

// Edit is what an edit of a log in place did, for Config.OnEdit.
type Edit struct {
	File                 string
	Generation, Replaced int64
	EditSummary
	// Removed are the row ids of the events deleted: the old versions
	// of the changed lines, and the removed lines.
	Removed []int64
}

// reconcile compares f, a rewritten file called name (identity k), with
// prev, the generation it held before. When it is the same log edited,
// it applies the edit and returns the new generation's tail; nil when the
// store cannot tell or it is another log (to be read as a new one). An
// error means the edit could not be recorded: the file is left unread,
// to be tried again.
func (w *Watcher) reconcile(ctx context.Context, f source, k fileKey, name string, prev Generation) (*tail, error) {
	if _, ok := w.store.(Editor); !ok {
		return nil, nil
	}
	probe, plan, err := w.planEdit(ctx, f, k, name, prev)
	if err != nil {
		return nil, err
	}
	s := plan.Summary()
	if !s.Same {
		if s.Stored > 0 {
			w.log.Info("rewritten log is not the same log (too few of its lines were indexed from it): reading it as a new log; the old lines stay indexed",
				"file", name, "old_generation", prev.ID, "lines_found", s.Matched, "lines_indexed_before", s.Stored, "lines_now", s.Lines)
		}
		return nil, nil
	}
	g := probe.gen // committed up to the end of its complete lines
	g.ID = 0
	if s.KeptTo >= 0 {
		if g, err = committedAt(f, g, s.KeptTo, s.KeptLines); err != nil {
			return nil, err
		}
	}
	id, removed, err := plan.Apply(ctx, g)
	if err != nil {
		return nil, fmt.Errorf("record the edit of %s: %w", name, err)
	}
	g.ID = id
	delete(w.known, prev.ID)
	w.log.Warn("log edited in place: its index follows the edit", "file", name, "old_generation", prev.ID, "generation", id,
		"lines_kept", s.Kept, "lines_changed", s.Changed, "lines_removed", s.Removed, "lines_added", s.Added)
	if w.cfg.OnEdit != nil {
		w.cfg.OnEdit(Edit{File: name, Generation: id, Replaced: prev.ID, EditSummary: s, Removed: removed})
	}
	t := &tail{gen: g, f: f, name: name}
	if err := t.load(); err != nil {
		// Changed again since it was compared (edited again): the edit
		// is recorded, g is the log's generation now, and its tail is
		// followed as is: the next read finds g's bytes gone and
		// compares the file with g (drain, rewriting, restart). Not
		// returned, g would be in neither tails nor known, and the file
		// read as a new log, its lines duplicates.
		w.log.Info("log changed again while its edit was recorded: comparing it again", "file", name, "generation", id, "err", err)
	}
	return t, nil
}

// planEdit reads f's complete lines and has the store compare them with
// generation prev's. probe is left past them: its gen is committed up to
// their end.
func (w *Watcher) planEdit(ctx context.Context, f source, k fileKey, name string, prev Generation) (probe *tail, plan EditPlan, err error) {
	ed := w.store.(Editor)
	probe = &tail{gen: Generation{Path: name, Dev: k.dev, Ino: k.ino}, f: f, name: name}
	buf := make([]byte, 64<<10)
	read := func(yield func([]Line) error) error {
		for {
			b, more, err := probe.readBatch(buf, w.cfg.MaxLineBytes, w.cfg.BatchLines, w.cfg.BatchBytes)
			if err != nil {
				return err
			}
			if err := yield(b.Lines); err != nil {
				return err
			}
			probe.gen = b.Gen
			if !more {
				return nil
			}
		}
	}
	plan, err = ed.PlanEdit(ctx, prev, name, read)
	if err != nil {
		return nil, nil, fmt.Errorf("compare %s with what was indexed from it: %w", name, err)
	}
	return probe, plan, nil
}

// committedAt is g committed up to offset (lines complete lines before
// it), with the fingerprints of f's bytes there.
func committedAt(f source, g Generation, offset, lines int64) (Generation, error) {
	g.Offset, g.Line = offset, lines
	n := int(min(offset, FingerprintSize))
	head, err := readExact(f, 0, n)
	if err != nil {
		return g, err
	}
	win, err := readExact(f, offset-int64(n), n)
	if err != nil {
		return g, err
	}
	g.Head, g.Tail = sum(head), sum(win)
	return g, nil
}

// editCand is a generation a rewritten file may be an edit of; from is
// the tail of its file when that file just left the folder.
type editCand struct {
	g    Generation
	from *fileKey
}

// editCandidates returns the generations a file called name (identity k)
// may be an edit of, the likeliest first. An edit is known by its name
// (protocol.md, section 8: a new file that takes the name of a log that
// just left the folder or changed while no daemon ran): replaces (the
// same inode, rewritten while nobody watched) when it has that name; the
// generation of a file of that name that just left the folder (an editor
// renamed the new version over it; the last to leave, when several did);
// a generation of that name whose file was not seen gone (edited while no
// daemon ran); then replaces under another name (renamed and rewritten
// while nobody watched, or a deleted log's inode number reused by the new
// file: the comparison tells). A generation whose file was deleted is
// not: a file restored under its name is judged as a restore
// (olderVersion).
func (w *Watcher) editCandidates(name string, k fileKey, replaces int64) []editCand {
	var out []editCand
	same, sameOK := w.known[replaces]
	sameOK = sameOK && replaces != 0
	if sameOK && same.Path == name {
		out = append(out, editCand{g: same})
	}
	// Several files of that name may have left within Grace (a log
	// deleted, a new one written under its name, then edited): the edit
	// is of the one that left last, the newest generation among those
	// that left in the same pass.
	var last *tail
	var lastKey fileKey
	for tk, t := range w.tails {
		if t.name != name || t.vanishedAt.IsZero() || tk == k {
			continue
		}
		if last == nil || t.vanishedAt.After(last.vanishedAt) ||
			t.vanishedAt.Equal(last.vanishedAt) && t.gen.ID > last.gen.ID {
			last, lastKey = t, tk
		}
	}
	if last != nil {
		out = append(out, editCand{g: last.gen, from: &lastKey})
	}
	var best Generation
	for _, g := range w.known {
		if g.Path == name && !g.Gone && g.ID > best.ID && g.ID != replaces {
			best = g
		}
	}
	if best.ID != 0 {
		out = append(out, editCand{g: best})
	}
	if sameOK && same.Path != name {
		out = append(out, editCand{g: same})
	}
	return out
}
