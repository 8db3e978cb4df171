package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/search"
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

// moreEmbedders builds the embedders of the --more spaces: recipes
// (user, user+ai, user+date, user+prev) of the same model, or chunkN (the
// N-th chunk of the user+ai text), behind the on-disk cache.
func moreEmbedders(list string, provider string, dim, chunks int, cache bool, stderr io.Writer) ([]embed.Embedder, error) {
	if list == "" {
		return nil, nil
	}
	var out []embed.Embedder
	var base embed.Embedder
	memo := &chunkMemo{m: map[string][][]float32{}}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if n, ok := strings.CutPrefix(name, "chunk"); ok {
			k, err := strconv.Atoi(n)
			if err != nil || k < 1 {
				return nil, fmt.Errorf("--more %q: want chunkN, N >= 1", name)
			}
			if base == nil {
				cfg, err := embed.ConfigFromEnv()
				if err != nil {
					return nil, err
				}
				cfg.Provider, cfg.Dimension, cfg.Chunks = provider, dim, chunks
				if base, err = embed.New(cfg); err != nil {
					return nil, err
				}
			}
			ch, ok := base.(chunker)
			if !ok {
				return nil, fmt.Errorf("--more %s: embedder %s has no chunk vectors", name, base.Identity())
			}
			var e embed.Embedder = chunkEmbedder{enc: ch, base: base.Identity(), dim: base.Dimension(), n: k, memo: memo}
			if cache && os.Getenv(EnvCache) != "off" {
				dir, err := defaultCacheDir()
				if err != nil {
					return nil, err
				}
				ce, err := newCachedEmbedder(e, dir)
				if err != nil {
					return nil, err
				}
				e = ce
			}
			e, err = search.WithTextRecipe(e, search.TextUserAI)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
			continue
		}
		e, err := newEmbedder(provider, dim, chunks, name, cache, stderr)
		if err != nil {
			return nil, fmt.Errorf("--more %s: %w", name, err)
		}
		out = append(out, e)
	}
	return out, nil
}
