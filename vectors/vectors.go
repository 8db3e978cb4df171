package vectors

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/praxis-os/continuity/index"
)

// Space is the in-memory vector space of one identity (SpaceIdentity):
// for each embedded exchange, its row id, its vector and what search
// filters on (session and timestamp) — never its text, which stays in the
// index and is read only for the results shown. It is derived data: Load
// rebuilds it from the index's vectors table at start, without
// re-embedding, and the embed worker adds what it stores.
//
// A query is an exact, exhaustive scan with the filters applied during the
// scan, so a filtered query returns the true top n of the filtered set at
// the cost of one scan.
//
// Vectors are kept normalised and quantised to 8 bits: int8 components
// with one float32 scale per vector, as the index stores them
// (index/vectorcodec.go: Load copies them in): a quarter of the memory, and a heap the garbage collector
// lets grow to twice the live data stays small. The price: cosines move
// by about 0.002 (far below the gaps that order candidates; hybrid recall
// on the dev set is unchanged), and a scan spends more CPU converting
// components. Components sit in fixed-size blocks without pointers: the
// collector does not scan them, and growth never copies the whole space.
// A space loaded from an index keeps the codes of its first vectors up to
// MemoryCodes bytes; the others stay in the index and are read for the
// candidates a query scores, with the same answers (disk.go).
// A sparse query (the hash embedder's, for a short text: about a third
// of the components are non-zero) is scored over its non-zero components
// only. The measurements behind these choices are in docs/performance.md,
// "Figures behind design choices".
//
// Why not a chromem-go collection, which also scans exhaustively: its
// query is several times slower, unfiltered and above all filtered to one
// session (a scalar dot product, a mutex operation and a goroutine
// handoff per document: BenchmarkVectorScan compares them); its
// per-document maps and strings add to float32 vectors; and its
// exact-match where filter cannot express a resume chain or a time range.
//
// An exchange may have several vectors (VectorsPer: its prompt's and its
// answer's, TextPromptAnswer): they sit side by side under its row, and a
// query ranks the exchange by the most similar of them.
//
// Space is safe for concurrent use.
type Space struct {
	identity string
	per      int // the most vectors of one row (VectorsPer of the identity's recipe)
	// budget is MemoryCodes when the space was made: its own, so that the
	// space and its background fill never read the variable again (a
	// test that sets it for one space does not race with another's).
	budget int

	mu      sync.RWMutex
	dim     int
	blocks  [][]int8   // blockSize quantised vectors each (the last one partly filled)
	signs   [][]uint64 // blockSize sign codes (words each) per block, for preselect
	words   int        // uint64 words of a sign code: dim/64 rounded up
	scale   []float32  // scale of vector i: component j is blocks[..][j] * scale[i]
	rows    []int64    // row id of vector i
	session []int32    // index in sessions of vector i's session
	ts      []int64    // timestamp of vector i, unix nanoseconds
	slot    []uint8    // which of its row's vectors vector i is (Entry.Slot)

	sessions []string         // session ids, by index
	sessIdx  map[string]int32 // index of a session id

	mem *blockMem // where blocks and signs live (blockmem.go)

	// src is the index the space was loaded from (nil for a space built
	// with NewSpace alone). The codes of the first inMem vectors are in
	// blocks, those of the others are read from src (disk.go).
	src   *index.DB
	inMem int
	// moved counts the compactions (keepLocked), which move vectors:
	// FillCodes checks that none happened while it read.
	moved int

	// offered and maxOffered are how many index rows were added (a row
	// whose vectors are all zero included: it has none in the space) and
	// the largest of them.
	offered    int
	maxOffered int64
	// exchanges is how many distinct rows have a vector in the space.
	exchanges int
}

// blockSize is how many vectors one block holds.
const blockSize = 4096

// parallelMin is the size from which a query scans on several cores.
const parallelMin = 16384

// ErrDimension is returned for a vector whose length differs from the
// space's.
var ErrDimension = errors.New("vectors: vector dimension mismatch")

// NewSpace returns an empty space for identity; its dimension is set by
// the first vector added.
func NewSpace(identity string) *Space {
	v := &Space{identity: identity, per: VectorsPer(RecipeOfIdentity(identity)), budget: MemoryCodes, sessIdx: map[string]int32{}, mem: &blockMem{}}
	runtime.AddCleanup(v, func(m *blockMem) { m.free() }, v.mem)
	return v
}

