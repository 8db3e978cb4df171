package bm25

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// ErrNotOneTerm: a query term is not exactly one token for FTS5's
// unicode61 tokenizer (it would be a phrase, or nothing): the engine
// cannot answer that query; FTS5 can.
var ErrNotOneTerm = errors.New("bm25: query term is not one unicode61 token")

// ErrWeights: column weights that are negative, NaN or infinite.
var ErrWeights = errors.New("bm25: column weights must be finite and not negative")

// The BM25 parameters of FTS5's bm25() (fts5_aux.c). They are variables,
// not constants, so that k1 + 1.0 and 1 - b are computed in float64 at
// run time as the C code computes them (Go would fold exact constants).
var (
	k1 = 1.2
	b  = 0.75
)

// queryTerm is a distinct term of a query, with its postings in each
// source and its live document count.
type queryTerm struct {
	key  string
	post [][]byte // by source
	nHit int64
}

// source is a segment or the tail, as a search reads it.
type source struct {
	docs    *docTable
	deleted []uint64 // tombstones by ordinal, nil when none
	// lookup returns a term's document count, and its postings when
	// read is true.
	lookup func(term string, read bool, arena *[]byte) ([]byte, uint32, error)
}

func (s *source) isDeleted(ord int32) bool {
	return s.deleted != nil && int(ord>>6) < len(s.deleted) && s.deleted[ord>>6]&(1<<(ord&63)) != 0
}

// live counts the live documents of the postings p (df documents, all
// of them live when the source has no deletions) read from s.
func (s *source) live(p []byte, df uint32) int64 {
	if s.deleted == nil {
		return int64(df)
	}
	var n int64
	it := newPostingIter(p, s.docs.n())
	for {
		ord, _, _, ok := it.next()
		if !ok {
			return n
		}
		if !s.isDeleted(ord) {
			n++
		}
	}
}

// contribution is term i's share of a row's score in fts5Bm25Function:
//
//	aIDF[i] * ((aFreq[i] * (k1 + 1.0)) / (aFreq[i] + k1 * (1 - b + b * D / avgdl)))
//
// written operation by operation, each rounded to float64 (the explicit
// conversions forbid fused multiply-adds), so that the sum of the
// contributions of a row in query order is bit for bit FTS5's.
func contribution(idf, f, d, avgdl float64) float64 {
	return contributionK(idf, f, lengthNorm(d, avgdl))
}

// lengthNorm is the k1 * (1 - b + b * D / avgdl) of contribution: it
// depends on the row's length only, so a search computes it once per
// length (lengthCache) instead of once per posting.
func lengthNorm(d, avgdl float64) float64 {
	bd := float64(b * d)
	norm := float64(float64(1-b) + float64(bd/avgdl))
	return float64(k1 * norm)
}

// contributionK is contribution given lengthNorm's value.
func contributionK(idf, f, k float64) float64 {
	num := float64(f * float64(k1+1.0))
	den := float64(f + k)
	return float64(idf * float64(num/den))
}

// noLengthCache, set by a benchmark, computes lengthNorm per posting
// (to measure what the cache saves).
var noLengthCache bool

// lengthCacheMax bounds the lengths whose norm a search caches (longer
// rows, rare, compute it each time).
const lengthCacheMax = 1 << 14

// lengthCache holds lengthNorm by length for one search; NaN: not yet.
type lengthCache []float64

func (c *lengthCache) reset() {
	if *c == nil {
		*c = make([]float64, lengthCacheMax)
	}
	nan := math.NaN()
	for i := range *c {
		(*c)[i] = nan
	}
}

func (c lengthCache) norm(d uint32, avgdl float64) float64 {
	if d >= lengthCacheMax {
		return lengthNorm(float64(d), avgdl)
	}
	k := c[d]
	if k != k { // NaN
		k = lengthNorm(float64(d), avgdl)
		c[d] = k
	}
	return k
}

// idfOf is fts5Bm25GetData's IDF of a phrase matched by nHit of nRow rows.
func idfOf(nRow, nHit int64) float64 {
	idf := logC(float64(float64(nRow-nHit)+0.5) / float64(float64(nHit)+0.5))
	if idf <= 0.0 {
		idf = 1e-6
	}
	return idf
}

// freq is aFreq for a row: the column weight summed once per instance,
// the user column's instances first (xInst order: by column, then
// offset).
func freq(tu, ta uint32, w [2]float64, integral bool) float64 {
	if integral && tu < 1<<20 && ta < 1<<20 {
		// Exact either way: integers summed below 2^53.
		return w[0]*float64(tu) + w[1]*float64(ta)
	}
	f := 0.0
	for range tu {
		f += w[0]
	}
	for range ta {
		f += w[1]
	}
	return f
}

