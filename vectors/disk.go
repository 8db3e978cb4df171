package vectors

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/praxis-os/continuity/index"
)

// Large spaces leave part of their codes in the index. A space keeps in
// memory what its first stage reads (the sign codes) and what a query
// filters and ranks on (row, session, time, scale and slot of each
// vector: 27 bytes), and the int8 codes of its first vectors up to
// MemoryCodes bytes; the codes of the others are read from the index's
// vectors table, where they are stored anyway, for the vectors a query
// scores: one statement per core, their rows sought in row order. At 1M
// exchanges (2M vectors of 512 components, 1 GB of codes) the space takes
// about 180 MB and MemoryCodes instead of 1.2 GB, and a start reads the
// codes it keeps and the heads of the others (index/vectorsigns.go: their
// scales and sign codes, 136 bytes an exchange against 1,032).
//
// The answers are the ones the space would give with every code in
// memory: the same candidates (the sign codes are the same bits), scored
// by the same functions on the same codes with the same scales. What
// costs more is a query that scores vectors whose codes are in the
// index: a few microseconds each (a page read), so the candidates of the
// two-stage search (8,000 at search's depth) cost tens of milliseconds,
// and a query that scores every vector (a sparse query: the hash
// embedder's; a limit so large that preselection does not apply) reads
// the whole table (seconds at 1M). A query filtered to few vectors (a
// session, a short time range) reads only theirs.
//
// Which vectors keep their codes: the first ones, in the space's order.
// A space whose codes do not all fit is loaded from the heads alone (a
// start reads 140 MB at 1M, not 1 GB: ready in a few seconds, every
// code then read from the index), then FillCodes, which the daemon runs
// in the background once the space answers, reads the codes that fit
// into memory, a block at a time. Vectors the embedding worker adds
// (Add) keep theirs while the codes before them are all in memory and
// fit; removed vectors make room only for later ones.

// MemoryCodes is how many bytes of int8 codes (vectors × components) a
// space loaded from an index keeps in memory: 384 MiB, all of a space of
// 375k exchanges of two 512-d vectors, 38 % of one of 1M (whose daemon
// then stays under 1 GB resident, its search working set included). A
// variable for tests.
var MemoryCodes = 384 << 20

// storedStreamMin is the number of rows from which a query reads the
// codes it scores by walking the vectors table over their range rather
// than seeking each row. A variable for tests.
var storedStreamMin = 50_000

// storedParallelMin is the number of rows from which a query reads the
// codes of its candidates on several connections (cores).
const storedParallelMin = 1024

// MemoryBudget is how many bytes of codes the space keeps in memory at
// most (MemoryCodes when it was made).
func (v *Space) MemoryBudget() int { return v.budget }

// CodesInMemory returns how many of the space's vectors have their codes
// in memory, and how many vectors it has.
func (v *Space) CodesInMemory() (inMemory, vectors int) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.inMem, len(v.rows)
}

