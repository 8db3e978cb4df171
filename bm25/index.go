// Package bm25 answers the plain BM25 queries of continuity's lexical
// search (an OR of single index terms: what search builds with
// analyze.MatchAny from word terms) without SQLite, with exactly the
// rows, order and scores FTS5's bm25() gives over the full-text index
// (index/fulltext.go), bit for bit.
//
// Why: FTS5 computes bm25() by walking every query term's whole doclist
// once per statement to count the rows it matches, then again per match
// through xInst. At a million exchanges that made BM25 the part of a
// hybrid search that broke its latency target (docs/performance.md).
// Here the counts are
// kept (per segment, per term), and the scores are accumulated term at a
// time in a dense array.
//
// FTS5 stays the durable full-text index and answers every other query
// (CJK phrases, prefix queries); this engine is derived data, rebuilt
// from the events when its folder is missing, damaged or of another
// identity.
//
// Layout (Litestream-like: small types with one job):
//   - tail.go: the mutable in-memory tail that Add fills;
//   - segment.go: immutable segment files: the dictionary and document
//     arrays mmap'd read-only, the postings read with pread per query
//     term, so that neither the Go heap nor the process's resident memory
//     holds the bulk of the index (the page cache does);
//   - manifest.go: the checksummed list of segments, tombstones and
//     sessions, replaced atomically;
//   - postings.go: the postings encoding both share;
//   - search.go: FTS5's bm25() reproduced, and the ranking;
//   - tokenize.go: FTS5's unicode61 tokenizer reproduced.
package bm25

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync"
)

// Doc is one exchange as the full-text index holds it.
type Doc struct {
	Row     int64  // events.id; strictly increasing across Add calls
	Session string // session id, for filters
	TS      int64  // event time, unix ns, for filters
	User    string // the user column exactly as FTS5 is given it (analyze.Document output)
	AI      string // the ai column, likewise
}

// Filter restricts a search. The zero value keeps every document.
// Filters never change the statistics the scores use (documents in all,
// their average length, each term's document count): FTS5 computes them
// over the whole index too.
type Filter struct {
	Sessions     []string // nil: any session; empty non-nil: none
	Since, Until int64    // unix ns; Since inclusive, Until exclusive; 0: unbounded
}

// Hit is a matching row and its score: -bm25(), > 0 for a match with
// positive weights, like index.LexicalHit.
type Hit struct {
	Row   int64
	Score float64
}

// SealDocs is how many documents the tail holds before Add seals it into
// a segment file: larger would hold more heap in the tail's postings
// (docs/performance.md, "Figures behind design choices"), smaller make more segments
// (each adds a dictionary look-up per term to every search).
var SealDocs = 1 << 16

// Index is a BM25 index in a folder. Search may run concurrently with the
// writer's calls (Add, Delete, Flush, Close), which must come from one
// goroutine at a time.
type Index struct {
	dir      string
	identity string
	reset    error

	wmu sync.Mutex // serialises writers (held through sealing)

	mu       sync.RWMutex // guards the fields below
	closed   bool
	segs     []*segment
	tail     *tail
	frozen   *tail // the tail being sealed, still searchable; nil
	sessions map[string]uint32
	names    []string // session ordinal -> id
	// Live documents and their tokens, over segments and tail.
	live, tokens int64
	watermark    int64
	// durable: the highest row sealed (the manifest's watermark).
	durable int64
	// tailDeleted: tombstones of the tail and of frozen, by ordinal.
	tailDeleted, frozenDeleted []uint64
	nextSeg                    uint64

	adder tailAdder
}

// Open opens the index in dir, creating dir (0700) when missing. A folder
// written under another identity (the caller's key for what the index
// must match: the full-text index's instance, the analysis version...),
// or one whose manifest or segments are damaged, is cleared and the index
// starts empty; Reset then tells why.
func Open(dir, identity string) (*Index, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bm25: create %s: %w", dir, err)
	}
	ix := &Index{dir: dir, identity: identity, tail: newTail(), sessions: map[string]uint32{}}
	if err := ix.load(); err != nil {
		if errors.Is(err, errNoManifest) {
			err = nil
		} else {
			ix.reset = err
		}
		ix.closeSegments()
		ix.segs, ix.names, ix.sessions = nil, nil, map[string]uint32{}
		ix.live, ix.tokens, ix.watermark, ix.durable, ix.nextSeg = 0, 0, 0, 0, 0
		if err := ix.clear(); err != nil {
			return nil, err
		}
		if err := ix.writeManifest(); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// Reset returns why Open cleared the folder and started empty (another
// identity, a damaged file), nil when it loaded the folder or the folder
// was new: for the caller's log, and to know it must feed everything
// again.
func (ix *Index) Reset() error { return ix.reset }

// Watermark returns the highest row added (0 when empty). After Open it
// is the highest row made durable by Flush or by sealing: the caller
// adds the rows above it again.
func (ix *Index) Watermark() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.watermark
}

