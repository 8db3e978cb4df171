package bm25

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// FuzzManifest: any bytes are a manifest or an error wrapping
// errDamaged, never a panic; what decodes encodes back the same.
func FuzzManifest(f *testing.F) {
	good := (&manifest{identity: "id", watermark: 42, nextSeg: 3,
		segs: []manifestSeg{{0, 1000}, {2, 2000}}, tombs: []int64{5, 9, 40}, sessions: []string{"a", "b"}}).encode()
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte(manifestMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeManifest(b)
		if err != nil {
			return
		}
		if string(m.encode()) != string(b) {
			t.Fatalf("decoded manifest does not encode back")
		}
	})
}

// fuzzSegment writes a small real segment and returns its bytes.
func fuzzSegment(tb testing.TB) []byte {
	dir := tb.TempDir()
	tl := newTail()
	var a tailAdder
	for i, text := range []string{"alpha beta", "beta gamma gamma", "", "delta alpha alpha alpha", "zeta"} {
		a.add(tl, &Doc{Row: int64(10 + i), TS: int64(i), User: text, AI: "beta " + text}, uint32(i%2))
	}
	if _, err := writeSegment(dir, 0, tailSource(tl)); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, segName(0)))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzSegment: a segment file's bytes, damaged anywhere, either fail the
// header checks or give a segment whose look-ups and postings never
// read out of range. The checksums are fixed up after the damage, so
// that the fuzzer reaches the parsing behind them.
func FuzzSegment(f *testing.F) {
	seg := fuzzSegment(f)
	f.Add(seg, false)
	f.Add(seg, true)
	f.Add(seg[:segHeaderSize], true)
	f.Fuzz(func(t *testing.T, b []byte, fix bool) {
		if fix && len(b) >= segHeaderSize {
			le := binary.LittleEndian
			postAt := le.Uint64(b[24+8*8:])
			if postAt >= segHeaderSize && postAt <= uint64(len(b)) {
				le.PutUint32(b[112:], crc32.Checksum(b[segHeaderSize:postAt], castagnoli()))
			}
			le.PutUint32(b[116:], crc32.Checksum(b[:116], castagnoli()))
		}
		// An aligned copy, as a mapping would be.
		buf := make([]uint64, (len(b)+7)/8+1)
		data := unsafeBytes(buf)[:len(b)]
		copy(data, b)
		lay, err := parseSegHeader(data, int64(len(data)))
		if err != nil {
			return
		}
		s := viewSegment(data, lay)
		for _, term := range []string{"alpha", "beta", "gamma", "zeta", "", "zzz", "a"} {
			p, _, err := s.lookup(term, true, nil)
			if err != nil {
				continue
			}
			it := newPostingIter(p, s.docs.n())
			for {
				ord, _, _, ok := it.next()
				if !ok {
					break
				}
				_ = s.docs.lens[ord] + s.docs.sess[ord]
				_ = s.docs.rows[ord] + s.docs.ts[ord]
			}
		}
		for i := range s.nTerms {
			s.term(i)
		}
		// And a search over it, as the index would run one.
		src := []source{{docs: &s.docs, lookup: s.lookup}}
		search(src, int64(s.docs.n())+1, lay.tokens+1, []string{"alpha", "beta", "beta"}, [2]float64{5, 1}, &filterSet{sessions: []uint64{1}}, 3)
	})
}

// FuzzPostings: any bytes decode as postings without a panic, ordinals
// ascending and below nDocs.
func FuzzPostings(f *testing.F) {
	var b []byte
	b = appendPosting(b, -1, 0, 1, 0)
	b = appendPosting(b, 0, 5, 3, 7)
	b = appendPosting(b, 5, 6, 0, 1)
	f.Add(b, 10)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		it := newPostingIter(b, n)
		prev := int32(-1)
		for {
			ord, _, _, ok := it.next()
			if !ok {
				break
			}
			if ord <= prev || int(ord) >= n {
				t.Fatalf("ordinal %d after %d, of %d", ord, prev, n)
			}
			prev = ord
		}
	})
}

// TestPostingsRoundTrip: what appendPosting writes, the iterator reads.
func TestPostingsRoundTrip(t *testing.T) {
	type p struct {
		ord    int32
		tu, ta uint32
	}
	in := []p{{0, 1, 0}, {1, 0, 1}, {2, 1, 1}, {40, 2, 0}, {41, 0, 9}, {5000, 300, 70000}, {1 << 20, 1, 0}}
	var b []byte
	prev := int32(-1)
	for _, x := range in {
		b = appendPosting(b, prev, x.ord, x.tu, x.ta)
		prev = x.ord
	}
	it := newPostingIter(b, 1<<20+1)
	for _, x := range in {
		ord, tu, ta, ok := it.next()
		if !ok || ord != x.ord || tu != x.tu || ta != x.ta {
			t.Fatalf("read %d %d %d %v, want %+v", ord, tu, ta, ok, x)
		}
	}
	if _, _, _, ok := it.next(); ok || it.bad {
		t.Fatal("postings did not end cleanly")
	}
}
