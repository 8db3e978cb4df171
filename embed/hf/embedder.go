package hf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/praxis-os/continuity/embed/internal/cores"
)

const (
	// Provider is the provider name in identities.
	Provider = "hf"
	// DefaultMaxChunks bounds the chunks of the model's window embedded
	// per text, as for uselite: the rest of a longer text is left to BM25.
	DefaultMaxChunks = 8
	// batchTokens bounds the tokens that go through the network at once
	// in a call that is not sharded (see package embed/internal/cores),
	// which bounds the scratch memory (about 16 KB a token for a
	// 384-wide model: 16 MB), plus one window's attention scores.
	batchTokens = 1024
)

// Options tune an Embedder.
type Options struct {
	// MaxChunks is the most windows of the model embedded per text
	// (default DefaultMaxChunks). 1 embeds what fits the window and
	// drops the rest, as sentence-transformers truncates.
	MaxChunks int
	// Threads is how many cores a call may use (default GOMAXPROCS):
	// a large call (a batch of the background worker) is cut into shards
	// that as many goroutines embed in parallel, a small one (a query)
	// shares each matrix product among as many goroutines (see package
	// embed/internal/cores).
	Threads int
	// QueryPrefix and PassagePrefix, when not nil, replace the model's
	// own: the text put before a search query, and before a text that is
	// searched (what the index stores).
	QueryPrefix, PassagePrefix *string
}

// Embedder embeds texts with a BERT-family model: each text is cut into
// windows of the model (at most MaxChunks), each window embedded, and the
// text's vector is the normalised mean of the windows' vectors (as
// uselite does; the cosine of a query with it is proportional to the mean
// of its cosines with the windows). Search queries get the model's query
// prefix (bge's retrieval instruction, e5's "query: "), the texts
// searched the passage prefix. It is safe for concurrent use: the model
// is read-only, each call (each shard of a call) takes its own scratch
// buffers.
type Embedder struct {
	model    *Model
	loc      *Located
	identity string
	query    string // prefixes in effect
	passage  string
	chunks   int
	threads  int
	load     sync.Once
	loadErr  error
	pool     sync.Pool // *workspace
}

// New opens the model that model names (see Locate: a known name, a hub
// id, a name installed with --from, or a folder; "" is DefaultModel). It
// checks the whole model folder but reads the weights only on the first
// Embed. A model that is not installed is an error that says how to pull
// it: nothing is ever downloaded here.
func New(model string, opts Options) (*Embedder, error) {
	loc, err := Locate(model)
	if err != nil {
		return nil, err
	}
	return NewLocated(loc, opts)
}

// NewLocated is New for a model already located.
func NewLocated(loc *Located, opts Options) (*Embedder, error) {
	if opts.MaxChunks < 0 {
		return nil, fmt.Errorf("hf: negative MaxChunks %d", opts.MaxChunks)
	}
	if opts.MaxChunks == 0 {
		opts.MaxChunks = DefaultMaxChunks
	}
	if opts.Threads <= 0 {
		opts.Threads = runtime.GOMAXPROCS(0)
	}
	m, err := Open(loc.Dir, loc.Known)
	if err != nil {
		return nil, err
	}
	e := &Embedder{model: m, loc: loc, chunks: opts.MaxChunks, threads: opts.Threads}
	defQuery, defPassage := m.defaultPrefixes(loc.Known)
	e.query, e.passage = defQuery, defPassage
	if opts.QueryPrefix != nil {
		e.query = *opts.QueryPrefix
	}
	if opts.PassagePrefix != nil {
		e.passage = *opts.PassagePrefix
	}
	// The identity: the model's (hub repository and commit, else the
	// hashes of its files), the recipe where it differs from the default
	// (chunk cap, passage prefix), the dimension.
	var id string
	if man := loc.Manifest; man != nil && man.Source == "hub" && man.Repo != "" && len(man.Revision) >= 12 {
		id = man.Repo + "@" + man.Revision[:12]
	} else {
		files, err := m.fileHashes(man)
		if err != nil {
			return nil, err
		}
		id = loc.Name + "@sha256-" + contentID(files)
	}
	if e.chunks != DefaultMaxChunks {
		id += fmt.Sprintf("-c%d", e.chunks)
	}
	if e.passage != defPassage {
		h := sha256.Sum256([]byte(e.passage))
		id += "-p" + hex.EncodeToString(h[:4])
	}
	e.identity = fmt.Sprintf("%s:%s:%d", Provider, id, m.Dimension())
	return e, nil
}

