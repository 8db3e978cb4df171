package watcher

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"time"
)

// tail follows one open file for one generation. It reads complete lines
// from the committed offset on, keeping at most maxLine bytes of an
// unfinished line in memory; a longer line is skipped to its newline and
// reported as Oversize with a bounded excerpt.
//
// The fingerprints it commits are computed from the bytes it consumed, never
// re-read, so they always describe the lines that were indexed.
type tail struct {
	gen  Generation // committed state
	f    source
	name string // current name in the folder
	// sealed: a compressed log read to its end; not read again (its
	// content released) unless the file changes.
	sealed bool

	// Read state, ahead of gen by the lines of the batch being built.
	pos       int64  // next byte to read
	line      int64  // complete lines before lineStart
	lineStart int64  // offset of the first byte of the unfinished line
	partial   []byte // the unfinished line (when not skipping)
	skipping  bool   // the unfinished line is over maxLine: not buffered
	skipLimit int    // the maxLine it is over
	skipHead  []byte // first FingerprintSize bytes of a skipped line
	skipTail  []byte // last FingerprintSize bytes of a skipped line
	head      []byte // first FingerprintSize bytes of the generation, up to lineStart
	win       []byte // last FingerprintSize bytes before lineStart

	vanishedAt time.Time    // when its name left the folder; zero while present
	held       *pendingFile // being rewritten in place (see Watcher.rewriting)
}

// errRewritten means the file no longer holds the generation's committed
// bytes: it was truncated or rewritten in place.
var errRewritten = errors.New("file truncated or rewritten")

// openTail starts following f for generation g, after checking that f still
// holds g's committed bytes (errRewritten otherwise).
func openTail(f source, name string, g Generation) (*tail, error) {
	t := &tail{gen: g, f: f, name: name}
	if err := t.load(); err != nil {
		return nil, err
	}
	return t, nil
}

// load resets the read state to the committed state, reading the
// fingerprinted bytes back from the file and checking them.
func (t *tail) load() error {
	g := t.gen
	t.pos, t.line, t.lineStart = g.Offset, g.Line, g.Offset
	t.partial, t.skipping, t.skipHead, t.skipTail = nil, false, nil, nil
	var err error
	if t.head, err = readExact(t.f, 0, g.Head.Len); err != nil {
		return err
	}
	if t.win, err = readExact(t.f, g.Offset-int64(g.Tail.Len), g.Tail.Len); err != nil {
		return err
	}
	if sum(t.head) != g.Head || sum(t.win) != g.Tail {
		return errRewritten
	}
	return nil
}

func readExact(f io.ReaderAt, off int64, n int) ([]byte, error) {
	buf := make([]byte, n)
	if n == 0 {
		return buf, nil
	}
	if _, err := f.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errRewritten
		}
		return nil, fmt.Errorf("read %d bytes at %d: %w", n, off, err)
	}
	return buf, nil
}

func sum(p []byte) Fingerprint {
	return Fingerprint{Len: len(p), Sum: crc64.Checksum(p, crcTable())}
}

// check verifies, cheaply, that the file still holds the committed bytes:
// it is not shorter than what was read, and the bytes before the committed
// offset are unchanged.
func (t *tail) check() error {
	size, err := t.f.Size()
	if err != nil {
		return err
	}
	if size < t.pos {
		return errRewritten
	}
	if t.gen.Tail.Len > 0 {
		fp, err := fingerprintAt(t.f, t.gen.Offset-int64(t.gen.Tail.Len), t.gen.Tail.Len)
		if err != nil || fp != t.gen.Tail {
			return errRewritten
		}
	}
	return nil
}

