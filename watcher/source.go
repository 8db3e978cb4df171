package watcher

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// DefaultMaxGzipBytes bounds what a compressed rotated log may hold once
// decompressed (Config.MaxGzipBytes): it is read into memory whole.
const DefaultMaxGzipBytes = 256 << 20

// source is what the watcher reads a log from: the file itself, or, for a
// gzip-compressed rotated log (x.jsonl.1.gz), its decompressed content.
// Offsets and fingerprints are of the content: a log compressed after it
// was read is recognised as the same log.
type source interface {
	io.ReaderAt
	// Size is the content's size.
	Size() (int64, error)
	Close() error
}

// plainFile is a log read as it is on disk.
type plainFile struct{ *os.File }

func (p plainFile) Size() (int64, error) {
	fi, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat: %w", err)
	}
	return fi.Size(), nil
}

// gzFile is a gzip-compressed log, decompressed into memory when read
// and released once read to its end (release): a compressed log is
// rotated, never appended to. It is decompressed again only if the file
// changes (changed).
type gzFile struct {
	f     *os.File
	limit int64
	data  []byte // the content; nil while released
	size  int64  // the content's size
	csize int64  // the compressed file's size and time when decompressed
	mtime time.Time
}

// Errors of a compressed log that cannot be read (yet).
var (
	errGzipIncomplete = errors.New("not a complete gzip file yet (being written?); read once it is whole")
	errGzipTooLarge   = errors.New("larger than the limit once decompressed")
)

// openGz decompresses f, failing when it is not a whole gzip file or
// holds more than limit bytes.
func openGz(f *os.File, limit int64) (*gzFile, error) {
	g := &gzFile{f: f, limit: limit}
	if err := g.load(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *gzFile) load() error {
	fi, err := g.f.Stat()
	if err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	zr, err := gzip.NewReader(io.NewSectionReader(g.f, 0, fi.Size()))
	if err == nil {
		var buf bytes.Buffer
		var n int64
		n, err = buf.ReadFrom(io.LimitReader(zr, g.limit+1))
		switch {
		case err == nil && n > g.limit:
			return fmt.Errorf("%w of %d MiB: decompress it (gunzip) to have it read", errGzipTooLarge, g.limit>>20)
		case err == nil:
			g.data, g.size, g.csize, g.mtime = buf.Bytes(), n, fi.Size(), fi.ModTime()
			return nil
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errGzipIncomplete
	}
	return fmt.Errorf("not a readable gzip file: %w", err)
}

func (g *gzFile) ReadAt(p []byte, off int64) (int, error) {
	if g.data == nil {
		if err := g.load(); err != nil {
			return 0, err
		}
	}
	return bytes.NewReader(g.data).ReadAt(p, off)
}

func (g *gzFile) Size() (int64, error) { return g.size, nil }

// release frees the content; it is decompressed again when read.
func (g *gzFile) release() { g.data = nil }

// changed reports whether the compressed file is not the one decompressed.
func (g *gzFile) changed() bool {
	fi, err := g.f.Stat()
	return err != nil || fi.Size() != g.csize || !fi.ModTime().Equal(g.mtime)
}

func (g *gzFile) Close() error {
	g.data = nil
	return g.f.Close()
}