// scratch is a search's per-source work space, pooled.
type scratch struct {
	score []float64
	mark  []uint32 // == epoch: touched in this pass
	epoch uint32
	list  []int32
	norms lengthCache
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// arenaPool holds the buffers searches read postings into; one larger
// than arenaKeep (a query of very common terms) is left to the GC.
var arenaPool = sync.Pool{New: func() any { return new([]byte) }}

const arenaKeep = 16 << 20

func (s *scratch) reset(n int) {
	if cap(s.score) < n {
		s.score = make([]float64, n)
		s.mark = make([]uint32, n)
		s.epoch = 0
	}
	s.score, s.mark = s.score[:n], s.mark[:n]
	s.epoch++
	if s.epoch == 0 {
		clear(s.mark)
		s.epoch = 1
	}
	s.list = s.list[:0]
}

// hitHeap is a min-heap on rank: its root is the worst hit kept.
type hitHeap []Hit

func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Row < b.Row
}

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// checkWeights normalises the weights as index.DB.Lexical: {0, 0} is
// {1, 1}.
func checkWeights(w [2]float64) ([2]float64, error) {
	if w == [2]float64{} {
		return [2]float64{1, 1}, nil
	}
	for _, x := range w {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return w, fmt.Errorf("%w: %v", ErrWeights, w)
		}
	}
	return w, nil
}

// tokenOf returns term as FTS5 reads the quoted phrase "term": its one
// unicode61 token.
func tokenOf(term string) (string, error) {
	var tok string
	n := 0
	tokenize(term, nil, func(t []byte) {
		n++
		tok = string(t)
	})
	if n != 1 {
		return "", fmt.Errorf("%w: %q gives %d tokens", ErrNotOneTerm, term, n)
	}
	return tok, nil
}

// search runs the query over the sources; the caller holds the read lock.
func search(srcs []source, n, tokens int64, keys []string, w [2]float64, f *filterSet, limit int) ([]Hit, error) {
	if n <= 0 || len(keys) == 0 {
		return nil, nil
	}
	avgdl := float64(tokens) / float64(n)
	integral := w[0] == math.Trunc(w[0]) && w[1] == math.Trunc(w[1]) && w[0] < 1<<20 && w[1] < 1<<20

	arena := arenaPool.Get().(*[]byte)
	*arena = (*arena)[:0]
	defer func() {
		if cap(*arena) <= arenaKeep {
			arenaPool.Put(arena)
		}
	}()
	// Distinct terms, their postings and live counts (nHit: FTS5 counts
	// the rows matching each phrase, over the whole index).
	terms := make([]queryTerm, 0, len(keys))
	phrase := make([]int, len(keys)) // phrase i -> terms index
	for i, k := range keys {
		j := slices.IndexFunc(terms, func(t queryTerm) bool { return t.key == k })
		if j < 0 {
			j = len(terms)
			qt := queryTerm{key: k, post: make([][]byte, len(srcs))}
			for s := range srcs {
				p, df, err := srcs[s].lookup(k, true, arena)
				if err != nil {
					return nil, err
				}
				qt.post[s] = p
				qt.nHit += srcs[s].live(p, df)
			}
			terms = append(terms, qt)
		}
		phrase[i] = j
	}
	idf := make([]float64, len(terms))
	for j := range terms {
		idf[j] = idfOf(n, terms[j].nHit)
	}

	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.norms.reset()
	var h hitHeap
	var all []Hit
	for s := range srcs {
		src := &srcs[s]
		some := false
		for j := range terms {
			if len(terms[j].post[s]) > 0 {
				some = true
			}
		}
		if !some {
			continue
		}
		docs := src.docs
		sc.reset(docs.n())
		// Term at a time, in query order: each row's score is the sum of
		// its phrases' contributions in the order fts5Bm25Function adds
		// them (a phrase the row lacks adds +0.0, which changes nothing).
		for i := range keys {
			t := &terms[phrase[i]]
			it := newPostingIter(t.post[s], docs.n())
			for {
				ord, tu, ta, ok := it.next()
				if !ok {
					break
				}
				if src.isDeleted(ord) {
					continue
				}
				var c float64
				if noLengthCache {
					c = contribution(idf[phrase[i]], freq(tu, ta, w, integral), float64(docs.lens[ord]), avgdl)
				} else {
					c = contributionK(idf[phrase[i]], freq(tu, ta, w, integral), sc.norms.norm(docs.lens[ord], avgdl))
				}
				if sc.mark[ord] != sc.epoch {
					sc.mark[ord] = sc.epoch
					sc.score[ord] = 0.0
					sc.list = append(sc.list, ord)
				}
				sc.score[ord] += c
			}
		}
		for _, ord := range sc.list {
			if !f.keep(docs.sess[ord], docs.ts[ord]) {
				continue
			}
			hit := Hit{Row: docs.rows[ord], Score: sc.score[ord]}
			switch {
			case limit <= 0:
				all = append(all, hit)
			case len(h) < limit:
				heap.Push(&h, hit)
			case better(hit, h[0]):
				h[0] = hit
				heap.Fix(&h, 0)
			}
		}
	}
	if limit > 0 {
		all = h
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return all, nil
}

// filterSet is a Filter resolved against the session table.
type filterSet struct {
	sessions []uint64 // bitmap of session ordinals; nil: any
	since    int64
	until    int64
}

func (f *filterSet) keep(sess uint32, ts int64) bool {
	if f == nil {
		return true
	}
	if f.sessions != nil && (int(sess>>6) >= len(f.sessions) || f.sessions[sess>>6]&(1<<(sess&63)) == 0) {
		return false
	}
	if f.since != 0 && ts < f.since {
		return false
	}
	if f.until != 0 && ts >= f.until {
		return false
	}
	return true
}
