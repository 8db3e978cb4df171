package vectors

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/praxis-os/continuity/index"
)

// A snapshot is the vector space as it is in memory (int8 codes, scales,
// sign codes, rows, sessions, times), in a file beside the index, so that
// a restart reads it in one sequential pass instead of decoding and
// quantising a float32 blob per exchange from SQLite: at 1M exchanges that
// is 2 GB of blobs and a million rows through cgo, against a 600 MB file
// read in one pass (docs/performance.md, "Figures behind design choices", and the
// start-to-ready figures of "Latest figures").
//
// It is derived data, checked before use and rebuilt when stale: it
// records the largest row it holds, how many vectors the index had up to
// that row and the index's deletion counter (index.DB.VectorsUpTo). If
// both still match, the snapshot is the index's space up to that row, and
// only the vectors stored after it are read from SQLite; otherwise the
// space is loaded from SQLite as before. The body is covered by a CRC-32C.
// Only a writing process (the daemon, ingest) writes snapshots, after a
// load that read many vectors from SQLite.

const snapshotMagic = "CVSNAP01"

var (
	// snapshotMin is the smallest space worth a snapshot: below it
	// SQLite loads in well under a second. (Variables for the tests.)
	snapshotMin = 20_000
	// snapshotRewrite is how many vectors read from SQLite after a
	// snapshot make a load write a new one.
	snapshotRewrite = 20_000
)