// Len returns the number of live documents.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return int(ix.live)
}

// addChunk bounds how many documents Add inserts per hold of the lock,
// so that searches wait at most about a millisecond behind it.
const addChunk = 256

// Add adds documents to the in-memory tail, in row order; a row not above
// the watermark is refused (nothing of docs is added then). When the
// tail reaches SealDocs documents it is sealed into a segment file, made
// durable with the manifest. When sealing fails (a full disk), Add
// returns the error with the documents before it added and searchable
// (Watermark says up to where); the seal is tried again at the next Add
// or Flush.
func (ix *Index) Add(docs []Doc) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	ix.mu.RLock()
	closed, last := ix.closed, ix.watermark
	ix.mu.RUnlock()
	if closed {
		return errClosed
	}
	for _, d := range docs {
		if d.Row <= last {
			return fmt.Errorf("bm25: add row %d: not above %d (rows must increase)", d.Row, last)
		}
		last = d.Row
	}
	for len(docs) > 0 {
		if ix.tail.docs.n() >= SealDocs {
			// A seal that failed before (its error was returned) is
			// tried again first.
			if err := ix.seal(); err != nil {
				return err
			}
		}
		n := min(len(docs), addChunk, SealDocs-ix.tail.docs.n())
		ix.mu.Lock()
		for i := range docs[:n] {
			d := &docs[i]
			ix.adder.add(ix.tail, d, ix.sessionLocked(d.Session))
			ix.live++
			ix.tokens += int64(ix.tail.docs.lens[ix.tail.docs.n()-1])
			ix.watermark = d.Row
		}
		ix.mu.Unlock()
		docs = docs[n:]
		if ix.tail.docs.n() >= SealDocs {
			if err := ix.seal(); err != nil {
				return err
			}
		}
	}
	return nil
}

// sessionLocked returns the ordinal of session id, adding it.
func (ix *Index) sessionLocked(id string) uint32 {
	if o, ok := ix.sessions[id]; ok {
		return o
	}
	o := uint32(len(ix.names))
	ix.sessions[id] = o
	ix.names = append(ix.names, id)
	return o
}

// Flush makes everything added so far durable: the tail is sealed into a
// segment file and the manifest written (both fsync'd, the manifest
// replaced atomically).
func (ix *Index) Flush() error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if ix.isClosed() {
		return errClosed
	}
	if ix.tail.docs.n() == 0 {
		return nil
	}
	return ix.seal()
}

func (ix *Index) isClosed() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.closed
}

var errClosed = errors.New("bm25: index closed")

// Delete removes rows (forgotten exchanges): they are neither found nor
// counted, as in FTS5 after a contentless delete. Rows not in the index
// are ignored. Tombstones of sealed rows are durable when Delete returns;
// those of the tail need no record (the caller does not add deleted rows
// again).
func (ix *Index) Delete(rows []int64) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return errClosed
	}
	sealed := false
	for _, r := range rows {
		if seg, ord := ix.findSegment(r); seg != nil {
			if seg.deleteLocked(ord) {
				ix.live--
				ix.tokens -= int64(seg.docs.lens[ord])
				sealed = true
			}
			continue
		}
		if ord := ix.tail.docs.ordinal(r); ord >= 0 && setBit(&ix.tailDeleted, ord) {
			ix.live--
			ix.tokens -= int64(ix.tail.docs.lens[ord])
		}
	}
	ix.mu.Unlock()
	if sealed {
		return ix.writeManifest()
	}
	return nil
}

