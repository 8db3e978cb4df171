// Package embed turns exchange texts into vectors for semantic search.
//
// Five providers implement [Embedder]:
//
//   - uselite (the default): Universal Sentence Encoder Lite, a small
//     transformer sentence encoder (7M parameters, 512 dimensions) whose
//     weights are compiled into the binary; pure Go, offline, deterministic
//     (package embed/uselite). It relates texts that mean the same in
//     different words.
//   - hf: a BERT-family model (bge-small-en-v1.5, all-MiniLM-L6-v2,
//     e5-small-v2, gte-small, snowflake-arctic-embed-s, or any BERT in a
//     Hugging Face / sentence-transformers folder), run in process, pure
//     Go (package embed/hf). Its weights are downloaded on request only
//     (`continuity model pull`); queries get the model's query prefix
//     ([QueryEmbedder]).
//   - hash ("builtin" is its deprecated name): an offline, deterministic
//     hashed feature embedding (word unigrams, bigrams and character
//     n-grams of normalised, stemmed words, signed feature hashing). No
//     model weights, microseconds per text. It captures lexical and
//     morphological similarity, not meaning. Its identity stays
//     "builtin:hash-v2:<dim>".
//   - ollama: a local Ollama server (/api/embeddings).
//   - openai: any OpenAI-compatible /embeddings endpoint (OpenAI, LM Studio,
//     llama.cpp server, vLLM, LocalAI).
//
// Every provider returns L2-normalised vectors, except that a text with no
// content (no word for hash, only white space for the others)
// yields a zero vector of the right dimension: it is similar to nothing.
//
// Vectors are only comparable within one [Embedder.Identity]. Remote
// embedders learn their dimension from the server; see [Resolve].
package embed

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/praxis-os/continuity/embed/internal/cores"
)

// Embedder turns texts into vectors. Implementations are safe for concurrent
// use.
type Embedder interface {
	// Identity names the vector space: provider, model and dimension, e.g.
	// "uselite:use-lite-en-0.2.0-f16:512", "builtin:hash-v2:256",
	// "ollama:nomic-embed-text:768" or
	// "openai:api.openai.com/text-embedding-3-small:1536". Vectors from
	// different identities are never compared.
	//
	// A remote embedder whose dimension is not known yet (not configured,
	// no successful call so far) probes the server once, bounded by
	// Config.Timeout; if that fails, it returns a provisional identity
	// ending in ":?" that matches no stored vectors. Use [Resolve] to get
	// an error instead.
	Identity() string
	// Dimension is the length of the vectors. A remote embedder reports 0
	// until it knows it (see Identity).
	Dimension() int
	// Embed embeds a batch of texts, returning one vector per text in
	// order, or an error and no vectors.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// QueryEmbedder is implemented by embedders whose model embeds a search
// query differently from the texts searched: bge's retrieval instruction
// before queries, e5's "query: " and "passage: " (package embed/hf).
// Embed embeds the texts searched; EmbedQueries embeds queries. Use
// [EmbedQueries] to embed queries with any embedder.
type QueryEmbedder interface {
	EmbedQueries(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedQueries embeds search queries: with e's EmbedQueries when it is a
// QueryEmbedder, else with Embed (the other embedders make no
// difference). The in-process embedders (uselite, hf) embed them before
// their background work, which waits meanwhile.
func EmbedQueries(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	ctx = cores.Query(ctx)
	if q, ok := e.(QueryEmbedder); ok {
		return q.EmbedQueries(ctx, texts)
	}
	return e.Embed(ctx, texts)
}

// Prober is implemented by embedders that depend on a server. Probe embeds
// a short fixed text, which checks that the server answers and learns (or
// checks) the dimension.
type Prober interface {
	Probe(ctx context.Context) error
}

// Resolve returns e's final identity. For an embedder that depends on a
// server and does not know its dimension yet, it probes the server first and
// returns the error if that fails, so that callers never persist or compare
// a provisional identity.
func Resolve(ctx context.Context, e Embedder) (string, error) {
	if p, ok := e.(Prober); ok && e.Dimension() == 0 {
		if err := p.Probe(ctx); err != nil {
			return "", err
		}
	}
	return e.Identity(), nil
}

var (
	// ErrUnavailable marks errors caused by a server that cannot be
	// reached: connection refused, unknown host, network unreachable.
	ErrUnavailable = errors.New("embedding server unavailable")
	// ErrDimensionMismatch marks a vector whose length differs from the
	// configured or previously learned dimension.
	ErrDimensionMismatch = errors.New("embedding dimension mismatch")
	// ErrBadVector marks a vector that cannot be normalised: all zeros,
	// NaN or infinite components.
	ErrBadVector = errors.New("invalid embedding vector")
)

// StatusError is an HTTP error response from an embedding server.
type StatusError struct {
	URL        string // the request URL
	StatusCode int    // e.g. 404
	Status     string // e.g. "404 Not Found"
	Body       string // an excerpt of the response body, "" when unknown
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("HTTP %s from POST %s", e.Status, e.URL)
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// normalize scales v in place to unit length. It fails for zero, NaN and
// infinite vectors.
func normalize(v []float32) error {
	var s float64
	for _, x := range v {
		f := float64(x)
		s += float64(f * f)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return ErrBadVector
	}
	n := math.Sqrt(s)
	for i, x := range v {
		v[i] = float32(float64(x) / n)
	}
	return nil
}