// vectorDoc is one vector to add, with its metadata.
type vectorDoc struct {
	row     int64
	session string
	ts      int64
	vec     []float32
	// code and scale: the vector already quantised (as the index stores
	// it, index.QuantizeUnit), instead of vec; scale 0 for a zero vector.
	code  []int8
	scale float32
	// slot is which of its exchange's vectors it is (EmbedTexts): 0 the
	// prompt's, 1 the answer's.
	slot int
}

// AnswerWeight scales the similarity of an answer's vector (slot 1 of
// TextPromptAnswer) to a query: an exchange matched by its answer ranks
// below one matched as well by its prompt, the question asked being more
// often what a query rephrases. Applied when a vector is added (its
// quantisation scale), so a scan costs nothing more. A variable for
// evaluation (continuity-eval --answer-weight); the index stores the
// scales without it, so a change applies at the next load.
var AnswerWeight = 0.85

// Identity is the identity of the space.
func (v *Space) Identity() string { return v.identity }

// Len is the number of exchanges that can be found: those with a vector
// that is not zero.
func (v *Space) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.exchanges
}

// Vectors is the number of vectors in the space (an exchange may have
// several).
func (v *Space) Vectors() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.rows)
}

// distinctRuns counts the runs of equal values in rows: the exchanges,
// since the vectors of one row sit side by side.
func distinctRuns(rows []int64) int {
	n := 0
	for i, r := range rows {
		if i == 0 || r != rows[i-1] {
			n++
		}
	}
	return n
}

// add appends docs (copying their vectors), normalising those that are not
// of unit length. Zero vectors (texts without content) are similar to
// nothing and left out. Nothing is added if a vector has the wrong
// dimension. The docs of one row (its several vectors) come one after
// the other.
func (v *Space) add(docs []vectorDoc) error {
	st, err := stage(docs)
	if err != nil {
		return fmt.Errorf("%w (space %s)", err, v.identity)
	}
	return v.addStaged(st)
}

// Entry is one vector to add to a space with Add: its exchange's row,
// session and time (what a query filters on), which of the exchange's
// vectors it is (Slot: 0 the prompt's, 1 the answer's, see EmbedTexts)
// and the vector itself (nil or zero for a slot without text).
type Entry struct {
	Row     int64
	Session string
	TS      int64
	Slot    int
	Vec     []float32
}

// Add appends entries as add does (copying their vectors, normalising
// them, leaving the zero ones out; nothing is added if one has the wrong
// dimension); the entries of one row come one after the other. Exported
// for the embedding worker (follow/embedding), which adds the vectors it
// has just stored to the space search reads, rather than load it again.
func (v *Space) Add(entries []Entry) error {
	docs := make([]vectorDoc, len(entries))
	for i, e := range entries {
		docs[i] = vectorDoc{row: e.Row, session: e.Session, ts: e.TS, vec: e.Vec, slot: e.Slot}
	}
	return v.add(docs)
}

// staged is a batch of vectors quantised and sign-coded outside the
// space's lock (by several loaders at once, see Load).
type staged struct {
	dim      int
	codes    []int8    // n × dim
	signs    []uint64  // n × words
	scale    []float32 // n
	rows     []int64
	sessions []string
	ts       []int64
	slots    []uint8
	// offered and maxRow: the distinct rows of the docs (zero vectors
	// included) and the largest.
	offered int
	maxRow  int64
}

// stage quantises docs, which must all have the same dimension, leaving out
// the zero ones.
func stage(docs []vectorDoc) (staged, error) {
	if len(docs) == 0 {
		return staged{}, nil
	}
	dim := len(docs[0].vec)
	if docs[0].code != nil {
		dim = len(docs[0].code)
	}
	if dim == 0 {
		return staged{}, fmt.Errorf("%w: event %d has no component", ErrDimension, docs[0].row)
	}
	words := (dim + 63) / 64
	st := staged{dim: dim, codes: make([]int8, len(docs)*dim), signs: make([]uint64, len(docs)*words)}
	for i, d := range docs {
		if i == 0 || d.row != docs[i-1].row {
			st.offered++
			st.maxRow = max(st.maxRow, d.row)
		}
		n := len(d.vec)
		if d.code != nil {
			n = len(d.code)
		}
		if n != dim {
			return staged{}, fmt.Errorf("%w: event %d has %d components, others %d", ErrDimension, d.row, n, dim)
		}
		k := len(st.rows)
		code := st.codes[k*dim : (k+1)*dim]
		var scale float32
		if d.code != nil {
			scale = d.scale
			copy(code, d.code)
		} else {
			// The index's quantisation, so that the space built from
			// what the index stores is this one to the bit.
			scale = index.QuantizeUnit(code, d.vec)
		}
		if !usableScale(scale) {
			clear(code)
			continue
		}
		if d.slot == 1 {
			scale *= float32(AnswerWeight)
		}
		st.scale = append(st.scale, scale)
		signCode(st.signs[k*words:(k+1)*words], code)
		st.rows = append(st.rows, d.row)
		st.sessions = append(st.sessions, d.session)
		st.ts = append(st.ts, d.ts)
		st.slots = append(st.slots, uint8(d.slot))
	}
	return st, nil
}