// defaultPrefixes are the model's own query and passage prefixes: the
// prompts of config_sentence_transformers.json, else the known model's.
func (m *Model) defaultPrefixes(k *Known) (query, passage string) {
	if k != nil {
		query, passage = k.QueryPrefix, k.PassagePrefix
	}
	if p := m.Prompts()["query"]; p != "" {
		query = p
	}
	for _, role := range []string{"passage", "document", "corpus"} {
		if p := m.Prompts()[role]; p != "" {
			passage = p
			break
		}
	}
	return query, passage
}

// Identity names the vector space, e.g.
// "hf:BAAI/bge-small-en-v1.5@5c38ec7c405e:384" for a model pulled from
// the hub, "hf:mymodel@sha256-0123456789ab:384" for a folder (the hashes
// of its files); a chunk cap other than 8 adds "-c<N>", a passage prefix
// other than the model's "-p<hash>": both change the stored vectors.
func (e *Embedder) Identity() string { return e.identity }

// Dimension is the length of the vectors.
func (e *Embedder) Dimension() int { return e.model.Dimension() }

// Model returns the model.
func (e *Embedder) Model() *Model { return e.model }

// Located says where the model was found.
func (e *Embedder) Located() *Located { return e.loc }

// Prefixes are the query and passage prefixes in effect.
func (e *Embedder) Prefixes() (query, passage string) { return e.query, e.passage }

// ready reads the weights once, after checking the files of an installed
// model against its manifest.
func (e *Embedder) ready() error {
	e.load.Do(func() {
		if man := e.loc.Manifest; man != nil {
			if err := verifyManifest(e.loc.Dir, man); err != nil {
				e.loadErr = err
				return
			}
		}
		e.loadErr = e.model.Load()
	})
	return e.loadErr
}

// Embed returns one unit vector per text, as stored for search (with the
// passage prefix); a text that is empty or only white space gets a zero
// vector (similar to nothing). It fails when the weights cannot be read
// or ctx is cancelled.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, e.passage)
}

// EmbedQueries embeds search queries: as Embed, with the query prefix,
// and before background work (see package embed/internal/cores).
func (e *Embedder) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(cores.Query(ctx), texts, e.query)
}

func (e *Embedder) embed(ctx context.Context, texts []string, prefix string) ([][]float32, error) {
	ins, err := e.inspect(ctx, texts, prefix, true)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i := range ins {
		out[i] = ins[i].Vector
	}
	return out, nil
}

// Inspection is what the model reads of a text and the vector it gives.
type Inspection struct {
	// Chunks are the token ids of each window the model read, special
	// tokens and prefix included.
	Chunks [][]int32
	// Vector is the text's vector: the normalised mean of the windows'.
	Vector []float32
}

// Inspect shows what the model reads of each text (as a query when query
// is set, else as a passage) and the vector it gives: Embed's, except
// that a blank text is embedded too (what sentence-transformers gives for
// it) instead of getting a zero vector.
func (e *Embedder) Inspect(ctx context.Context, texts []string, query bool) ([]Inspection, error) {
	prefix := e.passage
	if query {
		prefix = e.query
	}
	return e.inspect(ctx, texts, prefix, false)
}