// FillCodes reads into memory the codes of the vectors past those in
// memory, in order, while they fit MemoryCodes, a block (4,096 vectors)
// at a time, each read without holding the space and put in place under
// its lock: queries score the vectors whose codes are in memory there,
// the others from the index, with the same answers. It returns when the
// codes that fit are in memory, at the first vector whose row the index
// no longer has (deleted: the space hears of it soon), or with ctx's or
// the index's error.
func (v *Space) FillCodes(ctx context.Context) error {
	var buf []int8
	for {
		v.mu.RLock()
		from, moved, dim := v.inMem, v.moved, v.dim
		to := min(len(v.rows), (from/blockSize+1)*blockSize)
		if dim > 0 {
			to = min(to, v.budget/dim)
		}
		if v.src == nil || to <= from {
			v.mu.RUnlock()
			return nil
		}
		idxs := make([]int32, to-from)
		for k := range idxs {
			idxs[k] = int32(from + k)
		}
		slices.SortFunc(idxs, func(a, b int32) int { return cmp.Compare(v.rows[a], v.rows[b]) })
		rows := make([]int64, 0, len(idxs))
		for _, i := range idxs {
			if r := v.rows[i]; len(rows) == 0 || rows[len(rows)-1] != r {
				rows = append(rows, r)
			}
		}
		rowOf := func(i int32) int64 { return v.rows[i] }
		slotOf := func(i int32) int { return int(v.slot[i]) }
		// Read under the read lock (a compaction waits for it, and is
		// seen by moved below): rows and slots stay put meanwhile.
		buf = slices.Grow(buf[:0], (to-from)*dim)[:(to-from)*dim]
		filled := 0
		j := 0
		err := v.src.VectorCodes(ctx, v.identity, rows, func(row int64, q index.Quantized) error {
			if q.Dim != dim {
				return fmt.Errorf("%w: the index has %d components for row %d, the space %s %d", ErrDimension, q.Dim, row, v.identity, dim)
			}
			for ; j < len(idxs) && rowOf(idxs[j]) == row; j++ {
				i := idxs[j]
				s := slotOf(i)
				if s >= len(q.Scales) {
					return fmt.Errorf("vectors: row %d has %d vectors in the index, the space %s its vector %d", row, len(q.Scales), v.identity, s)
				}
				copy(buf[(int(i)-from)*dim:], q.Codes[s*dim:(s+1)*dim])
				filled++
			}
			return nil
		})
		v.mu.RUnlock()
		if err != nil {
			return fmt.Errorf("vectors: fill the codes of %s: %w", v.identity, err)
		}
		if filled != len(idxs) {
			return nil // a row deleted from the index: stop there
		}
		v.mu.Lock()
		if v.moved == moved && v.inMem == from {
			if from/blockSize == len(v.blocks) {
				codes, err := v.mem.codeBlock(blockSize * dim)
				if err != nil {
					v.mu.Unlock()
					return fmt.Errorf("vectors: vector space %s: %w", v.identity, err)
				}
				v.blocks = append(v.blocks, codes)
			}
			for i := from; i < to; i++ {
				copy(v.vector(i), buf[(i-from)*dim:(i-from+1)*dim])
			}
			v.inMem = to
		}
		v.mu.Unlock()
	}
}

// queryStored is Query's scan of a space some of whose codes are in the
// index: the vectors to score are chosen as with every code in memory
// (the candidates of the two-stage search, or every vector that passes
// the filter); those with codes in memory are scored there, the others
// with their codes read from the index, at the same time. Callers hold
// v.mu for reading.
func (v *Space) queryStored(ctx context.Context, q []float32, sq sparseQuery, sparse bool, qi []int16, n, passing int, pass func(int) bool, unfiltered bool) ([]topN, error) {
	score := func(i int32, code []int8) float32 {
		if sparse {
			return sq.dotInt8(code) * v.scale[i]
		}
		var dot [1]int32
		dotsInt16Int8(qi, code, dot[:])
		return float32(dot[0]) * v.scale[i]
	}
	var (
		stored []int32 // the vectors to score whose codes are in the index
		dist   []uint16
		t      int
	)
	preselected := !sparse && v.preselects(passing, n)
	if preselected {
		var done func()
		dist, t, done = v.preselect(q, preselectWant(n), pass, unfiltered)
		defer done()
		for i := v.inMem; i < len(dist); i++ {
			if int(dist[i]) <= t {
				stored = append(stored, int32(i))
			}
		}
	} else {
		for i := v.inMem; i < len(v.rows); i++ {
			if unfiltered || pass(i) {
				stored = append(stored, int32(i))
			}
		}
	}
	var (
		fromIndex topN
		err       error
		wg        sync.WaitGroup
	)
	wg.Go(func() { fromIndex, err = v.scoreStored(ctx, stored, n, score) })
	var tops []topN
	if preselected {
		top := topN{n: n}
		for i := range v.inMem {
			if int(dist[i]) <= t {
				top.offer(score(int32(i), v.vector(i)), int32(i), v.rows[i])
			}
		}
		tops = []topN{top}
	} else {
		tops = v.exact(v.inMem, sq, sparse, qi, n, pass, unfiltered)
	}
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return append(tops, fromIndex), nil
}

