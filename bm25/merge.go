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
	// Documents, and each input ordinal's new ordinal (-1: deleted).
	var docs docTable
	var tokens int64
	remap := make([][]int32, len(in))
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

	tmp, err := os.CreateTemp(dir, "merge-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("bm25: merge: %w", err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	pw := bufio.NewWriterSize(tmp, 1<<20)
	var (
		blob    []byte
		termEnd []uint32
		postEnd []uint64
		dfs     []uint32
		pbuf    []byte
		postLen uint64
	)
	cur := make([]int, len(in))
	for {
		// The smallest current term.
		var min []byte
		have := false
		for k, s := range in {
			if cur[k] >= s.nTerms {
				continue
			}
			t, ok := s.term(cur[k])
			if !ok {
				return nil, fmt.Errorf("bm25: merge %s: dictionary: %w", s.path, errDamaged)
			}
			if !have || string(t) < string(min) {
				min, have = t, true
			}
		}
		if !have {
			break
		}
		term := string(min)
		pbuf = pbuf[:0]
		prev := int32(-1)
		df := uint32(0)
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
				return nil, fmt.Errorf("bm25: merge: %w", err)
			}
			it := newPostingIter(post, s.docs.n())
			for {
				ord, tu, ta, ok := it.next()
				if !ok {
					break
				}
				if n := remap[k][ord]; n >= 0 {
					pbuf = appendPosting(pbuf, prev, n, tu, ta)
					prev = n
					df++
				}
			}
			if it.bad {
				return nil, fmt.Errorf("bm25: merge %s: postings of %q: %w", s.path, term, errDamaged)
			}
		}
		if df == 0 {
			continue // only deleted documents held it
		}
		if _, err := pw.Write(pbuf); err != nil {
			return nil, fmt.Errorf("bm25: merge: %w", err)
		}
		postLen += uint64(len(pbuf))
		blob = append(blob, term...)
		termEnd = append(termEnd, uint32(len(blob)))
		postEnd = append(postEnd, postLen)
		dfs = append(dfs, df)
	}
	if err := pw.Flush(); err != nil {
		return nil, fmt.Errorf("bm25: merge: %w", err)
	}
	start := func(ends []uint32, i int) uint32 {
		if i == 0 {
			return 0
		}
		return ends[i-1]
	}
	src := &segSource{
		docs: &docs, tokens: tokens, nTerms: len(dfs),
		term: func(i int) string { return string(blob[start(termEnd, i):termEnd[i]]) },
		post: func(i int) (uint64, uint32) {
			s := uint64(0)
			if i > 0 {
				s = postEnd[i-1]
			}
			return postEnd[i] - s, dfs[i]
		},
		writePost: func(w io.Writer) error {
			if _, err := tmp.Seek(0, io.SeekStart); err != nil {
				return err
			}
			n, err := io.Copy(w, tmp)
			if err == nil && uint64(n) != postLen {
				err = fmt.Errorf("postings file: %d bytes, expected %d", n, postLen)
			}
			return err
		},
	}
	size, err := writeSegment(dir, id, src)
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