// snapshotHeader is the JSON header of a snapshot file.
type snapshotHeader struct {
	Identity string `json:"identity"`
	Dim      int    `json:"dim"`
	Count    int    `json:"count"`
	// Rows is how many index rows (exchanges) the space was built from,
	// MaxRow the largest: what the index must still hold for the snapshot
	// to be its space. (Count may differ: an exchange may have several
	// vectors, or none that is not zero.) Snapshots written before it
	// have 0: Count is the rows then.
	Rows     int      `json:"rows,omitempty"`
	MaxRow   int64    `json:"max_row"`
	Epoch    int64    `json:"epoch"`
	Sessions []string `json:"sessions"`
	CRC      uint32   `json:"crc32c"` // of everything after the header
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SnapshotPath is the snapshot file of identity's space for db: in the
// index folder, named by a hash of the identity.
func SnapshotPath(db *index.DB, identity string) string {
	h := sha256.Sum256([]byte(identity))
	return filepath.Join(filepath.Dir(db.Path()), "vectors-"+hex.EncodeToString(h[:8])+".snap")
}

// loadSnapshot reads the snapshot of identity into a new space and
// returns it with the largest row it holds; ok is false (and the error
// says why, for the log) when there is none or it is not the index's.
func loadSnapshot(ctx context.Context, db *index.DB, identity string) (v *Space, maxRow int64, err error) {
	f, err := os.Open(SnapshotPath(db, identity))
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	h, err := readSnapshotHeader(r)
	if err != nil {
		return nil, 0, err
	}
	if h.Identity != identity || h.Dim <= 0 || h.Count <= 0 {
		return nil, 0, fmt.Errorf("snapshot of %q (%d×%d), want %q", h.Identity, h.Count, h.Dim, identity)
	}
	// Whether the snapshot is the index's (a count of the index's
	// vectors up to its largest row) is asked while its body is read:
	// with a cold disk each takes seconds at a million vectors.
	type upTo struct {
		count, epoch int64
		err          error
	}
	check := make(chan upTo, 1)
	go func() {
		var u upTo
		u.count, u.epoch, u.err = db.VectorsUpTo(ctx, identity, h.MaxRow)
		check <- u
	}()
	defer func() {
		u := <-check
		switch {
		case err != nil:
		case u.err != nil:
			v, maxRow, err = nil, 0, u.err
		case u.count != int64(h.rowCount()) || u.epoch != h.Epoch:
			v, maxRow, err = nil, 0, fmt.Errorf("stale snapshot: %d exchanges up to row %d and deletion counter %d, the index has %d and %d",
				h.rowCount(), h.MaxRow, h.Epoch, u.count, u.epoch)
		}
	}()
	v = NewSpace(identity)
	v.dim, v.words = h.Dim, (h.Dim+63)/64
	n := h.Count
	v.rows, v.ts, v.session, v.scale = make([]int64, n), make([]int64, n), make([]int32, n), make([]float32, n)
	v.sessions = h.Sessions
	for i, s := range h.Sessions {
		v.sessIdx[s] = int32(i)
	}
	v.offered, v.maxOffered = h.rowCount(), h.MaxRow
	crc := crc32.New(castagnoli)
	body := io.TeeReader(r, crc)
	for _, a := range []any{v.rows, v.ts, v.session, v.scale} {
		if err := binary.Read(body, binary.LittleEndian, a); err != nil {
			return nil, 0, fmt.Errorf("snapshot: %w", err)
		}
	}
	v.exchanges = distinctRuns(v.rows)
	for _, si := range v.session {
		if si < 0 || int(si) >= len(v.sessions) {
			return nil, 0, fmt.Errorf("snapshot: session index %d of %d", si, len(v.sessions))
		}
	}
	for b := 0; b*blockSize < n; b++ {
		codes, signs, err := v.mem.block(blockSize*v.dim, blockSize*v.words)
		if err != nil {
			return nil, 0, err
		}
		v.blocks, v.signs = append(v.blocks, codes), append(v.signs, signs)
		k := min(blockSize, n-b*blockSize)
		if _, err := io.ReadFull(body, int8Bytes(codes[:k*v.dim])); err != nil {
			return nil, 0, fmt.Errorf("snapshot: %w", err)
		}
		if _, err := io.ReadFull(body, uint64Bytes(signs[:k*v.words])); err != nil {
			return nil, 0, fmt.Errorf("snapshot: %w", err)
		}
	}
	if crc.Sum32() != h.CRC {
		return nil, 0, errors.New("snapshot: checksum mismatch")
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, 0, errors.New("snapshot: trailing data")
	}
	return v, h.MaxRow, nil
}

// rowCount is how many index rows the snapshot's space was built from.
func (h snapshotHeader) rowCount() int {
	if h.Rows > 0 {
		return h.Rows
	}
	return h.Count
}

func readSnapshotHeader(r io.Reader) (snapshotHeader, error) {
	var h snapshotHeader
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapshotMagic {
		return h, fmt.Errorf("not a vector snapshot (%v)", err)
	}
	var size uint32
	if err := binary.Read(r, binary.LittleEndian, &size); err != nil || size > 1<<30 {
		return h, fmt.Errorf("snapshot header: %v (size %d)", err, size)
	}
	raw := make([]byte, size)
	if _, err := io.ReadFull(r, raw); err != nil {
		return h, fmt.Errorf("snapshot header: %w", err)
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return h, fmt.Errorf("snapshot header: %w", err)
	}
	return h, nil
}

// writeSnapshot writes v's snapshot for db (a temporary file renamed into
// place, 0600). It holds v's read lock while it writes: searches go on,
// additions wait.
func writeSnapshot(ctx context.Context, db *index.DB, v *Space) error {
	_, before, err := db.VectorsUpTo(ctx, v.identity, 0)
	if err != nil {
		return err
	}
	path := SnapshotPath(db, v.identity)
	// Left by a process that stopped while writing: only the index's
	// writer writes snapshots, one at a time.
	if old, _ := filepath.Glob(filepath.Join(filepath.Dir(path), snapshotTempPattern)); len(old) > 0 {
		for _, o := range old {
			os.Remove(o)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), snapshotTempPattern)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	v.mu.RLock()
	h := snapshotHeader{Identity: v.identity, Dim: v.dim, Count: len(v.rows), Rows: v.offered, MaxRow: v.maxOffered, Epoch: before,
		Sessions: v.sessions[:len(v.sessions):len(v.sessions)]}
	// The body is written twice: once to checksum it (the header comes
	// first), once to the file. Both passes read memory only.
	crc := crc32.New(castagnoli)
	err = v.writeSnapshotBody(crc)
	h.CRC = crc.Sum32()
	if err == nil {
		err = writeSnapshotFile(ctxWriter{ctx, tmp}, h, v)
	}
	count, maxRow := h.Rows, h.MaxRow
	v.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if h.Count == 0 || h.Dim == 0 {
		return nil
	}
	// The space must be the index's up to its largest row, as a later
	// load will check: vectors stored but not added yet, or a session
	// deleted meanwhile, make the snapshot useless; don't leave it.
	n, after, err := db.VectorsUpTo(ctx, v.identity, maxRow)
	if err != nil {
		return err
	}
	if n != int64(count) || after != before {
		return fmt.Errorf("snapshot: the index changed while it was written (%d exchanges with vectors against %d); not kept", n, count)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	// A forget that ran between the check and the rename removed the
	// snapshots before this one was in place: it must not stay behind
	// with the forgotten sessions' ids and vectors.
	if _, after, err := db.VectorsUpTo(ctx, v.identity, 0); err != nil || after != before {
		os.Remove(path)
		return fmt.Errorf("snapshot: the index changed while it was written; not kept")
	}
	return nil
}

// A snapshot is written into a temporary file of this pattern in the
// cache folder, renamed into place when complete. A one-shot process
// (ingest) that loaded a space must not exit in the middle and leave that
// file behind (the next writer would remove it, but until then it holds
// up to hundreds of MB of vectors, forgotten sessions' included): it
// cancels the writer, which notices at its next megabyte and removes its
// file, and waits for it (Worker.Wait); the next daemon start loads from
// the index and writes the snapshot then. Only the holder of the index
// lock writes snapshots, so a temporary file found before a load is a
// killed process's leftover (RemoveSnapshotTemps).
const snapshotTempPattern = ".vectors-*.tmp"

// RemoveSnapshotTemps removes the temporary snapshot files in the cache
// folder dir: a killed process's leftovers.
func RemoveSnapshotTemps(dir string) error {
	return removeFiles(dir, snapshotTempPattern, "an unfinished vector snapshot")
}

// RemoveSnapshots deletes every snapshot of db's vector spaces. Forget
// calls it: a stale snapshot is never used, but it would keep the
// forgotten sessions' ids and vectors on disk until the next one replaces
// it.
func RemoveSnapshots(db *index.DB) error {
	return removeFiles(filepath.Dir(db.Path()), "vectors-*.snap", "vector snapshot")
}

// removeFiles removes the files of dir whose names match pattern; what
// names them in an error.
func removeFiles(dir, pattern, what string) error {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", what, err)
		}
	}
	return nil
}

