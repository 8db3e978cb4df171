package bm25

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The manifest says what the folder holds: the identity it was written
// under, the watermark (highest row sealed), the segment files with
// their sizes, the tombstones (deleted rows) and the session table
// (session ordinal -> id, the ordinals the segments store). It is
// replaced as a whole, atomically (temporary file, fsync, rename, fsync
// of the folder), and ends with a CRC-32C of the rest. Files of the
// folder it does not list are leftovers of a crash and are removed on
// Open.
//
//	"BM25MAN1" uvarint(len) identity uvarint(watermark as uint64)
//	uvarint(nextSeg) uvarint(nSegs) {uvarint(id) uvarint(size)}...
//	uvarint(nTombstones) {uvarint(row - previous row)}...
//	uvarint(nSessions) {uvarint(len) bytes}...  crc32c u32 LE

const (
	manifestName  = "manifest"
	manifestMagic = "BM25MAN1"
	// maxManifest bounds what Open reads (a manifest of millions of
	// sessions and tombstones stays far below).
	maxManifest = 1 << 30
)

var errNoManifest = errors.New("bm25: no manifest")

type manifest struct {
	identity  string
	watermark int64
	nextSeg   uint64
	segs      []manifestSeg
	tombs     []int64 // ascending
	sessions  []string
}

type manifestSeg struct {
	id   uint64
	size int64
}