// usableScale reports whether a vector of this scale has a place in the
// space: not zero (a text without content), not NaN nor infinite.
func usableScale(scale float32) bool {
	return scale != 0 && !math.IsNaN(float64(scale)) && !math.IsInf(float64(scale), 0)
}

// addStaged appends a staged batch.
func (v *Space) addStaged(st staged) error {
	if st.offered == 0 {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.offered += st.offered
	v.maxOffered = max(v.maxOffered, st.maxRow)
	if len(st.rows) == 0 {
		return nil
	}
	v.exchanges += distinctRuns(st.rows)
	if v.dim == 0 {
		v.dim, v.words = st.dim, (st.dim+63)/64
	}
	if st.dim != v.dim {
		return fmt.Errorf("%w: event %d has %d components, the space %s has %d", ErrDimension, st.rows[0], st.dim, v.identity, v.dim)
	}
	for k, row := range st.rows {
		i := len(v.rows)
		if i%blockSize == 0 && i/blockSize == len(v.signs) {
			signs, err := v.mem.signBlock(blockSize * v.words)
			if err != nil {
				return fmt.Errorf("vectors: vector space %s: %w", v.identity, err)
			}
			v.signs = append(v.signs, signs)
		}
		// In memory while the codes fit MemoryCodes (those past it are
		// the index's: added here after they were stored), in order.
		if st.codes != nil && i == v.inMem && (v.src == nil || (i+1)*v.dim <= v.budget) {
			v.inMem++
			if i/blockSize == len(v.blocks) {
				codes, err := v.mem.codeBlock(blockSize * v.dim)
				if err != nil {
					return fmt.Errorf("vectors: vector space %s: %w", v.identity, err)
				}
				v.blocks = append(v.blocks, codes)
			}
			copy(v.vector(i), st.codes[k*v.dim:(k+1)*v.dim])
		}
		copy(v.signCode(i), st.signs[k*v.words:(k+1)*v.words])
		si, ok := v.sessIdx[st.sessions[k]]
		if !ok {
			si = int32(len(v.sessions))
			v.sessions = append(v.sessions, st.sessions[k])
			v.sessIdx[st.sessions[k]] = si
		}
		v.scale = append(v.scale, st.scale[k])
		v.rows = append(v.rows, row)
		v.session = append(v.session, si)
		v.ts = append(v.ts, st.ts[k])
		v.slot = append(v.slot, st.slots[k])
	}
	return nil
}

// vector is the storage of vector i. Callers hold v.mu.
func (v *Space) vector(i int) []int8 {
	b := v.blocks[i/blockSize]
	o := (i % blockSize) * v.dim
	return b[o : o+v.dim : o+v.dim]
}

// signCode is the sign code of vector i. Callers hold v.mu.
func (v *Space) signCode(i int) []uint64 {
	b := v.signs[i/blockSize]
	o := (i % blockSize) * v.words
	return b[o : o+v.words : o+v.words]
}

// RemoveSession drops the vectors of a session, after the index deleted
// it (index.DB.DeleteSession), so that they stop taking candidate slots.
// (Search never returns a deleted exchange either way: results are read
// from the index.)
func (v *Space) RemoveSession(session string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	si, ok := v.sessIdx[session]
	if !ok {
		return
	}
	// The session keeps its index (other vectors refer to indexes by
	// position) but has no vector left.
	v.keepLocked(func(i int) bool { return v.session[i] != si })
}

// RemoveRows drops the vectors of these event rows (lines an edit of a
// log changed or removed), after the index deleted them.
func (v *Space) RemoveRows(rows []int64) {
	if len(rows) == 0 {
		return
	}
	gone := make(map[int64]bool, len(rows))
	for _, r := range rows {
		gone[r] = true
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.keepLocked(func(i int) bool { return !gone[v.rows[i]] })
}

// keepLocked keeps the vectors for which keep is true, in order. Blocks
// past the last vector stay mapped for the next ones. Callers hold mu.
func (v *Space) keepLocked(keep func(i int) bool) {
	n, inMem := 0, 0
	for i := range v.rows {
		if !keep(i) {
			continue
		}
		if i < v.inMem {
			inMem++ // the kept ones of memory stay ahead (n <= i)
		}
		if n != i {
			if i < v.inMem {
				copy(v.vector(n), v.vector(i))
			}
			copy(v.signCode(n), v.signCode(i))
			v.rows[n], v.session[n], v.ts[n], v.scale[n], v.slot[n] = v.rows[i], v.session[i], v.ts[i], v.scale[i], v.slot[i]
		}
		n++
	}
	v.rows, v.session, v.ts, v.scale, v.slot = v.rows[:n], v.session[:n], v.ts[:n], v.scale[:n], v.slot[:n]
	v.inMem = inMem
	v.moved++
	v.exchanges = distinctRuns(v.rows)
}

// Hit is a nearest neighbour: an event row and its cosine similarity
// to the query.
type Hit struct {
	Row   int64
	Score float64
}

// Filter restricts a query. Zero fields put no constraint.
type Filter struct {
	Sessions     []string // any of these sessions
	Since, Until int64    // unix nanoseconds; since <= ts < until
}

// Query returns the n rows most similar to q among those that pass f,
// best first (ties: the later row first): a row's similarity is that of
// its most similar vector.
func (v *Space) Query(ctx context.Context, q []float32, n int, f Filter) ([]Hit, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	total := len(v.rows)
	if total == 0 || n <= 0 {
		return nil, nil
	}
	rowsWanted := n
	// The best n rows are among the best n·per vectors: a row better
	// than the n-th best has its best vector ahead of the (at most
	// per·(n-1)) vectors of the rows ahead of it.
	n *= max(v.per, 1)
	if len(q) != v.dim {
		return nil, fmt.Errorf("%w: query has %d components, the space %s has %d", ErrDimension, len(q), v.identity, v.dim)
	}
	norm := math.Sqrt(float64(Dot(q, q)))
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return nil, nil // similar to nothing
	}
	var allowed []bool // by session index; nil: every session
	if len(f.Sessions) > 0 {
		allowed = make([]bool, len(v.sessions))
		any := false
		for _, s := range f.Sessions {
			if si, ok := v.sessIdx[s]; ok {
				allowed[si], any = true, true
			}
		}
		if !any {
			return nil, nil
		}
	}
	pass := func(i int) bool {
		return (allowed == nil || allowed[v.session[i]]) &&
			(f.Since == 0 || v.ts[i] >= f.Since) && (f.Until == 0 || v.ts[i] < f.Until)
	}

	// The builtin embedder's queries are sparse (short texts hash to
	// about 90 of 256 components): a dot product over the query's
	// non-zero components alone does a third of the work. Dense queries
	// (a model's) are quantised to int16 and scanned with an integer
	// kernel (dot.go), a block of vectors per call when nothing filters.
	sq, sparse := sparseOf(q)
	var qi []int16
	qscale := float32(1)
	if !sparse {
		qi, qscale = quantizeQuery(q)
	}
	unfiltered := allowed == nil && f.Since == 0 && f.Until == 0

	var (
		tops []topN
		err  error
	)
	passing := total
	if !unfiltered {
		passing = 0
		for i := range total {
			if pass(i) {
				passing++
			}
		}
	}
	switch {
	case v.inMem < total:
		if tops, err = v.queryStored(ctx, q, sq, sparse, qi, n, passing, pass, unfiltered); err != nil {
			return nil, err
		}
	case !sparse && v.preselects(passing, n):
		tops = []topN{v.twoStage(q, qi, n, preselectWant(n), pass, unfiltered)}
	default:
		tops = v.exact(total, sq, sparse, qi, n, pass, unfiltered)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var all []scoredIdx
	for _, t := range tops {
		all = append(all, t.h...)
	}
	slices.SortFunc(all, func(a, b scoredIdx) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(b.row, a.row)
	})
	if v.per > 1 {
		all = bestPerRow(all)
	}
	all = all[:min(rowsWanted, len(all))]
	hits := make([]Hit, len(all))
	for i, s := range all {
		hits[i] = Hit{Row: v.rows[s.idx], Score: float64(s.score) * float64(qscale) / norm}
	}
	return hits, nil
}

// bestPerRow keeps the first (best) of the sorted vectors of each row.
func bestPerRow(all []scoredIdx) []scoredIdx {
	seen := make(map[int64]bool, len(all))
	out := all[:0]
	for _, s := range all {
		if !seen[s.row] {
			seen[s.row] = true
			out = append(out, s)
		}
	}
	return out
}

// exact scores every vector below total that passes the filter; each
// worker keeps the best n of its share.
func (v *Space) exact(total int, sq sparseQuery, sparse bool, qi []int16, n int, pass func(int) bool, unfiltered bool) []topN {
	workers := 1
	if total >= parallelMin {
		workers = min(runtime.GOMAXPROCS(0), (total+parallelMin-1)/parallelMin)
	}
	tops := make([]topN, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := total*w/workers, total*(w+1)/workers
		scan := func() {
			t := &tops[w]
			t.n = n
			switch {
			case sparse:
				for i := lo; i < hi; i++ {
					if pass(i) {
						t.offer(sq.dotInt8(v.vector(i))*v.scale[i], int32(i), v.rows[i])
					}
				}
			case unfiltered:
				var dots [blockSize]int32
				for i := lo; i < hi; {
					end := min(hi, (i/blockSize+1)*blockSize)
					o := (i % blockSize) * v.dim
					out := dots[:end-i]
					dotsInt16Int8(qi, v.blocks[i/blockSize][o:o+len(out)*v.dim], out)
					for k, d := range out {
						t.offer(float32(d)*v.scale[i+k], int32(i+k), v.rows[i+k])
					}
					i = end
				}
			default:
				var dot [1]int32
				for i := lo; i < hi; i++ {
					if pass(i) {
						dotsInt16Int8(qi, v.vector(i), dot[:])
						t.offer(float32(dot[0])*v.scale[i], int32(i), v.rows[i])
					}
				}
			}
		}
		if workers == 1 {
			scan()
			break
		}
		wg.Add(1)
		go func() { defer wg.Done(); scan() }()
	}
	wg.Wait()
	return tops
}

// scoredIdx is a vector's index and row with its similarity to the query.
type scoredIdx struct {
	score float32
	idx   int32
	row   int64
}

// worse orders scoredIdx as the results do, best last: by similarity,
// then the earlier row (ties go to the later row), so that which of equal
// vectors make the cut does not depend on the order of the space.
func (a scoredIdx) worse(b scoredIdx) bool {
	return a.score < b.score || a.score == b.score && a.row < b.row
}

// topN keeps the n best scoredIdx offered, in a min-heap.
type topN struct {
	n int
	h minHeap
}

func (t *topN) offer(score float32, idx int32, row int64) {
	s := scoredIdx{score, idx, row}
	switch {
	case len(t.h) < t.n:
		heap.Push(&t.h, s)
	case t.h[0].worse(s):
		t.h[0] = s
		heap.Fix(&t.h, 0)
	}
}

type minHeap []scoredIdx

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].worse(h[j]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scoredIdx)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sparseQuery is a query vector's non-zero components: their positions
// and values.
type sparseQuery struct {
	idx  []int32
	vals []float32
}

