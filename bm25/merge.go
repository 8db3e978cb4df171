package bm25

import (
	"bufio"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
)

// Merging. Each Flush seals the tail, however small, into a segment file;
// a caller that flushes every few seconds would leave thousands of tiny
// segments, each costing every search a dictionary look-up per term. So
// after a seal, when the newest segments include mergeFanIn or more of
// one size tier (a power of 8 of live documents) or smaller, they are
// merged into one: a document is rewritten about log8(SealDocs) times at
// most. Segments of SealDocs live documents or more are left as they are
// (a merge's cost stays bounded; at 1M exchanges that is 16 segments).
// A merge also drops the deleted documents of the segments it rewrites.
//
// The merge streams: a k-way merge of the sorted dictionaries, postings
// decoded, renumbered and re-encoded term by term into a temporary file,
// so its heap is the merged dictionary and the document arrays, not the
// postings.

// mergeFanIn is how many segments of a tier trigger a merge.
const mergeFanIn = 8

func tier(n int) int { return bits.Len(uint(n)) / 3 }

func (s *segment) live() int { return s.docs.n() - s.nDeleted }

// mergeRun returns how many of the newest segments to merge (0: none).
// The caller holds wmu (the segment list changes only under it).
func (ix *Index) mergeRun() int {
	segs := ix.segs
	if len(segs) < mergeFanIn {
		return 0
	}
	last := segs[len(segs)-1]
	if last.live() >= SealDocs {
		return 0
	}
	t := tier(last.live())
	k := 0
	for i := len(segs) - 1; i >= 0; i-- {
		if l := segs[i].live(); l >= SealDocs || tier(l) > t {
			break
		}
		k++
	}
	if k >= mergeFanIn {
		return k
	}
	return 0
}

// merge merges segments while mergeRun finds a run; the caller holds
// wmu.
func (ix *Index) merge() error {
	for {
		k := ix.mergeRun()
		if k == 0 {
			return nil
		}
		in := ix.segs[len(ix.segs)-k:]
		ix.mu.Lock()
		id := ix.nextSeg
		ix.nextSeg++
		ix.mu.Unlock()
		out, err := mergeSegments(ix.dir, id, in)
		if err != nil {
			return err
		}
		ix.mu.Lock()
		ix.segs = append(ix.segs[:len(ix.segs)-k:len(ix.segs)-k], out)
		ix.mu.Unlock()
		if err := ix.writeManifest(); err != nil {
			return err
		}
		// No search holds the old segments now (they were replaced under
		// the write lock, which waits for every reader).
		for _, s := range in {
			if err := s.close(); err != nil {
				return fmt.Errorf("bm25: unmap %s: %w", s.path, err)
			}
			if err := os.Remove(s.path); err != nil {
				return fmt.Errorf("bm25: remove merged segment: %w", err)
			}
		}
	}
}