// scoreStored scores the vectors idxs with their codes read from the
// index and returns the best n. Callers hold v.mu for reading.
func (v *Space) scoreStored(ctx context.Context, idxs []int32, n int, score func(i int32, code []int8) float32) (topN, error) {
	slices.SortFunc(idxs, func(a, b int32) int {
		return cmp.Or(cmp.Compare(v.rows[a], v.rows[b]), cmp.Compare(a, b))
	})
	rows := make([]int64, 0, len(idxs))
	for _, i := range idxs {
		if r := v.rows[i]; len(rows) == 0 || rows[len(rows)-1] != r {
			rows = append(rows, r)
		}
	}
	parts := 1
	if len(rows) >= storedParallelMin {
		parts = min(runtime.GOMAXPROCS(0), 4) // the index has 4 read connections
	}
	tops := make([]topN, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	start := 0 // first of idxs of the part
	for p := range parts {
		part := rows[len(rows)*p/parts : len(rows)*(p+1)/parts]
		end := start
		if len(part) > 0 {
			last := part[len(part)-1]
			for end < len(idxs) && v.rows[idxs[end]] <= last {
				end++
			}
		}
		mine := idxs[start:end]
		start = end
		wg.Go(func() {
			top := topN{n: n}
			j := 0
			errs[p] = v.eachStored(ctx, part, func(row int64, q index.Quantized) error {
				if q.Dim != v.dim {
					return fmt.Errorf("%w: the index has %d components for row %d, the space %s %d", ErrDimension, q.Dim, row, v.identity, v.dim)
				}
				for j < len(mine) && v.rows[mine[j]] < row {
					j++ // a row gone from the index since
				}
				for ; j < len(mine) && v.rows[mine[j]] == row; j++ {
					i := mine[j]
					s := int(v.slot[i])
					if s >= len(q.Scales) {
						return fmt.Errorf("vectors: row %d has %d vectors in the index, the space %s its vector %d", row, len(q.Scales), v.identity, s)
					}
					top.offer(score(i, q.Codes[s*q.Dim:(s+1)*q.Dim]), i, row)
				}
				return nil
			})
			tops[p] = top
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return topN{}, fmt.Errorf("vectors: space %s: %w", v.identity, err)
		}
	}
	top := tops[0]
	for _, tp := range tops[1:] {
		for _, x := range tp.h {
			top.offer(x.score, x.idx, x.row)
		}
	}
	return top, nil
}

// eachStored calls fn with the stored vectors of rows (ascending,
// distinct) that the index has, in order.
func (v *Space) eachStored(ctx context.Context, rows []int64, fn func(row int64, q index.Quantized) error) error {
	if len(rows) == 0 {
		return nil
	}
	if len(rows) < storedStreamMin {
		return v.src.VectorCodes(ctx, v.identity, rows, fn)
	}
	j := 0
	return v.src.EachVectorIn(ctx, v.identity, rows[0], rows[len(rows)-1]+1, func(row int64, _ string, _ int64, q index.Quantized) error {
		for j < len(rows) && rows[j] < row {
			j++
		}
		if j == len(rows) || rows[j] != row {
			return nil
		}
		return fn(row, q)
	})
}

// stageHeads stages the vectors of one row from their heads (scale and
// sign code, no codes: they stay in the index), as stage does from their
// codes: the same vectors
// left out (scale 0), the same answer weight.
func stageHeads(st *staged, row int64, session string, ts int64, h index.Heads, dim int) {
	st.offered++
	st.maxRow = max(st.maxRow, row)
	for k, scale := range h.Scales {
		if !usableScale(scale) {
			continue
		}
		if k == 1 {
			scale *= float32(AnswerWeight)
		}
		st.scale = append(st.scale, scale)
		st.signs = append(st.signs, h.Signs[k*h.Words:(k+1)*h.Words]...)
		st.rows = append(st.rows, row)
		st.sessions = append(st.sessions, session)
		st.ts = append(st.ts, ts)
		st.slots = append(st.slots, uint8(k))
	}
	st.dim = dim
}
