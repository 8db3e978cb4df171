package search

import (
	"context"

	"github.com/praxis-os/continuity/index"
)

// Neighbour context (issue 32 item 1): in a coding agent's session the
// question is often asked in one exchange and answered in the next ("go
// with it", "fix it"), or an answer refers back to what was just said.
// So an exchange is also found by its neighbours in its session, the
// exchange just before and just after it (index.Adjacent), as a field of
// its own with a low weight:
//
//   - candidates: the neighbours of the best BM25 hits and of the best
//     vector hits (neighbourDepth of each) join the fusion as two more
//     lists, weighted Options.NeighbourLexical and NeighbourVector times
//     their side's weight;
//   - scores: an exchange's lexical strength is at least NeighbourLexical
//     times its neighbours' (the larger), its semantic strength at least
//     NeighbourVector times theirs (hybrid mode only: vector-only search
//     stays the exchange's own similarity).
//
// The neighbour text is not indexed a second time: its field is read at
// query time from the same index (the neighbours' BM25 ranks and their
// strengths, computed from their texts as stored now), so an edit, a
// forget, a supersession or a redaction of a neighbour changes it at once,
// and nothing grows on disk. A neighbour counts when it is among the
// candidates scored (poolSize): one that matches too weakly to be there
// adds nothing. It is never shown as the exchange's text (a result's
// neighbours are shown on request only: Query.Context).

// Defaults of the neighbour weights (Options.NeighbourLexical,
// NeighbourVector). Chosen on the tune halves (see docs/search.md).
const (
	DefaultNeighbourLexical = 0
	DefaultNeighbourVector  = 0
)

// neighbourDepth is how many of each list's best hits bring their
// neighbours into the fusion.
const neighbourDepth = 50

// neighbourWeights returns the weights of the neighbour field in mode:
// lexical and semantic, 0 when off.
func (s *Searcher) neighbourWeights(m Mode) (lw, vw float64) {
	lw, vw = max(s.opts.NeighbourLexical, 0), max(s.opts.NeighbourVector, 0)
	if m != ModeHybrid {
		vw = 0
	}
	return lw, vw
}

// neighbourLists returns the neighbours of the best hits of both sides as
// fusion lists (ordered by their hit's rank), and the adjacency read. The
// neighbours are proposed only when f bounds no time (a neighbour may lie
// outside the bounds); they still count in the scores.
func (s *Searcher) neighbourLists(ctx context.Context, q Query, f index.Filter, lex lexAnswer, vec vecAnswer) (lists []ranked, adj map[int64]index.Adjacency) {
	lw, vw := s.neighbourWeights(q.Mode)
	if lw == 0 && vw == 0 {
		return nil, nil
	}
	var rows []int64
	for _, h := range lex.hits[:min(len(lex.hits), neighbourDepth)] {
		rows = append(rows, h.Row)
	}
	for _, h := range vec.hits[:min(len(vec.hits), neighbourDepth)] {
		rows = append(rows, h.Row)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	adj, err := s.db.Adjacent(ctx, rows)
	if err != nil {
		// Context improves search but is not required.
		s.log.Warn("neighbour context", "err", err)
		return nil, nil
	}
	if !f.Since.IsZero() || !f.Until.IsZero() {
		return nil, adj
	}
	list := func(hitRows []int64, scores []float64, weight float64) ranked {
		r := ranked{weight: weight, context: true}
		seen := map[int64]bool{}
		for i, row := range hitRows[:min(len(hitRows), neighbourDepth)] {
			a := adj[row]
			for _, n := range [2]int64{a.Prev, a.Next} {
				if n != 0 && !seen[n] {
					seen[n] = true
					r.rows = append(r.rows, n)
					r.scores = append(r.scores, scores[i])
				}
			}
		}
		return r
	}
	if lw > 0 && len(lex.hits) > 0 {
		l := lexicalList(lex.hits, 0)
		lists = append(lists, list(l.rows, l.scores, lw*s.opts.LexicalWeight))
	}
	if vw > 0 && len(vec.hits) > 0 {
		v := vectorList(vec.hits, 0)
		lists = append(lists, list(v.rows, v.scores, vw*s.vw))
	}
	return lists, adj
}

// neighbourStrengths sets the neighbour field of each hit (c.nbLexical,
// c.nbSemantic): the larger strengths of its neighbours among hits, times
// the weights. Hits whose adjacency r does not hold yet are read.
func (s *Searcher) neighbourStrengths(ctx context.Context, r *ranking, hits []*hit) {
	if r.nbLex == 0 && r.nbVec == 0 || len(hits) == 0 {
		return
	}
	byRow := make(map[int64]*candidate, len(hits))
	var need []int64
	for _, h := range hits {
		byRow[h.c.row] = h.c
		if _, ok := r.adj[h.c.row]; !ok {
			need = append(need, h.c.row)
		}
	}
	if len(need) > 0 {
		more, err := s.db.Adjacent(ctx, need)
		if err != nil {
			s.log.Warn("neighbour context", "err", err)
			return
		}
		if r.adj == nil {
			r.adj = map[int64]index.Adjacency{}
		}
		for k, v := range more {
			r.adj[k] = v
		}
	}
	if r.nbCombine >= NeighbourField && r.nbLex > 0 {
		s.neighbourField(r, hits, byRow)
	}
	for _, h := range hits {
		a := r.adj[h.c.row]
		var l, v float64
		for _, n := range [2]int64{a.Prev, a.Next} {
			if o := byRow[n]; n != 0 && o != nil {
				if r.nbCombine == NeighbourMax {
					l, v = max(l, o.lexical), max(v, o.semantic)
				} else {
					l, v = l+o.lexical, v+o.semantic
				}
			}
		}
		switch r.nbCombine {
		case NeighbourMax:
			h.c.nbLexical, h.c.nbSemantic = r.nbLex*l, r.nbVec*v
		case NeighbourSum:
			h.c.nbLexical = min(1, h.c.lexical+r.nbLex*l)
			h.c.nbSemantic = min(1, h.c.semantic+r.nbVec*v)
		default: // the fields (neighbourfield.go)
			h.c.nbSemantic = min(1, h.c.semantic+r.nbVec*v)
		}
	}
	if r.nbCombine >= NeighbourField && r.nbLex > 0 {
		for _, h := range hits {
			h.c.nbLexical = h.c.fieldLexical
		}
	}
}
