// Package embedcache remembers an embedder's vectors on disk, keyed by the
// embedder's identity and the SHA-256 of the text, for the development
// tools only (continuity-eval, continuity-bench): a sentence-embedding
// model embeds the ~25k exchanges of the LongMemEval dev set in minutes,
// and both tools embed the same texts again and again. The daemon never
// uses it: its vectors live in the index.
package embedcache

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

// EnvDir overrides the cache folder; "off" disables the cache. (The name
// predates continuity-bench's use of the same cache.)
const EnvDir = "CONTINUITY_EVAL_CACHE"

// Disabled reports whether EnvDir turns the cache off.
func Disabled() bool { return os.Getenv(EnvDir) == "off" }

// DefaultDir is $CONTINUITY_EVAL_CACHE, else
// $XDG_CACHE_HOME/continuity-eval, else ~/.cache/continuity-eval: never
// inside the repository.
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("embedding cache: %w (set %s)", err, EnvDir)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "continuity-eval"), nil
}

// Embedder is an embedder whose vectors are remembered on disk, one file
// per identity in a folder.
//
// The file is a sequence of records [32-byte sha256][dim × float32 LE],
// appended under an exclusive flock, so several processes can share it; a
// torn last record (a crash mid-append) is cut off by the next writer and
// ignored by readers.
type Embedder struct {
	embed.Embedder
	path string
	dim  int

	mu     sync.Mutex
	vecs   map[[32]byte][]float32
	seen   map[[32]byte]struct{} // distinct texts asked for
	hits   int
	misses int
}

// Stats counts what Embed was asked for since New.
type Stats struct {
	Hits     int // texts answered from the cache
	Misses   int // texts embedded (a text repeated within one call counts once)
	Distinct int // distinct texts among all those asked for
}

// New returns e behind the cache file for e's identity in dir (created
// 0700; the file 0600). e must have a fixed dimension (see embed.Resolve).
func New(e embed.Embedder, dir string) (*Embedder, error) {
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
	c := &Embedder{Embedder: e, path: filepath.Join(dir, name+".vec"), dim: dim,
		vecs: map[[32]byte][]float32{}, seen: map[[32]byte]struct{}{}}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// EmbedQueries embeds search queries. For an embedder that embeds them
// differently from the texts searched (embed.QueryEmbedder: an hf model's
// query prefix), it asks the embedder, uncached (queries are few, and
// must not share entries with the passages of the same text); for the
// others it is Embed, cached.
func (c *Embedder) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	if _, ok := c.Embedder.(embed.QueryEmbedder); ok {
		return embed.EmbedQueries(ctx, c.Embedder, texts)
	}
	return c.Embed(ctx, texts)
}

// Path is the cache file.
func (c *Embedder) Path() string { return c.path }

// Len is the number of vectors in the cache.
func (c *Embedder) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vecs)
}

// Stats reports the cache's use so far.
func (c *Embedder) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Hits: c.hits, Misses: c.misses, Distinct: len(c.seen)}
}

func (c *Embedder) recordSize() int { return 32 + 4*c.dim }

func (c *Embedder) load() error {
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

// Embed returns cached vectors and embeds (then appends) the rest; a text
// repeated within texts is embedded once.
func (c *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	var missTexts []string
	var missKeys [][32]byte
	missOf := map[[32]byte]int{} // key -> index in missTexts
	c.mu.Lock()
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
		c.seen[keys[i]] = struct{}{}
		if v, ok := c.vecs[keys[i]]; ok {
			out[i] = append([]float32(nil), v...)
			c.hits++
		} else if _, ok := missOf[keys[i]]; !ok {
			missOf[keys[i]] = len(missTexts)
			missTexts = append(missTexts, t)
			missKeys = append(missKeys, keys[i])
		}
	}
	c.misses += len(missTexts)
	c.mu.Unlock()
	if len(missTexts) == 0 {
		return out, nil
	}
	vecs, err := c.Embedder.Embed(ctx, missTexts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(missTexts) {
		return nil, fmt.Errorf("embedding cache: %s returned %d vectors for %d texts", c.Identity(), len(vecs), len(missTexts))
	}
	for i := range texts {
		if out[i] == nil {
			out[i] = append([]float32(nil), vecs[missOf[keys[i]]]...)
		}
	}
	buf := make([]byte, 0, len(vecs)*c.recordSize())
	c.mu.Lock()
	for j, v := range vecs {
		if len(v) != c.dim {
			continue
		}
		c.vecs[missKeys[j]] = append([]float32(nil), v...)
		buf = append(buf, missKeys[j][:]...)
		for _, x := range v {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
	}
	c.mu.Unlock()
	if err := c.appendRecords(buf); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Embedder) appendRecords(buf []byte) error {
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
func (c *Embedder) Probe(ctx context.Context) error {
	if p, ok := c.Embedder.(embed.Prober); ok {
		return p.Probe(ctx)
	}
	return nil
}
