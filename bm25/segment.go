package bm25

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A segment file holds the documents of one sealed tail (or of merged
// segments), immutable once written. It is mapped read-only, and the
// per-document arrays and the dictionary are read in place, as
// little-endian arrays (the reader refuses big-endian machines). The
// postings, most of the index, are read with pread for the terms a
// search asks (postingsOf): off the Go heap and out of the process's
// resident memory.
//
// Layout, all integers little-endian, arrays 8-byte aligned:
//
//	header (segHeaderSize bytes):
//	  magic "BM25SEG1", nDocs u32, nTerms u32, tokens u64,
//	  offsets u64 of: rows, ts, lens, sess, termOff, postOff, df, blob, post;
//	  blobLen u64, postLen u64, metaCRC u32, headCRC u32
//	rows    [nDocs]int64   event ids, ascending
//	ts      [nDocs]int64   event times
//	lens    [nDocs]uint32  tokens in both columns
//	sess    [nDocs]uint32  session ordinals (the manifest's table)
//	termOff [nTerms+1]uint32  term i is blob[termOff[i]:termOff[i+1]]
//	postOff [nTerms+1]uint64  its postings post[postOff[i]:postOff[i+1]]
//	df      [nTerms]uint32    its postings' count
//	blob    the terms, sorted bytewise, concatenated
//	post    the postings (postings.go)
//
// headCRC covers the header before it; metaCRC every byte from the end of
// the header to the postings (arrays, dictionary, terms). Opening checks
// both, reading the file (not the mapping, so that checking makes no page
// resident in the process). The postings are not checksummed, to keep
// opening fast without reading the bulk of the index;
// their decoder bounds-checks every ordinal and offset, so damage there
// gives wrong postings for a term, never a crash or a read out of range.

const (
	segMagic      = "BM25SEG1"
	segHeaderSize = 8 + 4 + 4 + 8 + 9*8 + 8 + 8 + 4 + 4
	segExt        = ".bm25"
)

type segment struct {
	id     uint64
	path   string
	size   int64
	data   []byte // the mapping
	docs   docTable
	tokens int64 // tokens of all its documents, deleted ones included
	nTerms int
	termOf []uint32
	postOf []uint64
	df     []uint32
	blob   []byte
	post   []byte
	file   *os.File // postings are read from it (postingsOf)
	postAt int64    // where they start
	// Tombstones by ordinal; nil when none.
	deleted  []uint64
	nDeleted int
}

func segName(id uint64) string { return fmt.Sprintf("seg-%016x%s", id, segExt) }

// hostLittleEndian: the in-place arrays assume it.
var hostLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// segSource is what a segment file is written from: documents, and
// terms in sorted order with their postings (a sealed tail, or merged
// segments).
type segSource struct {
	docs   *docTable
	tokens int64
	nTerms int
	term   func(i int) string
	post   func(i int) (size uint64, df uint32)
	// writePost writes every term's postings, in term order.
	writePost func(w io.Writer) error
}

// tailSource is the segment source of a tail.
func tailSource(t *tail) *segSource {
	// Term ids in the order of their terms.
	order := make([]int32, t.terms.len())
	for i := range order {
		order[i] = int32(i)
	}
	keys := t.terms.keys
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(keys[a], keys[b]) })
	return &segSource{
		docs: &t.docs, tokens: t.tokens, nTerms: len(order),
		term: func(i int) string { return keys[order[i]] },
		post: func(i int) (uint64, uint32) {
			p := &t.post[order[i]]
			return uint64(len(p.buf)), p.df
		},
		writePost: func(w io.Writer) error {
			for _, id := range order {
				if _, err := w.Write(t.post[id].buf); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// writeSegment writes src to dir/segName(id), fsync'd, through a
// temporary file renamed into place; it returns the file's size.
func writeSegment(dir string, id uint64, src *segSource) (size int64, err error) {
	path := filepath.Join(dir, segName(id))
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, fmt.Errorf("bm25: create segment: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	lay, total, err := planSegment(src)
	if err != nil {
		return 0, err
	}
	sw := &segWriter{w: bufio.NewWriterSize(f, 1<<20), meta: crc32.New(castagnoli())}
	// The header is written last (it holds metaCRC): leave room.
	if err := sw.out(make([]byte, segHeaderSize), false); err != nil {
		return 0, err
	}
	if err := sw.body(src, &lay); err != nil {
		return 0, err
	}
	if sw.written != total {
		return 0, fmt.Errorf("bm25: segment writer: wrote %d bytes, planned %d", sw.written, total)
	}
	if err := sw.w.Flush(); err != nil {
		return 0, fmt.Errorf("bm25: write segment: %w", err)
	}
	lay.metaCRC = sw.meta.Sum32()
	if _, err := f.WriteAt(lay.header(), 0); err != nil {
		return 0, fmt.Errorf("bm25: write segment header: %w", err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("bm25: sync segment: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("bm25: close segment: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, fmt.Errorf("bm25: install segment: %w", err)
	}
	return int64(total), syncDir(dir)
}

// planSegment lays out the segment file of src (all but metaCRC); total
// is the file's size.
func planSegment(src *segSource) (lay segLayout, total uint64, err error) {
	lay = segLayout{nDocs: src.docs.n(), nTerms: src.nTerms, tokens: src.tokens}
	for i := range lay.nTerms {
		lay.blobLen += uint64(len(src.term(i)))
		p, _ := src.post(i)
		lay.postLen += p
	}
	if lay.blobLen >= 1<<32 {
		return lay, 0, fmt.Errorf("bm25: segment terms take %d bytes: over 4 GiB", lay.blobLen)
	}
	n, nt := uint64(lay.nDocs), uint64(lay.nTerms)
	align := func(x uint64) uint64 { return (x + 7) &^ 7 }
	pos := uint64(segHeaderSize)
	sizes := []uint64{8 * n, 8 * n, 4 * n, 4 * n, 4 * (nt + 1), 8 * (nt + 1), 4 * nt, lay.blobLen, lay.postLen}
	for i, s := range sizes {
		pos = align(pos)
		lay.off[i] = pos
		pos += s
	}
	return lay, pos, nil
}

// header encodes lay as a segment file's header (parseSegHeader reads
// it).
func (lay *segLayout) header() []byte {
	h := make([]byte, segHeaderSize)
	copy(h, segMagic)
	le := binary.LittleEndian
	le.PutUint32(h[8:], uint32(lay.nDocs))
	le.PutUint32(h[12:], uint32(lay.nTerms))
	le.PutUint64(h[16:], uint64(lay.tokens))
	for i, o := range lay.off {
		le.PutUint64(h[24+8*i:], o)
	}
	le.PutUint64(h[96:], lay.blobLen)
	le.PutUint64(h[104:], lay.postLen)
	le.PutUint32(h[112:], lay.metaCRC)
	le.PutUint32(h[116:], crc32.Checksum(h[:116], castagnoli()))
	return h
}

// segWriter writes a segment file's bytes, counting them and
// checksumming those metaCRC covers.
type segWriter struct {
	w       *bufio.Writer
	meta    hash.Hash32
	written uint64
	scratch [8]byte
}

func (sw *segWriter) out(p []byte, crc bool) error {
	if crc {
		sw.meta.Write(p)
	}
	sw.written += uint64(len(p))
	_, err := sw.w.Write(p)
	return err
}

// pad writes zeros up to offset to.
func (sw *segWriter) pad(to uint64) error {
	if to > sw.written {
		return sw.out(make([]byte, to-sw.written), true)
	}
	return nil
}

func (sw *segWriter) put64(v uint64) error {
	binary.LittleEndian.PutUint64(sw.scratch[:], v)
	return sw.out(sw.scratch[:8], true)
}

func (sw *segWriter) put32(v uint32) error {
	binary.LittleEndian.PutUint32(sw.scratch[:4], v)
	return sw.out(sw.scratch[:4], true)
}

// body writes what follows the header, each part at its offset: the
// document arrays, the dictionary, the postings.
func (sw *segWriter) body(src *segSource, lay *segLayout) error {
	n, nt, d := lay.nDocs, lay.nTerms, src.docs
	steps := []func() error{
		func() error { return each(n, func(i int) error { return sw.put64(uint64(d.rows[i])) }) },
		func() error { return each(n, func(i int) error { return sw.put64(uint64(d.ts[i])) }) },
		func() error { return each(n, func(i int) error { return sw.put32(d.lens[i]) }) },
		func() error { return each(n, func(i int) error { return sw.put32(d.sess[i]) }) },
		func() error {
			o := uint32(0)
			if err := sw.put32(0); err != nil {
				return err
			}
			return each(nt, func(i int) error { o += uint32(len(src.term(i))); return sw.put32(o) })
		},
		func() error {
			o := uint64(0)
			if err := sw.put64(0); err != nil {
				return err
			}
			return each(nt, func(i int) error { p, _ := src.post(i); o += p; return sw.put64(o) })
		},
		func() error { return each(nt, func(i int) error { _, df := src.post(i); return sw.put32(df) }) },
		func() error { return each(nt, func(i int) error { return sw.out([]byte(src.term(i)), true) }) },
		func() error {
			cw := &countWriter{w: sw.w}
			err := src.writePost(cw)
			sw.written += cw.n
			return err
		},
	}
	for i, step := range steps {
		if err := sw.pad(lay.off[i]); err != nil {
			return err
		}
		if err := step(); err != nil {
			return fmt.Errorf("bm25: write segment: %w", err)
		}
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n uint64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

// castagnoli is built on first use, not at the start of every command of the
// binary (hash/crc32 fills its SSE4.2 tables then).
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func each(n int, f func(i int) error) error {
	for i := range n {
		if err := f(i); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("bm25: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("bm25: sync %s: %w", dir, err)
	}
	return nil
}

// errDamaged wraps every reason a segment or manifest is refused.
var errDamaged = errors.New("damaged")

// openSegment maps dir/segName(id) and checks it (size: the manifest's
// record of it).
func openSegment(dir string, id uint64, size int64) (*segment, error) {
	path := filepath.Join(dir, segName(id))
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bm25: open segment: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("bm25: stat segment: %w", err)
	}
	if st.Size() != size {
		return nil, fmt.Errorf("bm25: segment %s: %d bytes, the manifest says %d: %w", path, st.Size(), size, errDamaged)
	}
	if size < segHeaderSize || size > 1<<40 {
		return nil, fmt.Errorf("bm25: segment %s: %d bytes: %w", path, size, errDamaged)
	}
	head := make([]byte, segHeaderSize)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("bm25: read segment %s: %w", path, err)
	}
	lay, err := parseSegHeader(head, size)
	if err != nil {
		return nil, fmt.Errorf("bm25: segment %s: %w", path, err)
	}
	// metaCRC, read through the file.
	c := crc32.New(castagnoli())
	if _, err := io.Copy(c, io.NewSectionReader(f, segHeaderSize, int64(lay.off[8])-segHeaderSize)); err != nil {
		return nil, fmt.Errorf("bm25: read segment %s: %w", path, err)
	}
	if c.Sum32() != lay.metaCRC {
		return nil, fmt.Errorf("bm25: segment %s: checksum mismatch: %w", path, errDamaged)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("bm25: map segment %s: %w", path, err)
	}
	s := viewSegment(data, lay)
	s.id, s.path, s.size = id, path, size
	s.file, s.postAt = f, int64(lay.off[8])
	ok = true
	return s, nil
}

// segLayout is a checked header.
type segLayout struct {
	nDocs, nTerms    int
	tokens           int64
	off              [9]uint64
	blobLen, postLen uint64
	metaCRC          uint32
}

// parseSegHeader checks a header against the file size: every section in
// bounds, aligned and of the size its counts imply.
func parseSegHeader(h []byte, size int64) (segLayout, error) {
	var l segLayout
	if !hostLittleEndian {
		return l, errors.New("segment files need a little-endian machine")
	}
	if len(h) < segHeaderSize || string(h[:8]) != segMagic {
		return l, fmt.Errorf("not a segment file: %w", errDamaged)
	}
	le := binary.LittleEndian
	if crc32.Checksum(h[:116], castagnoli()) != le.Uint32(h[116:]) {
		return l, fmt.Errorf("header checksum mismatch: %w", errDamaged)
	}
	l.nDocs, l.nTerms = int(le.Uint32(h[8:])), int(le.Uint32(h[12:]))
	l.tokens = int64(le.Uint64(h[16:]))
	for i := range l.off {
		l.off[i] = le.Uint64(h[24+8*i:])
	}
	l.blobLen, l.postLen = le.Uint64(h[96:]), le.Uint64(h[104:])
	l.metaCRC = le.Uint32(h[112:])
	n, nt := uint64(l.nDocs), uint64(l.nTerms)
	sizes := []uint64{8 * n, 8 * n, 4 * n, 4 * n, 4 * (nt + 1), 8 * (nt + 1), 4 * nt, l.blobLen, l.postLen}
	end := uint64(segHeaderSize)
	for i, s := range sizes {
		if l.off[i] < end || l.off[i]%8 != 0 || l.off[i] > uint64(size) || s > uint64(size)-l.off[i] {
			return l, fmt.Errorf("section %d out of bounds: %w", i, errDamaged)
		}
		end = l.off[i] + s
	}
	if end != uint64(size) || l.tokens < 0 {
		return l, fmt.Errorf("size does not match the header: %w", errDamaged)
	}
	return l, nil
}

// viewSegment makes the segment's arrays views of data (checked by
// parseSegHeader).
func viewSegment(data []byte, l segLayout) *segment {
	s := &segment{data: data, nTerms: l.nTerms, tokens: l.tokens}
	n, nt := l.nDocs, l.nTerms
	s.docs.rows = view[int64](data, l.off[0], n)
	s.docs.ts = view[int64](data, l.off[1], n)
	s.docs.lens = view[uint32](data, l.off[2], n)
	s.docs.sess = view[uint32](data, l.off[3], n)
	s.termOf = view[uint32](data, l.off[4], nt+1)
	s.postOf = view[uint64](data, l.off[5], nt+1)
	s.df = view[uint32](data, l.off[6], nt)
	s.blob = data[l.off[7] : l.off[7]+l.blobLen]
	s.post = data[l.off[8] : l.off[8]+l.postLen]
	return s
}

func view[T any](data []byte, off uint64, n int) []T {
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&data[off])), n)
}

// term returns term i, "" and false when its offsets are damaged.
func (s *segment) term(i int) ([]byte, bool) {
	a, b := s.termOf[i], s.termOf[i+1]
	if a > b || uint64(b) > uint64(len(s.blob)) {
		return nil, false
	}
	return s.blob[a:b], true
}

// find returns the dictionary index of term, -1 when absent.
func (s *segment) find(term string) int {
	lo, hi := 0, s.nTerms
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		t, ok := s.term(m)
		if !ok {
			return -1
		}
		if string(t) < term {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo >= s.nTerms {
		return -1
	}
	if t, ok := s.term(lo); !ok || string(t) != term {
		return -1
	}
	return lo
}

// postingsOf returns the postings of term i. They are read from the file
// (pread), not through the mapping: the page cache keeps them, but they
// never count in the process's resident memory. Through the mapping,
// each page fault mapped a whole page-cache folio (up to 2 MiB here), and
// after a few hundred queries nearly all of the segment files counted in
// the daemon's RSS. The dictionary and the per-document arrays, a small
// part of the files, are still read through the mapping.
//
// The bytes go to the end of *arena when arena is not nil (a search's
// pooled buffer: no allocation, no zeroing once it is large enough;
// slices returned before a growth keep the old array, still valid).
func (s *segment) postingsOf(i int, arena *[]byte) ([]byte, error) {
	a, b := s.postOf[i], s.postOf[i+1]
	if a > b || b > uint64(len(s.post)) {
		return nil, fmt.Errorf("bm25: segment %s: postings offsets: %w", s.path, errDamaged)
	}
	if s.file == nil || a == b {
		return s.post[a:b], nil
	}
	size := int(b - a)
	var buf []byte
	if arena == nil {
		buf = make([]byte, size)
	} else {
		n := len(*arena)
		*arena = slices.Grow(*arena, size)[:n+size]
		buf = (*arena)[n : n+size : n+size]
	}
	if _, err := s.file.ReadAt(buf, s.postAt+int64(a)); err != nil {
		return nil, fmt.Errorf("bm25: read segment %s: %w", s.path, err)
	}
	return buf, nil
}

// lookup returns the document count of term and, when read, its postings
// (nil, 0 when absent), read into arena (see postingsOf).
func (s *segment) lookup(term string, read bool, arena *[]byte) ([]byte, uint32, error) {
	i := s.find(term)
	if i < 0 {
		return nil, 0, nil
	}
	if !read {
		return nil, s.df[i], nil
	}
	p, err := s.postingsOf(i, arena)
	return p, s.df[i], err
}

// deleteLocked sets the tombstone of ordinal ord; it reports whether the
// document was live.
func (s *segment) deleteLocked(ord int) bool {
	if s.deleted == nil {
		s.deleted = make([]uint64, (s.docs.n()+63)/64)
	}
	if !setBit(&s.deleted, ord) {
		return false
	}
	s.nDeleted++
	return true
}

func (s *segment) close() error {
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
	if s.data == nil {
		return nil
	}
	err := unix.Munmap(s.data)
	s.data = nil
	return err
}

// unsafeBytes views a []uint64 as bytes (8-byte aligned, for tests that
// stand in for a mapping).
func unsafeBytes(u []uint64) []byte {
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&u[0])), 8*len(u))
}