func writeSnapshotFile(f io.Writer, h snapshotHeader, v *Space) error {
	raw, err := json.Marshal(h)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(snapshotMagic)
	binary.Write(w, binary.LittleEndian, uint32(len(raw)))
	w.Write(raw)
	if err := v.writeSnapshotBody(w); err != nil {
		return err
	}
	return w.Flush()
}

// ctxWriter is a writer that fails once ctx is done: a snapshot being
// written stops at its next megabyte when its process stops.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// writeSnapshotBody writes the arrays of v to w. Callers hold v.mu.
func (v *Space) writeSnapshotBody(w io.Writer) error {
	for _, a := range []any{v.rows, v.ts, v.session, v.scale} {
		if err := binary.Write(w, binary.LittleEndian, a); err != nil {
			return err
		}
	}
	n := len(v.rows)
	for b := 0; b*blockSize < n; b++ {
		k := min(blockSize, n-b*blockSize)
		if _, err := w.Write(int8Bytes(v.blocks[b][:k*v.dim])); err != nil {
			return err
		}
		if _, err := w.Write(uint64Bytes(v.signs[b][:k*v.words])); err != nil {
			return err
		}
	}
	return nil
}

func int8Bytes(s []int8) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s))
}

// uint64Bytes is s as bytes, in the machine's byte order (a snapshot is
// read where it was written).
func uint64Bytes(s []uint64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*len(s))
}
