package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/internal/embedcache"
	"github.com/praxis-os/continuity/vectors"
)

// chunkEmbedder is the embedding of one chunk of a text (--more chunkN):
// the vector of the N-th 128-token chunk, a zero vector (similar to
// nothing) for a text with fewer chunks. With spaces for chunks 1 to 8,
// an exchange's similarity becomes the largest over its chunks instead of
// that of the mean of its chunk vectors (issue 14 item 2: max or mean).
type chunkEmbedder struct {
	enc  chunker
	base string // the encoder's identity
	dim  int
	n    int // 1-based chunk
	memo *chunkMemo
}

type chunker interface {
	EmbedChunks(ctx context.Context, texts []string) ([][][]float32, error)
}

// chunkMemo keeps the chunk vectors of the texts seen, so that the
// spaces of chunks 1..8 embed each text once.
type chunkMemo struct {
	mu sync.Mutex
	m  map[string][][]float32
}

func (c chunkEmbedder) Identity() string {
	// "uselite:use-lite-en-0.2.0-f16:512" -> "...-f16-chunk3:512"
	i := strings.LastIndex(c.base, ":")
	return c.base[:i] + "-chunk" + strconv.Itoa(c.n) + c.base[i:]
}

func (c chunkEmbedder) Dimension() int { return c.dim }

func (c chunkEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.memo.mu.Lock()
	var missing []string
	for _, t := range texts {
		if _, ok := c.memo.m[t]; !ok {
			missing = append(missing, t)
		}
	}
	c.memo.mu.Unlock()
	if len(missing) > 0 {
		vs, err := c.enc.EmbedChunks(ctx, missing)
		if err != nil {
			return nil, err
		}
		c.memo.mu.Lock()
		for i, t := range missing {
			c.memo.m[t] = vs[i]
		}
		c.memo.mu.Unlock()
	}
	out := make([][]float32, len(texts))
	c.memo.mu.Lock()
	defer c.memo.mu.Unlock()
	for i, t := range texts {
		if cs := c.memo.m[t]; len(cs) >= c.n {
			out[i] = cs[c.n-1]
		} else {
			out[i] = make([]float32, c.dim)
		}
	}
	return out, nil
}

// chunkMean is the normalised mean of the chunk vectors of chunk
// embedders 1..8 (--more chunkmean): the same vector as the model's own
// embedding of the text (uselite embeds up to 8 chunks and averages
// them), built from the chunk caches so that mean and max are measured on
// the same chunk vectors, embedded once.
type chunkMean struct {
	chunks []embed.Embedder
	id     string
	dim    int
}

func (c chunkMean) Identity() string { return c.id }
func (c chunkMean) Dimension() int   { return c.dim }
func (c chunkMean) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, c.dim)
	}
	for _, ch := range c.chunks {
		vs, err := ch.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		for i, v := range vs {
			for j, x := range v {
				out[i][j] += x
			}
		}
	}
	for _, v := range out {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if ss > 0 {
			inv := float32(1 / math.Sqrt(ss))
			for j := range v {
				v[j] *= inv
			}
		}
	}
	return out, nil
}

// chunkEmbs are the cached chunk embedders 1..8, built on first use and
// shared by --text and --more, so that a process embeds each text's
// chunks once.
var chunkEmbs []embed.Embedder

// moreEmbedders builds the embedders of the --more spaces: recipes
// (user, user+ai, user+date, user+prev) of the same model; chunkN (the
// N-th chunk of the user+ai text, N 1 to 8); chunkmean (their mean: the
// user+ai vector, from the same chunk vectors) — each behind the on-disk
// cache.
func moreEmbedders(list string, provider string, dim, chunks int, cache bool, stderr io.Writer) ([]embed.Embedder, error) {
	if list == "" {
		return nil, nil
	}
	var out []embed.Embedder
	chunkSet := func() ([]embed.Embedder, error) {
		if chunkEmbs != nil {
			return chunkEmbs, nil
		}
		cfg, err := embed.ConfigFromEnv()
		if err != nil {
			return nil, err
		}
		cfg.Provider, cfg.Dimension, cfg.Chunks = provider, dim, chunks
		base, err := embed.New(cfg)
		if err != nil {
			return nil, err
		}
		ch, ok := base.(chunker)
		if !ok {
			return nil, fmt.Errorf("embedder %s has no chunk vectors", base.Identity())
		}
		memo := &chunkMemo{m: map[string][][]float32{}}
		for k := 1; k <= 8; k++ {
			var e embed.Embedder = chunkEmbedder{enc: ch, base: base.Identity(), dim: base.Dimension(), n: k, memo: memo}
			if cache {
				if e, err = withDiskCache(e); err != nil {
					return nil, err
				}
			}
			chunkEmbs = append(chunkEmbs, e)
		}
		return chunkEmbs, nil
	}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		var e embed.Embedder
		switch n, isChunk := strings.CutPrefix(name, "chunk"); {
		case name == "chunkmean":
			cs, err := chunkSet()
			if err != nil {
				return nil, fmt.Errorf("--more %s: %w", name, err)
			}
			id := cs[0].Identity()
			e = chunkMean{chunks: cs, id: strings.Replace(id, "-chunk1:", "-chunkmean:", 1), dim: cs[0].Dimension()}
		case isChunk:
			k, err := strconv.Atoi(n)
			if err != nil || k < 1 || k > 8 {
				return nil, fmt.Errorf("--more %q: want chunk1 to chunk8 or chunkmean", name)
			}
			cs, err := chunkSet()
			if err != nil {
				return nil, fmt.Errorf("--more %s: %w", name, err)
			}
			e = cs[k-1]
		default:
			e, err := newEmbedder(provider, dim, chunks, name, cache, stderr)
			if err != nil {
				return nil, fmt.Errorf("--more %s: %w", name, err)
			}
			out = append(out, e)
			continue
		}
		e, err := vectors.WithTextRecipe(e, vectors.TextUserAI)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// withDiskCache puts e behind the evaluation's on-disk vector cache
// (internal/embedcache), unless $CONTINUITY_EVAL_CACHE is "off". The one
// place more.go touches the cache.
func withDiskCache(e embed.Embedder) (embed.Embedder, error) {
	if embedcache.Disabled() {
		return e, nil
	}
	dir, err := embedcache.DefaultDir()
	if err != nil {
		return nil, err
	}
	ce, err := embedcache.New(e, dir)
	if err != nil {
		return nil, err // not a nil *Embedder in a non-nil interface
	}
	return ce, nil
}