// sparseMax is the largest share of non-zero components for which the
// sparse dot product (an index load per component) beats the dense one.
const sparseMax = 0.6

// sparseOf returns q's non-zero components, ok false when q is too dense
// for them to pay (model embeddings are dense).
func sparseOf(q []float32) (sq sparseQuery, ok bool) {
	nz := 0
	for _, x := range q {
		if x != 0 {
			nz++
		}
	}
	if float64(nz) > sparseMax*float64(len(q)) {
		return sq, false
	}
	sq.idx, sq.vals = make([]int32, 0, nz), make([]float32, 0, nz)
	for j, x := range q {
		if x != 0 {
			sq.idx = append(sq.idx, int32(j))
			sq.vals = append(sq.vals, x)
		}
	}
	return sq, true
}

// dotInt8 is dotInt8(q, b) for the query q whose non-zero components sq
// holds, with four independent accumulators.
func (sq sparseQuery) dotInt8(b []int8) float32 {
	idx, vals := sq.idx, sq.vals[:len(sq.idx)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(idx); i += 4 {
		s0 += vals[i] * float32(b[idx[i]])
		s1 += vals[i+1] * float32(b[idx[i+1]])
		s2 += vals[i+2] * float32(b[idx[i+2]])
		s3 += vals[i+3] * float32(b[idx[i+3]])
	}
	for ; i < len(idx); i++ {
		s0 += vals[i] * float32(b[idx[i]])
	}
	return (s0 + s1) + (s2 + s3)
}

// Dot is the Dot product of two vectors of the same length, with eight
// independent accumulators: a single one would chain every addition on
// the previous one's latency.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
