package search

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/praxis-os/continuity/index"
)

// The order of the results: what a caller sees is what ranks.
//
// The retrievers' lists (BM25, vectors, the same within a time span the
// query names, the exchanges that may hold its identifiers whole), fused
// by reciprocal rank fusion, propose the candidates; the first scorePool
// of them are read and scored (Result.Score, score.go), and the results
// are ordered by that score as shown: rounded to ScoreStep, higher first,
// and at equal score the newer exchange first (timestamp, then order of
// indexing). So the order never contradicts the scores shown, and of two
// exchanges equally relevant to the question, the later one, which says
// what holds now, comes first. Besides the words and the meaning, two
// things enter the score:
//
//   - a time the query names ("last week"): exchanges outside its span
//     score Options.TimeOutside times their relevance (timeFit);
//   - supersession (supersede.go): an exchange that asks the same question
//     as an earlier one of the workspace and answers differently scores at
//     least what the earlier one scores, so it ranks above it; both are
//     marked. Looked for among the best supersessionSpan hits.
//
// A query that names nothing but a time ("what did we do yesterday")
// lists that span's exchanges, newest first, each scoring 1 (TimeOnly).
//
// When the default floor's gate closes (no result reaches it: Floor), the
// best WeakMatches results are still returned, marked Weak, so that an
// agent sees how weak the closest matches are rather than nothing: those
// scoring above 0 or holding a word of the query, then, if fewer, the
// exchanges closest in meaning whose similarity is under the embedder's
// "unrelated" level (scoring 0) but at its "related" one (calibration).
// Nothing is returned only when nothing relates at all, by its words or
// its meaning.

// ScoreStep is the precision of the scores: they are rounded to it, shown
// with it, and scores equal at it are equal for the order (newer first).
// Two exchanges whose relevance differs by less than a step are as
// relevant as each other, as far as the estimate can tell.
const ScoreStep = 0.01

// roundScore rounds x to ScoreStep.
func roundScore(x float64) float64 { return math.Round(x*100) / 100 }

// scorePool is how many of the fused candidates are read and scored:
// scorePool, or twice the limit when that is more. So the results of
// every limit up to 50 are the head of each other's.
const scorePool = 100

// poolSize is how many fused candidates a query of this limit scores.
func poolSize(limit int) int { return max(scorePool, 2*limit) }

// supersessionSpan is how many of the best scored hits are compared with
// each other for supersession, whatever the limit (comparing prompts costs
// their analysis): an exchange and the one that supersedes it ask the same
// question, so they score alike and stand near each other.
const supersessionSpan = 32

// WeakMatches is how many results a query whose gate closed still returns,
// marked weak (see Result.Weak).
const WeakMatches = 5

// DefaultTimeOutside is the share of its relevance an exchange keeps when
// the query names a span of time it lies outside of (Options.TimeOutside):
// found, but below the span's equally relevant exchanges. Chosen on the
// tune halves (the dev set's temporal questions): see continuity-eval.
const DefaultTimeOutside = 0.8

// hit is a scored candidate, with its texts.
type hit struct {
	c *candidate
	e index.Event
	// supersededBy is the newest hit that supersedes this one;
	// supersedes lists those it supersedes.
	supersededBy *hit
	supersedes   []*hit
}

// scoreHits reads the texts of the first poolSize candidates of r and
// scores them (see above).
func (s *Searcher) scoreHits(ctx context.Context, fetch func(context.Context, []int64) (map[int64]index.Event, error), r *ranking) ([]*hit, error) {
	return s.scoreCandidates(ctx, fetch, r, r.cands[:min(len(r.cands), poolSize(r.limit))])
}

// scoreCandidates reads the texts of pool, candidates of r, and scores
// them; those deleted since are left out.
func (s *Searcher) scoreCandidates(ctx context.Context, fetch func(context.Context, []int64) (map[int64]index.Event, error), r *ranking, pool []*candidate) ([]*hit, error) {
	if len(pool) == 0 {
		return nil, nil
	}
	rows := make([]int64, len(pool))
	for i, c := range pool {
		rows[i] = c.row
	}
	evs, err := fetch(ctx, rows)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	hits := make([]*hit, 0, len(pool))
	for _, c := range pool {
		e, ok := evs[c.row]
		if !ok {
			continue // deleted since
		}
		c.ts = e.Timestamp.UnixNano()
		if !r.timeOnly && (c.hasLex || c.inIdent || c.inContext) {
			c.lexical = lexicalScore(r.lts, r.ids, e.User, searchableAI(e), r.ln)
		}
		hits = append(hits, &hit{c: c, e: e})
	}
	if !r.timeOnly {
		s.neighbourStrengths(ctx, r, hits)
	}
	vfloor := r.vfloor
	if vfloor > 0 && r.vfloorBelow > 0 {
		for _, h := range hits {
			if max(h.c.lexical, h.c.nbLexical) >= r.vfloorBelow {
				vfloor = 0
				break
			}
		}
	}
	floored := vectorFloorHits(hits, r.vfloorTop)
	for _, h := range hits {
		c := h.c
		switch {
		case r.timeOnly:
			c.rel, c.gateRel = 1, 1
		default:
			sem := max(c.semantic, c.nbSemantic)
			c.rel = relevance(max(c.lexical, c.nbLexical), r.vshare*math.Pow(sem, r.vpow))
			c.gateRel = c.rel * r.timeFit(c.ts)
			if vfloor > 0 && (floored == nil || floored[h]) {
				if r.vfloorRel {
					sem = max(sem, relativeStrength(hits, c.cos, r.cal))
				}
				c.rel = max(c.rel, vfloor*sem)
			}
			c.rel *= r.timeFit(c.ts)
		}
	}
	return hits, nil
}