func (m *manifest) encode() []byte {
	b := []byte(manifestMagic)
	str := func(s string) {
		b = appendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(m.identity)
	b = appendUvarint(b, uint64(m.watermark))
	b = appendUvarint(b, m.nextSeg)
	b = appendUvarint(b, uint64(len(m.segs)))
	for _, s := range m.segs {
		b = appendUvarint(b, s.id)
		b = appendUvarint(b, uint64(s.size))
	}
	b = appendUvarint(b, uint64(len(m.tombs)))
	prev := int64(0)
	for _, r := range m.tombs {
		b = appendUvarint(b, uint64(r-prev))
		prev = r
	}
	b = appendUvarint(b, uint64(len(m.sessions)))
	for _, s := range m.sessions {
		str(s)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// decodeManifest parses b; any damage is an error wrapping errDamaged.
func decodeManifest(b []byte) (*manifest, error) {
	bad := func(what string) (*manifest, error) {
		return nil, fmt.Errorf("bm25: manifest: %s: %w", what, errDamaged)
	}
	if len(b) < len(manifestMagic)+4 || string(b[:len(manifestMagic)]) != manifestMagic {
		return bad("not a manifest")
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return bad("checksum mismatch")
	}
	i := len(manifestMagic)
	ok := true
	num := func() uint64 {
		if !ok {
			return 0
		}
		var v uint64
		v, i, ok = uvarint(body, i)
		return v
	}
	str := func() string {
		n := num()
		if !ok || n > uint64(len(body)-i) {
			ok = false
			return ""
		}
		s := string(body[i : i+int(n)])
		i += int(n)
		return s
	}
	// count reads a list length, each element taking at least one byte.
	count := func() int {
		n := num()
		if n > uint64(len(body)-i) {
			ok = false
			return 0
		}
		return int(n)
	}
	m := &manifest{}
	m.identity = str()
	m.watermark = int64(num())
	m.nextSeg = num()
	ns := count()
	for range ns {
		if !ok {
			break
		}
		s := manifestSeg{id: num(), size: int64(num())}
		if s.id >= m.nextSeg || s.size < 0 {
			ok = false
		}
		m.segs = append(m.segs, s)
	}
	nt := count()
	prev := int64(0)
	for range nt {
		if !ok {
			break
		}
		d := num()
		if d == 0 && prev != 0 || d > 1<<62 {
			ok = false
		}
		prev += int64(d)
		m.tombs = append(m.tombs, prev)
	}
	nss := count()
	for range nss {
		if !ok {
			break
		}
		m.sessions = append(m.sessions, str())
	}
	if !ok || i != len(body) {
		return bad("malformed")
	}
	return m, nil
}

// writeManifest records the durable state; the caller holds wmu.
func (ix *Index) writeManifest() error {
	ix.mu.RLock()
	m := manifest{identity: ix.identity, watermark: ix.durable, nextSeg: ix.nextSeg}
	for _, s := range ix.segs {
		m.segs = append(m.segs, manifestSeg{id: s.id, size: s.size})
		if s.deleted == nil {
			continue
		}
		for ord := range s.docs.n() {
			if s.deleted[ord>>6]&(1<<(ord&63)) != 0 {
				m.tombs = append(m.tombs, s.docs.rows[ord])
			}
		}
	}
	m.sessions = append([]string(nil), ix.names...)
	ix.mu.RUnlock()
	return writeFileAtomic(ix.dir, manifestName, m.encode())
}

// writeFileAtomic replaces dir/name with data: temporary file, fsync,
// rename, fsync of dir.
func writeFileAtomic(dir, name string, data []byte) error {
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("bm25: write %s: %w", path, err)
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("bm25: write %s: %w", path, err)
	}
	return syncDir(dir)
}

// load reads the folder's manifest and maps its segments. Any error
// leaves the caller to clear the folder (errNoManifest: a new folder).
func (ix *Index) load() error {
	path := filepath.Join(ix.dir, manifestName)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return errNoManifest
	}
	if err != nil {
		return fmt.Errorf("bm25: %w", err)
	}
	if st.Size() > maxManifest {
		return fmt.Errorf("bm25: manifest %s: %d bytes: %w", path, st.Size(), errDamaged)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("bm25: %w", err)
	}
	m, err := decodeManifest(data)
	if err != nil {
		return fmt.Errorf("%w (%s)", err, path)
	}
	if m.identity != ix.identity {
		return fmt.Errorf("bm25: %s was built for %q, not %q: rebuilt", ix.dir, m.identity, ix.identity)
	}
	ix.names = m.sessions
	for o, id := range m.sessions {
		ix.sessions[id] = uint32(o)
	}
	ix.nextSeg, ix.watermark, ix.durable = m.nextSeg, m.watermark, m.watermark
	listed := map[string]bool{manifestName: true}
	var lastRow int64
	for _, ms := range m.segs {
		s, err := openSegment(ix.dir, ms.id, ms.size)
		if err != nil {
			return err
		}
		ix.segs = append(ix.segs, s)
		listed[segName(ms.id)] = true
		if s.docs.n() > 0 {
			first, last := s.docs.rows[0], s.docs.rows[s.docs.n()-1]
			if first <= lastRow || last > m.watermark {
				return fmt.Errorf("bm25: segment %s: rows %d..%d out of order: %w", s.path, first, last, errDamaged)
			}
			lastRow = last
		}
		ix.live += int64(s.docs.n())
		ix.tokens += s.tokens
	}
	for _, r := range m.tombs {
		s, ord := ix.findSegment(r)
		if s == nil {
			return fmt.Errorf("bm25: manifest: tombstone of row %d, in no segment: %w", r, errDamaged)
		}
		if s.deleteLocked(ord) {
			ix.live--
			ix.tokens -= int64(s.docs.lens[ord])
		}
	}
	// Leftovers of an interrupted seal or manifest write.
	entries, err := os.ReadDir(ix.dir)
	if err != nil {
		return fmt.Errorf("bm25: %w", err)
	}
	for _, e := range entries {
		if ours(e.Name()) && !listed[e.Name()] {
			if err := os.Remove(filepath.Join(ix.dir, e.Name())); err != nil {
				return fmt.Errorf("bm25: remove leftover: %w", err)
			}
		}
	}
	return nil
}

// ours reports whether a file name is one the index writes.
func ours(name string) bool {
	return name == manifestName || strings.HasSuffix(name, ".tmp") ||
		strings.HasPrefix(name, "seg-") && strings.HasSuffix(name, segExt)
}

// clear removes the index's files from the folder (not others).
func (ix *Index) clear() error {
	entries, err := os.ReadDir(ix.dir)
	if err != nil {
		return fmt.Errorf("bm25: clear %s: %w", ix.dir, err)
	}
	for _, e := range entries {
		if ours(e.Name()) {
			if err := os.Remove(filepath.Join(ix.dir, e.Name())); err != nil {
				return fmt.Errorf("bm25: clear %s: %w", ix.dir, err)
			}
		}
	}
	return syncDir(ix.dir)
}

func (ix *Index) closeSegments() error {
	var first error
	for _, s := range ix.segs {
		if err := s.close(); err != nil && first == nil {
			first = fmt.Errorf("bm25: unmap %s: %w", s.path, err)
		}
	}
	ix.segs = nil
	return first
}

// seal writes the tail to a new segment file and records it in the
// manifest; the caller holds wmu. Searches keep reading the tail (as
// frozen) while the file is written.
func (ix *Index) seal() error {
	ix.mu.Lock()
	t, del := ix.tail, ix.tailDeleted
	ix.frozen, ix.frozenDeleted = t, del
	ix.tail, ix.tailDeleted = newTail(), nil
	id := ix.nextSeg
	ix.nextSeg++
	ix.mu.Unlock()

	restore := func() {
		ix.mu.Lock()
		ix.tail, ix.tailDeleted = t, del
		ix.frozen, ix.frozenDeleted = nil, nil
		ix.mu.Unlock()
	}
	size, err := writeSegment(ix.dir, id, tailSource(t))
	if err != nil {
		restore()
		return err
	}
	s, err := openSegment(ix.dir, id, size)
	if err != nil {
		restore()
		return err
	}
	for w, bits := range del {
		for bits != 0 {
			ord := w*64 + trailingZeros(bits)
			bits &= bits - 1
			if ord < s.docs.n() {
				s.deleteLocked(ord)
			}
		}
	}
	ix.mu.Lock()
	ix.segs = append(ix.segs, s)
	ix.frozen, ix.frozenDeleted = nil, nil
	if n := t.docs.n(); n > 0 {
		ix.durable = t.docs.rows[n-1]
	}
	ix.mu.Unlock()
	if err := ix.writeManifest(); err != nil {
		return err
	}
	return ix.merge()
}
