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

// Large spaces leave their codes in the index. Past DiskMin bytes of int8
// codes a space keeps in memory only what its first stage reads (the
// sign codes) and what a query filters and ranks on (row, session, time,
// scale and slot of each vector: 27 bytes), and reads the int8 codes of
// the vectors it scores from the index's vectors table, where they are
// stored anyway: one statement per core for a query's candidates, their
// rows sought in row order. At 1M exchanges (2M vectors of 512
// components) the space takes about 180 MB instead of 1.2 GB, and a
// start reads the vectors' heads (index/vectorsigns.go: the scales and
// sign codes, 140 MB) instead of the whole table (1 GB).
//
// The answers are the ones the space would give with its codes in memory:
// the same candidates (the sign codes are the same bits), scored by the
// same functions on the same codes with the same scales. What costs more
// is a query that scores many vectors: the candidates of the two-stage
// search (4,000 and more: a few milliseconds of SQLite), and above all a
// query that scores every vector (a sparse query, the hash embedder's; a
// limit so large that preselection does not apply), which then reads the
// whole table (seconds at 1M). A query filtered to few vectors (a
// session, a short time range) reads only theirs.
//
// The space goes to the index when it is loaded past DiskMin (Load) or
// when vectors added past it (Add: the embedding worker adds what it has
// just stored) cross it; it does not come back to memory when vectors are
// removed.

// DiskMin is the size of int8 codes (vectors × components) from which a
// space loaded from an index keeps them there (512 MiB: 1M vectors of
// 512 components, 500k exchanges of two vectors; below it, RSS stays
// under 1 GB with the codes in memory). A variable for tests.
var DiskMin = 512 << 20

// storedStreamMin is the number of rows from which a query reads the
// codes it scores by walking the vectors table over their range rather
// than seeking each row. A variable for tests.
var storedStreamMin = 50_000

// storedParallelMin is the number of rows from which a query reads the
// codes of its candidates on several connections (cores).
const storedParallelMin = 1024

// leaveCodesLocked drops the codes in memory: from now on they are read
// from v.src. Callers hold v.mu for writing.
func (v *Space) leaveCodesLocked() {
	v.disk = true
	v.blocks = nil
	v.mem.dropCodes()
}

// OnDisk reports whether the space reads its codes from the index.
func (v *Space) OnDisk() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.disk
}

// queryStored is Query's scan of a space whose codes are in the index:
// the vectors to score are chosen as in memory (the candidates of the
// two-stage search, or every vector that passes the filter), then scored
// with the codes read from the index. Callers hold v.mu for reading.
func (v *Space) queryStored(ctx context.Context, q []float32, sq sparseQuery, sparse bool, qi []int16, n, passing int, pass func(int) bool, unfiltered bool) (topN, error) {
	var idxs []int32
	if !sparse && v.preselects(passing, n) {
		dist, t, done := v.preselect(q, preselectWant(n), pass, unfiltered)
		for i, d := range dist {
			if int(d) <= t {
				idxs = append(idxs, int32(i))
			}
		}
		done()
	} else {
		idxs = make([]int32, 0, passing)
		for i := range v.rows {
			if unfiltered || pass(i) {
				idxs = append(idxs, int32(i))
			}
		}
	}
	score := func(i int32, code []int8) float32 {
		if sparse {
			return sq.dotInt8(code) * v.scale[i]
		}
		var dot [1]int32
		dotsInt16Int8(qi, code, dot[:])
		return float32(dot[0]) * v.scale[i]
	}
	return v.scoreStored(ctx, idxs, n, score)
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
// sign code, no codes), as stage does from their codes: the same vectors
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