// timeFit is the factor of an exchange's relevance for the span the query
// names (1 within it, Options.TimeOutside out of it; 1 when it names
// none). ts is in unix nanoseconds.
func (r *ranking) timeFit(ts int64) float64 {
	if r.span == nil || (ts >= r.span.From.UnixNano() && ts < r.span.To.UnixNano()) {
		return 1
	}
	return r.timeOutside
}

// newer reports whether a comes after b: a later timestamp, or the same
// and indexed later.
func newer(a, b index.Event) bool {
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.After(b.Timestamp)
	}
	return a.Row > b.Row
}

// results scores the pool of r's candidates and returns the results as
// shown: supersessions found, ordered, identical texts once (the first),
// held to the floor and the gate (see Floor), at most r.limit; the weak
// matches when the gate closes.
func (s *Searcher) results(ctx context.Context, fetch func(context.Context, []int64) (map[int64]index.Event, error), r *ranking) ([]Result, error) {
	hits, err := s.scoreHits(ctx, fetch, r)
	if err != nil {
		return nil, err
	}
	open := r.gate <= r.each || r.timeOnly
	for _, h := range hits {
		// The vector floor does not open the gate: a cosine alone does
		// not tell a question about the history from one about nothing
		// in it (score.go).
		open = open || roundScore(h.c.gateRel) >= r.gate
	}
	orderHits(hits)
	markSupersessions(hits[:min(len(hits), supersessionSpan)])
	orderHits(hits)
	hits = collapseIdentical(hits)
	if !open && r.weakInterleave {
		hits = interleaveByMeaning(hits)
	}
	out := make([]Result, 0, min(r.limit, len(hits)))
	for _, h := range hits {
		score := roundScore(h.c.rel)
		switch {
		case len(out) >= r.limit, !open && len(out) >= WeakMatches:
			return out, nil
		case open && score < r.each, !open && score <= 0 && !h.c.hasLex && !h.c.inIdent:
			continue
		}
		out = append(out, h.result(!open))
	}
	if open || len(out) >= min(r.limit, WeakMatches) || len(r.near) == 0 {
		return out, nil
	}
	// The gate closed with fewer than WeakMatches matches: the exchanges
	// closest in meaning, under the floor, follow (scoring 0: a cosine
	// under the embedder's unrelated level is no evidence, but they are
	// the closest there are; nothing is said to be absent that relates).
	near, err := s.scoreCandidates(ctx, fetch, r, r.near)
	if err != nil {
		return nil, err
	}
	seen := make(map[[2]string]bool, len(out))
	for _, o := range out {
		seen[[2]string{o.User, o.AI}] = true
	}
	for _, h := range near {
		key := [2]string{h.e.User, h.e.AI}
		if len(out) >= min(r.limit, WeakMatches) {
			break
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, h.result(true))
		}
	}
	return out, nil
}

// orderHits sorts hits as the results are shown: by score (rounded),
// higher first; at equal score the newer first (at 0, the fusion's order).
func orderHits(hits []*hit) {
	sort.SliceStable(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		sa, sb := roundScore(a.c.rel), roundScore(b.c.rel)
		switch {
		case sa != sb:
			return sa > sb
		case sa == 0 && a.c.score != b.c.score:
			// No evidence either way (a cosine under the embedder's
			// "unrelated" level): the retrievers' order says more
			// than the time.
			return a.c.score > b.c.score
		}
		return newer(a.e, b.e)
	})
}

// collapseIdentical keeps the first of the hits with identical texts (a
// log copied, an exchange logged twice).
func collapseIdentical(hits []*hit) []*hit {
	seen := make(map[[2]string]bool, len(hits))
	out := hits[:0]
	for _, h := range hits {
		key := [2]string{h.e.User, h.e.AI}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, h)
	}
	return out
}

// searchableAI is what the lexical strength reads of an exchange beside
// the user's text: the answer, and the exchange's files (as the full-text
// index holds them: index.SearchableAI).
func searchableAI(e index.Event) string {
	if len(e.Files) == 0 {
		return e.AI
	}
	return e.AI + "\n" + strings.Join(e.Files, "\n")
}

// result is h as a Result; weak marks it as shown under a closed gate.
func (h *hit) result(weak bool) Result {
	c, e := h.c, h.e
	r := Result{
		ID: e.EventID, SessionID: e.SessionID, Timestamp: e.Timestamp,
		User: e.User, AI: e.AI, Files: e.Files, Score: roundScore(c.rel), Weak: weak,
		File: e.File, Line: e.Line, Row: c.row,
		Lexical: c.lexical, Semantic: c.semantic, Fused: c.score, Cosine: c.cos, Relevance: c.rel,
	}
	if o := h.supersededBy; o != nil {
		r.SupersededBy = &Ref{ID: o.e.EventID, SessionID: o.e.SessionID, Timestamp: o.e.Timestamp}
	}
	for _, o := range h.supersedes {
		r.Supersedes = append(r.Supersedes, Ref{ID: o.e.EventID, SessionID: o.e.SessionID, Timestamp: o.e.Timestamp})
	}
	return r
}
