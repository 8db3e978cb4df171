package resume

// The relevance ranking, read as the selection walks it.
//
// The Source ranks some 200 exchanges of the chain (Policy.RelevantLimit)
// without their texts; a pack then looks at a few dozen of them (the best
// WholeMax whole, then until RelevantMax are represented). Identical texts
// are shown once, so the ranking the selection uses is the Source's with
// each text's first row only, cut to the limit: the texts are needed to
// know which rows repeat an earlier one. They are read here, in batches,
// only as far as the selection walks: reading all 200 (half a megabyte of
// text for long exchanges) cost as much as the rest of the pack.
//
// Rows of events that vanished since the ranking (a session forgotten
// meanwhile) are passed over, as are rows that are not candidates (in the
// agent's window) after counting towards the limit, as a search of that
// limit would have counted them.

import (
	"context"
	"fmt"
)

// rankWalk is the Source's ranking being walked.
type rankWalk struct {
	rows   []int64            // as ranked, best first; identical texts not collapsed
	limit  int                // distinct texts that count
	next   int                // rows[:next] are examined
	n      int                // distinct texts among them
	texts  map[[2]string]bool // texts of the examined rows
	ranked []int              // the candidates among the distinct examined rows, in order
	pos    map[int64]int      // row -> its first position in rows
}

func newRankWalk(rows []int64, limit int) *rankWalk {
	w := &rankWalk{rows: rows, limit: limit, texts: map[[2]string]bool{}, pos: make(map[int64]int, len(rows))}
	for i, r := range rows {
		if _, ok := w.pos[r]; !ok {
			w.pos[r] = i
		}
	}
	return w
}

// done reports whether the walk has examined all it may.
func (w *rankWalk) done() bool { return w.next >= len(w.rows) || w.n >= w.limit }

// advance examines the next row, reading its text (and those of the next
// few rows not read yet, in one batch) when the plan has not read it.
func (p *plan) advance(ctx context.Context, src Source) error {
	w := p.walk
	row := w.rows[w.next]
	if _, ok := p.events[row]; !ok {
		// A pack looks at a dozen ranked exchanges or so before its
		// budget is spent: the first batch is smaller.
		size := fetchBatch
		if w.next == 0 {
			size = fetchBatch / 2
		}
		batch := []int64{row}
		for _, r := range w.rows[w.next+1:] {
			if len(batch) == size {
				break
			}
			if _, ok := p.events[r]; !ok {
				batch = append(batch, r)
			}
		}
		evs, err := src.Events(ctx, batch)
		if err != nil {
			return fmt.Errorf("resume: read ranked exchanges: %w", err)
		}
		for _, ev := range evs {
			p.events[ev.ID] = ev
		}
	}
	w.next++
	ev, ok := p.events[row]
	if !ok {
		return nil // vanished since it was ranked
	}
	key := [2]string{ev.User, ev.AI}
	if w.texts[key] {
		return nil
	}
	w.texts[key] = true
	w.n++
	if ci, ok := p.byRow[row]; ok {
		w.ranked = append(w.ranked, ci)
		p.rank[ci] = len(w.ranked)
	}
	return nil
}

// rankedAt returns the k-th (from 0) candidate of the ranking, walking it
// as far as needed; ok is false when the ranking has fewer.
func (p *plan) rankedAt(ctx context.Context, src Source, k int) (ci int, ok bool, err error) {
	w := p.walk
	for len(w.ranked) <= k && !w.done() {
		if err := p.advance(ctx, src); err != nil {
			return 0, false, err
		}
	}
	if k < len(w.ranked) {
		return w.ranked[k], true, nil
	}
	return 0, false, nil
}

// rankNow is the rank a candidate chosen now gets: 0 before the ranking
// was asked for (the tail is chosen first), its rank when the walk has
// reached it, and -1 (not known yet: rankOf, when it matters) otherwise.
func (p *plan) rankNow(ci int) int {
	w := p.walk
	switch {
	case w == nil:
		return 0
	case p.rank[ci] > 0:
		return p.rank[ci]
	}
	if pos, ok := w.pos[p.tl[p.cands[ci].pos].Row]; !ok || pos < w.next || w.done() {
		return 0 // not ranked, or passed over as a repeated text
	}
	return -1
}

// rankOf returns candidate ci's rank, walking the ranking up to its row.
func (p *plan) rankOf(ctx context.Context, src Source, ci int) (int, error) {
	w := p.walk
	if w == nil {
		return 0, nil
	}
	pos, ok := w.pos[p.tl[p.cands[ci].pos].Row]
	if !ok {
		return 0, nil
	}
	for w.next <= pos && !w.done() {
		if err := p.advance(ctx, src); err != nil {
			return 0, err
		}
	}
	return p.rank[ci], nil
}