// mergeSegments writes the live documents of in (consecutive segments,
// in row order) to a new segment file id and opens it.
func mergeSegments(dir string, id uint64, in []*segment) (*segment, error) {
	docs, tokens, remap := liveDocs(in)
	tmp, err := os.CreateTemp(dir, "merge-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("bm25: merge: %w", err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	m := &mergedTerms{pw: bufio.NewWriterSize(tmp, 1<<20)}
	if err := m.merge(in, remap); err != nil {
		return nil, err
	}
	size, err := writeSegment(dir, id, m.source(&docs, tokens, tmp))
	if err != nil {
		return nil, err
	}
	s, err := openSegment(dir, id, size)
	if err != nil {
		os.Remove(filepath.Join(dir, segName(id)))
		return nil, err
	}
	return s, nil
}

// liveDocs returns the live documents of in, in order, their tokens, and
// each input ordinal's new ordinal (-1: deleted).
func liveDocs(in []*segment) (docs docTable, tokens int64, remap [][]int32) {
	remap = make([][]int32, len(in))
	for k, s := range in {
		remap[k] = make([]int32, s.docs.n())
		for ord := range s.docs.n() {
			if s.deleted != nil && s.deleted[ord>>6]&(1<<(ord&63)) != 0 {
				remap[k][ord] = -1
				continue
			}
			remap[k][ord] = int32(docs.n())
			docs.rows = append(docs.rows, s.docs.rows[ord])
			docs.ts = append(docs.ts, s.docs.ts[ord])
			docs.lens = append(docs.lens, s.docs.lens[ord])
			docs.sess = append(docs.sess, s.docs.sess[ord])
			tokens += int64(s.docs.lens[ord])
		}
	}
	return docs, tokens, remap
}

// mergedTerms is the merged dictionary, built term by term while the
// merged postings are written to pw.
type mergedTerms struct {
	pw      *bufio.Writer
	blob    []byte   // the terms, end to end
	termEnd []uint32 // each term's end in blob
	postEnd []uint64 // each term's postings' end in the postings
	dfs     []uint32
	postLen uint64 // bytes written to pw
	pbuf    []byte // one term's postings, reused
}

// merge merges the dictionaries and postings of in: a k-way merge of the
// sorted dictionaries, the postings of each term renumbered with remap.
// A term only deleted documents held is left out.
func (m *mergedTerms) merge(in []*segment, remap [][]int32) error {
	cur := make([]int, len(in)) // each input's next term
	for {
		term, ok, err := smallestTerm(in, cur)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		df, err := m.mergeTerm(in, cur, remap, term)
		if err != nil {
			return err
		}
		if df == 0 {
			continue // only deleted documents held it
		}
		if _, err := m.pw.Write(m.pbuf); err != nil {
			return fmt.Errorf("bm25: merge: %w", err)
		}
		m.postLen += uint64(len(m.pbuf))
		m.blob = append(m.blob, term...)
		m.termEnd = append(m.termEnd, uint32(len(m.blob)))
		m.postEnd = append(m.postEnd, m.postLen)
		m.dfs = append(m.dfs, df)
	}
	if err := m.pw.Flush(); err != nil {
		return fmt.Errorf("bm25: merge: %w", err)
	}
	return nil
}

// smallestTerm is the smallest of the inputs' current terms; ok is false
// when every input is at its end.
func smallestTerm(in []*segment, cur []int) (term string, ok bool, err error) {
	var min []byte
	for k, s := range in {
		if cur[k] >= s.nTerms {
			continue
		}
		t, tok := s.term(cur[k])
		if !tok {
			return "", false, fmt.Errorf("bm25: merge %s: dictionary: %w", s.path, errDamaged)
		}
		if !ok || string(t) < string(min) {
			min, ok = t, true
		}
	}
	return string(min), ok, nil
}

// mergeTerm merges into m.pbuf the postings of term from the inputs whose
// current term it is, moving them past it, and returns its document
// frequency in the merged segment.
func (m *mergedTerms) mergeTerm(in []*segment, cur []int, remap [][]int32, term string) (df uint32, err error) {
	m.pbuf = m.pbuf[:0]
	prev := int32(-1)
	for k, s := range in {
		if cur[k] >= s.nTerms {
			continue
		}
		if t, _ := s.term(cur[k]); string(t) != term {
			continue
		}
		post, err := s.postingsOf(cur[k], nil)
		cur[k]++
		if err != nil {
			return 0, fmt.Errorf("bm25: merge: %w", err)
		}
		it := newPostingIter(post, s.docs.n())
		for {
			ord, tu, ta, ok := it.next()
			if !ok {
				break
			}
			if n := remap[k][ord]; n >= 0 {
				m.pbuf = appendPosting(m.pbuf, prev, n, tu, ta)
				prev = n
				df++
			}
		}
		if it.bad {
			return 0, fmt.Errorf("bm25: merge %s: postings of %q: %w", s.path, term, errDamaged)
		}
	}
	return df, nil
}

// source is the merged segment's source; its postings are copied from
// tmp, where merge wrote them.
func (m *mergedTerms) source(docs *docTable, tokens int64, tmp *os.File) *segSource {
	return &segSource{
		docs: docs, tokens: tokens, nTerms: len(m.dfs),
		term: func(i int) string {
			start := uint32(0)
			if i > 0 {
				start = m.termEnd[i-1]
			}
			return string(m.blob[start:m.termEnd[i]])
		},
		post: func(i int) (uint64, uint32) {
			s := uint64(0)
			if i > 0 {
				s = m.postEnd[i-1]
			}
			return m.postEnd[i] - s, m.dfs[i]
		},
		writePost: func(w io.Writer) error {
			if _, err := tmp.Seek(0, io.SeekStart); err != nil {
				return err
			}
			n, err := io.Copy(w, tmp)
			if err == nil && uint64(n) != m.postLen {
				err = fmt.Errorf("postings file: %d bytes, expected %d", n, m.postLen)
			}
			return err
		},
	}
}