// setBit sets bit i of *bm, growing it; it reports whether the bit was
// clear.
func setBit(bm *[]uint64, i int) bool {
	for len(*bm) <= i>>6 {
		*bm = append(*bm, 0)
	}
	if (*bm)[i>>6]&(1<<(i&63)) != 0 {
		return false
	}
	(*bm)[i>>6] |= 1 << (i & 63)
	return true
}

// findSegment returns the segment holding row and its ordinal there.
func (ix *Index) findSegment(row int64) (*segment, int) {
	for _, s := range ix.segs {
		if s.docs.n() > 0 && row >= s.docs.rows[0] && row <= s.docs.rows[s.docs.n()-1] {
			if ord := s.docs.ordinal(row); ord >= 0 {
				return s, ord
			}
			return nil, -1
		}
	}
	return nil, -1
}

// Search returns the best limit rows (all when limit <= 0) matching any
// of terms, best first, ties by row ascending, scored as FTS5's bm25()
// with the column weights w ({0, 0} means {1, 1}) scores the MATCH
// expression `"t1" OR "t2" OR ...`. terms are the query's phrases in
// query order, each one index term (a term given twice counts twice, as
// in FTS5). A term that unicode61 does not read as exactly one token
// fails with ErrNotOneTerm.
func (ix *Index) Search(terms []string, w [2]float64, f Filter, limit int) ([]Hit, error) {
	w, err := checkWeights(w)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(terms))
	for i, t := range terms {
		if keys[i], err = tokenOf(t); err != nil {
			return nil, err
		}
	}
	if f.Sessions != nil && len(f.Sessions) == 0 {
		return nil, nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, errClosed
	}
	var fs *filterSet
	if f.Sessions != nil || f.Since != 0 || f.Until != 0 {
		fs = &filterSet{since: f.Since, until: f.Until}
		if f.Sessions != nil {
			fs.sessions = make([]uint64, (len(ix.names)+63)/64)
			found := false
			for _, id := range f.Sessions {
				if o, ok := ix.sessions[id]; ok {
					fs.sessions[o>>6] |= 1 << (o & 63)
					found = true
				}
			}
			if !found {
				return nil, nil
			}
		}
	}
	return search(ix.sourcesLocked(), ix.live, ix.tokens, keys, w, fs, limit)
}

// DocFreq returns, for each term (read as Search reads it), the live
// documents holding it, and the live documents in all: what FTS5's
// fts5vocab 'row' and the row count give.
func (ix *Index) DocFreq(terms []string) (nHit []int64, n int64, err error) {
	keys := make([]string, len(terms))
	for i, t := range terms {
		if keys[i], err = tokenOf(t); err != nil {
			return nil, 0, err
		}
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, 0, errClosed
	}
	srcs := ix.sourcesLocked()
	nHit = make([]int64, len(keys))
	for i, k := range keys {
		if nHit[i], err = liveHits(srcs, k); err != nil {
			return nil, 0, err
		}
	}
	return nHit, ix.live, nil
}

// liveHits counts the live documents holding term over srcs.
func liveHits(srcs []source, term string) (int64, error) {
	var n int64
	for s := range srcs {
		p, df, err := srcs[s].lookup(term, srcs[s].deleted != nil, nil)
		if err != nil {
			return 0, err
		}
		n += srcs[s].live(p, df)
	}
	return n, nil
}

// sourcesLocked lists what a search reads: the segments, the tail being
// sealed, the tail.
func (ix *Index) sourcesLocked() []source {
	srcs := make([]source, 0, len(ix.segs)+2)
	for _, s := range ix.segs {
		srcs = append(srcs, source{docs: &s.docs, deleted: s.deleted, lookup: s.lookup})
	}
	for _, t := range []struct {
		t   *tail
		del []uint64
	}{{ix.frozen, ix.frozenDeleted}, {ix.tail, ix.tailDeleted}} {
		if t.t == nil || t.t.docs.n() == 0 {
			continue
		}
		del := t.del
		if len(del) == 0 {
			del = nil
		}
		srcs = append(srcs, source{docs: &t.t.docs, deleted: del, lookup: t.t.lookup})
	}
	return srcs
}

// Close releases the segment mappings. It does not flush: the tail is
// lost unless Flush ran (the caller feeds the rows above Watermark again).
func (ix *Index) Close() error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.tail, ix.frozen = newTail(), nil
	return ix.closeSegments()
}

func trailingZeros(x uint64) int { return bits.TrailingZeros64(x) }