// readBatch reads complete lines until end of file, maxLines lines or about
// maxBytes of line data, and returns them as a batch whose generation state
// is advanced past them. more is true when the limits cut the batch. When
// nothing completed, b.Gen.Offset equals t.gen.Offset.
func (t *tail) readBatch(buf []byte, maxLine, maxLines, maxBytes int) (b Batch, more bool, err error) {
	var dataBytes int
	defer func() {
		b.Gen = t.gen
		b.Gen.Offset, b.Gen.Line = t.lineStart, t.line
		b.Gen.Head, b.Gen.Tail = sum(t.head), sum(t.win)
		b.More = more
		if f, ok := t.f.(interface{ Stat() (os.FileInfo, error) }); ok && len(b.Lines) > 0 {
			if fi, err := f.Stat(); err == nil {
				b.ModTime = fi.ModTime()
			}
		}
	}()
	for {
		n, rerr := t.f.ReadAt(buf, t.pos)
		chunk := buf[:n]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				t.addPartial(chunk, maxLine)
				t.pos += int64(len(chunk))
				break
			}
			t.addPartial(chunk[:i+1], maxLine)
			t.pos += int64(i) + 1
			chunk = chunk[i+1:]
			if ln, ok := t.endLine(); ok {
				b.Lines = append(b.Lines, ln)
				dataBytes += len(ln.Data)
				if len(b.Lines) >= maxLines || dataBytes >= maxBytes {
					return b, true, nil
				}
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return b, false, nil
			}
			return b, false, fmt.Errorf("read at %d: %w", t.pos, rerr)
		}
		if n == 0 {
			return b, false, nil
		}
	}
}

// addPartial appends p to the unfinished line, switching to skipping mode
// when it grows over maxLine (the newline itself does not count).
func (t *tail) addPartial(p []byte, maxLine int) {
	if !t.skipping {
		content := len(t.partial) + len(p)
		if len(p) > 0 && p[len(p)-1] == '\n' {
			content--
		}
		if content <= maxLine {
			t.partial = append(t.partial, p...)
			return
		}
		t.skipping, t.skipLimit = true, maxLine
		t.skipHead = keepHead(nil, t.partial)
		t.skipTail = keepTail(nil, t.partial)
		t.partial = t.partial[:0]
	}
	t.skipHead = keepHead(t.skipHead, p)
	t.skipTail = keepTail(t.skipTail, p)
}

// endLine closes the line that ends at t.pos. It returns the line unless it
// is blank.
func (t *tail) endLine() (Line, bool) {
	t.line++
	ln := Line{Number: t.line, Start: t.lineStart, End: t.pos}
	var first, last []byte // raw bytes for the fingerprints
	if t.skipping {
		ln.Oversize, ln.Limit = true, t.skipLimit
		ln.Data = bytes.Clone(t.skipHead[:min(len(t.skipHead), ExcerptSize)])
		first, last = t.skipHead, t.skipTail
	} else {
		first, last = t.partial, t.partial
		data := bytes.TrimSuffix(bytes.TrimSuffix(t.partial, []byte{'\n'}), []byte{'\r'})
		if ln.Start == 0 {
			data, ln.BOM = bytes.CutPrefix(data, []byte(ByteOrderMark))
		}
		if len(bytes.TrimSpace(data)) > 0 {
			ln.Data = bytes.Clone(data)
		}
	}
	t.head = keepHead(t.head, first)
	t.win = keepTail(t.win, last)
	t.lineStart = t.pos
	t.partial, t.skipping, t.skipHead, t.skipTail = t.partial[:0], false, nil, nil
	return ln, ln.Oversize || ln.Data != nil
}

// keepHead appends p to dst up to FingerprintSize bytes in all.
func keepHead(dst, p []byte) []byte {
	if room := FingerprintSize - len(dst); room > 0 {
		dst = append(dst, p[:min(room, len(p))]...)
	}
	return dst
}

// keepTail appends p to dst and keeps the last FingerprintSize bytes.
func keepTail(dst, p []byte) []byte {
	if len(p) >= FingerprintSize {
		return append(dst[:0], p[len(p)-FingerprintSize:]...)
	}
	dst = append(dst, p...)
	if extra := len(dst) - FingerprintSize; extra > 0 {
		dst = append(dst[:0], dst[extra:]...)
	}
	return dst
}
