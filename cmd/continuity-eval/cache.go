package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/praxis-os/continuity/embed"
)

// EnvCache overrides the embedding cache folder; "off" disables the cache.
const EnvCache = "CONTINUITY_EVAL_CACHE"

// defaultCacheDir is $XDG_CACHE_HOME/continuity-eval, else
// ~/.cache/continuity-eval: never inside the repository.
func defaultCacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, nil
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("embedding cache: %w (set %s)", err, EnvCache)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "continuity-eval"), nil
}

// cachedEmbedder remembers the vectors of an embedder on disk, keyed by
// the embedder's identity (one file per identity) and the SHA-256 of the
// text, for the evaluation only: the dev set has ~29k exchanges, and a
// model embeds them in minutes, not milliseconds. The daemon never uses it.
//
// The file is a sequence of records [32-byte sha256][dim × float32 LE],
// appended under an exclusive flock, so several evaluations can share it;
// a torn last record (a crash mid-append) is cut off by the next writer and
// ignored by readers.
type cachedEmbedder struct {
	embed.Embedder
	path string
	dim  int

	mu           sync.Mutex
	vecs         map[[32]byte][]float32
	hits, misses int
}

func newCachedEmbedder(e embed.Embedder, dir string) (*cachedEmbedder, error) {
	dim := e.Dimension()
	if dim <= 0 {
		return nil, fmt.Errorf("embedding cache: %s has no fixed dimension", e.Identity())
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedding cache: %w", err)
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, e.Identity())
	c := &cachedEmbedder{Embedder: e, path: filepath.Join(dir, name+".vec"), dim: dim, vecs: map[[32]byte][]float32{}}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *cachedEmbedder) recordSize() int { return 32 + 4*c.dim }

func (c *cachedEmbedder) load() error {
	f, err := os.Open(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	defer f.Close()
	rec := make([]byte, c.recordSize())
	for {
		if _, err := io.ReadFull(f, rec); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return fmt.Errorf("embedding cache %s: %w", c.path, err)
		}
		var k [32]byte
		copy(k[:], rec)
		v := make([]float32, c.dim)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(rec[32+4*i:]))
		}
		c.vecs[k] = v
	}
}

// Embed returns cached vectors and embeds (then appends) the rest.
func (c *cachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	var missIdx []int
	var missTexts []string
	c.mu.Lock()
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
		if v, ok := c.vecs[keys[i]]; ok {
			out[i] = append([]float32(nil), v...)
		} else {
			missIdx = append(missIdx, i)
			missTexts = append(missTexts, t)
		}
	}
	c.hits += len(texts) - len(missIdx)
	c.misses += len(missIdx)
	c.mu.Unlock()
	if len(missIdx) == 0 {
		return out, nil
	}
	vecs, err := c.Embedder.Embed(ctx, missTexts)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, len(vecs)*c.recordSize())
	c.mu.Lock()
	for j, i := range missIdx {
		out[i] = vecs[j]
		if len(vecs[j]) != c.dim {
			continue
		}
		c.vecs[keys[i]] = append([]float32(nil), vecs[j]...)
		buf = append(buf, keys[i][:]...)
		for _, x := range vecs[j] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
	}
	c.mu.Unlock()
	if err := c.appendRecords(buf); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *cachedEmbedder) appendRecords(buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	f, err := os.OpenFile(c.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("embedding cache: lock %s: %w", c.path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	end := st.Size() - st.Size()%int64(c.recordSize()) // drop a torn record
	if _, err := f.WriteAt(buf, end); err != nil {
		return fmt.Errorf("embedding cache: append to %s: %w", c.path, err)
	}
	return nil
}

// Probe passes through to a remote embedder.
func (c *cachedEmbedder) Probe(ctx context.Context) error {
	if p, ok := c.Embedder.(embed.Prober); ok {
		return p.Probe(ctx)
	}
	return nil
}

// stats reports the cache hits and misses so far.
func (c *cachedEmbedder) stats() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}