func (e *Embedder) inspect(ctx context.Context, texts []string, prefix string, skipBlank bool) ([]Inspection, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	out := make([]Inspection, len(texts))
	dim := e.Dimension()
	flat := make([]float32, len(texts)*dim)
	var seqs []sequence
	var owner []int
	for i, t := range texts {
		out[i].Vector = flat[i*dim : (i+1)*dim : (i+1)*dim]
		if skipBlank && strings.TrimSpace(t) == "" {
			continue
		}
		for _, c := range e.windows(t, prefix) {
			ids, types := e.model.tok.Wrap(c)
			if len(ids) == 0 {
				continue // nothing to read (no special tokens, no text): a zero vector
			}
			out[i].Chunks = append(out[i].Chunks, ids)
			seqs = append(seqs, sequence{ids, types})
			owner = append(owner, i)
		}
	}
	if len(seqs) == 0 {
		return out, nil
	}
	vecs := make([]float32, len(seqs)*dim)
	lengths := make([]int, len(seqs))
	for i, s := range seqs {
		lengths[i] = len(s.ids)
	}
	job := cores.Job{Lengths: lengths, Threads: e.threads, BatchTokens: batchTokens, ShardTokens: cores.ShardBytes / e.model.bytesPerToken()}
	err := cores.Run(ctx, job, func(x cores.Exec, lo, hi int) {
		ws, _ := e.pool.Get().(*workspace)
		if ws == nil {
			ws = &workspace{}
		}
		e.model.forward(ws, seqs[lo:hi], vecs[lo*dim:hi*dim], x)
		e.pool.Put(ws)
	})
	if err != nil {
		return nil, err
	}
	// The mean of each text's window vectors, normalised.
	for c, i := range owner {
		v := out[i].Vector
		for j, a := range vecs[c*dim : (c+1)*dim] {
			v[j] += a
		}
	}
	for i := range out {
		if len(out[i].Chunks) > 0 {
			unit(out[i].Vector)
		}
	}
	return out, nil
}

// unit scales v to unit length, leaving a zero vector zero.
func unit(v []float32) {
	var ss float64
	for _, a := range v {
		ss += float64(a) * float64(a)
	}
	if ss == 0 {
		return
	}
	inv := 1 / math.Sqrt(ss)
	for i, a := range v {
		v[i] = float32(float64(a) * inv)
	}
}

// Windows returns the token ids of the windows Embed reads of text
// (without the special tokens; the prefix included), as a passage, or as
// a query when query is set.
func (e *Embedder) Windows(text string, query bool) [][]int32 {
	if query {
		return e.windows(text, e.query)
	}
	return e.windows(text, e.passage)
}

// windows cuts prefix+text into the model's windows. A text that fits
// is one window: the tokens of prefix+text, exactly what
// sentence-transformers reads. A longer one is cut into the fewest
// windows that hold it, of equal size (±1, so that no window is a stub),
// each with the prefix's tokens first; when it takes more than the chunk
// cap, the first cap windows of full size are read and the rest is left
// out (with a cap of 1: sentence-transformers' truncation).
func (e *Embedder) windows(text, prefix string) [][]int32 {
	tok := e.model.tok
	w := e.model.maxLen - tok.SpecialTokens()
	content := tok.Encode(text)
	var pre []int32
	if prefix != "" {
		pre = tok.Encode(prefix)
	}
	if len(pre)+len(content) <= w {
		ids := content
		if prefix != "" {
			ids = tok.Encode(prefix + text)
		}
		return [][]int32{ids[:min(len(ids), w)]}
	}
	room := w - len(pre)
	if room < 1 { // a prefix longer than the window: what fits of it
		return [][]int32{pre[:w]}
	}
	n := len(content)
	k := (n + room - 1) / room
	var out [][]int32
	if k > e.chunks {
		for c := range e.chunks {
			out = append(out, concat(pre, content[c*room:(c+1)*room]))
		}
		return out
	}
	for c, lo := 0, 0; c < k; c++ {
		hi := lo + (n-lo)/(k-c) // the remaining tokens shared among the remaining windows
		out = append(out, concat(pre, content[lo:hi]))
		lo = hi
	}
	return out
}

func concat(a, b []int32) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}
