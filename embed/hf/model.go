package hf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/praxis-os/continuity/embed/internal/gemm"
)

// Model is a BERT-family sentence-embedding model read from a Hugging Face
// / sentence-transformers folder: config.json, model.safetensors,
// tokenizer.json and the sentence-transformers files (modules.json,
// 1_Pooling/config.json, sentence_bert_config.json). Open checks the
// whole folder (architecture, tokenizer, every weight's shape and dtype)
// without reading the weights; they are read on the first use (Load).
// A Model is safe for concurrent use.
type Model struct {
	dir    string
	cfg    *bertConfig
	tok    *Tokenizer
	pipe   *pipeline
	maxLen int    // most ids per sequence, special tokens included
	prefix string // tensor name prefix: "" or "bert."

	load    sync.Once
	loadErr error
	w       *weights
}

// weights are the model's tensors as float32, the dense ones packed for
// the matrix product.
type weights struct {
	word, pos, typ []float32 // vocab×h, positions×h, types×h
	embLN          layerNorm
	layers         []layerWeights
}

type layerNorm struct{ w, b []float32 }

type layerWeights struct {
	qkv      gemm.Packed // h × 3h: query, key and value side by side
	qkvB     []float32
	attnOut  gemm.Packed // h × h
	attnOutB []float32
	attnLN   layerNorm
	ffn1     gemm.Packed // h × intermediate
	ffn1B    []float32
	ffn2     gemm.Packed // intermediate × h
	ffn2B    []float32
	outLN    layerNorm
}

// Open reads the model folder dir and checks it; def, when not nil, gives
// the defaults of a known model for what the folder does not say (its
// pooling when there is no pooling configuration). The weights are read
// later, by Load or the first Embed.
func Open(dir string, def *Known) (*Model, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("model folder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("model folder %s: not a folder", dir)
	}
	pipe, err := readPipeline(dir, def)
	if err != nil {
		return nil, err
	}
	tdir := pipe.transformerDir
	cfg, err := readBertConfig(filepath.Join(tdir, fileConfig))
	if err != nil {
		return nil, err
	}
	tokPath := filepath.Join(tdir, fileTokenizer)
	tok, err := ReadTokenizer(tokPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: missing (continuity reads the fast tokenizer's tokenizer.json, not vocab.txt alone)", tokPath)
		}
		return nil, err
	}
	if id := tok.MaxID(); int(id) >= cfg.VocabSize {
		return nil, fmt.Errorf("%s: token id %d but config.json's vocab_size is %d", tokPath, id, cfg.VocabSize)
	}
	if tt := tok.MaxTypeID(); int(tt) >= *cfg.TypeVocabSize {
		return nil, fmt.Errorf("%s: token type id %d but config.json's type_vocab_size is %d", tokPath, tt, *cfg.TypeVocabSize)
	}
	m := &Model{dir: dir, cfg: cfg, tok: tok, pipe: pipe}
	// The longest sequence: sentence_bert_config.json's max_seq_length,
	// else the tokenizer's truncation, else the position table; never
	// more than the position table.
	m.maxLen = cfg.MaxPositions
	if pipe.maxSeqLength > 0 {
		m.maxLen = min(m.maxLen, pipe.maxSeqLength)
	} else if tok.MaxLength() > 0 {
		m.maxLen = min(m.maxLen, tok.MaxLength())
	}
	if m.maxLen <= tok.SpecialTokens() {
		return nil, fmt.Errorf("%s: sequences of %d tokens leave no room for text next to %d special tokens", dir, m.maxLen, tok.SpecialTokens())
	}
	if err := m.checkWeights(); err != nil {
		return nil, err
	}
	return m, nil
}

// Dir is the folder the model was read from.
func (m *Model) Dir() string { return m.dir }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// Dimension is the length of the model's sentence vectors.
func (m *Model) Dimension() int { return m.pipe.pooling.modes() * m.cfg.HiddenSize }

// MaxTokens is the most token ids the model reads at once, special tokens
// included (sentence_bert_config.json's max_seq_length).
func (m *Model) MaxTokens() int { return m.maxLen }

// Pooling is the model's pooling.
func (m *Model) Pooling() Pooling { return m.pipe.pooling }

// Prompts are the prompts config_sentence_transformers.json names
// ("query", "document", "passage"...), nil when it names none.
func (m *Model) Prompts() map[string]string { return m.pipe.prompts }

// Describe summarises the architecture, e.g. "BERT 12 layers, 384 hidden,
// 12 heads, cls pooling, 512 tokens".
func (m *Model) Describe() string {
	return fmt.Sprintf("BERT %d layers, %d hidden, %d heads, %s pooling, %d tokens", m.cfg.Layers, m.cfg.HiddenSize, m.cfg.Heads, m.pipe.pooling, m.maxLen)
}

// weightsPath is model.safetensors in the transformer's folder.
func (m *Model) weightsPath() string { return filepath.Join(m.pipe.transformerDir, fileWeights) }

// openWeights opens model.safetensors and parses its header.
func (m *Model) openWeights() (*safetensors, *os.File, error) {
	path := m.weightsPath()
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: missing (continuity reads safetensors weights, not pytorch_model.bin)", path)
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	s, err := readSafetensors(path, f, st.Size())
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return s, f, nil
}

// tensor names the model reads, in order, with their shapes.
type tensorSpec struct {
	name  string
	shape []int
}

func (m *Model) tensorSpecs() []tensorSpec {
	c := m.cfg
	h, in := c.HiddenSize, c.IntermediateSize
	p := m.prefix
	specs := []tensorSpec{
		{p + "embeddings.word_embeddings.weight", []int{c.VocabSize, h}},
		{p + "embeddings.position_embeddings.weight", []int{c.MaxPositions, h}},
		{p + "embeddings.token_type_embeddings.weight", []int{*c.TypeVocabSize, h}},
		{p + "embeddings.LayerNorm.weight", []int{h}},
		{p + "embeddings.LayerNorm.bias", []int{h}},
	}
	for l := range c.Layers {
		lp := p + "encoder.layer." + strconv.Itoa(l) + "."
		for _, s := range []tensorSpec{
			{"attention.self.query.weight", []int{h, h}}, {"attention.self.query.bias", []int{h}},
			{"attention.self.key.weight", []int{h, h}}, {"attention.self.key.bias", []int{h}},
			{"attention.self.value.weight", []int{h, h}}, {"attention.self.value.bias", []int{h}},
			{"attention.output.dense.weight", []int{h, h}}, {"attention.output.dense.bias", []int{h}},
			{"attention.output.LayerNorm.weight", []int{h}}, {"attention.output.LayerNorm.bias", []int{h}},
			{"intermediate.dense.weight", []int{in, h}}, {"intermediate.dense.bias", []int{in}},
			{"output.dense.weight", []int{h, in}}, {"output.dense.bias", []int{h}},
			{"output.LayerNorm.weight", []int{h}}, {"output.LayerNorm.bias", []int{h}},
		} {
			specs = append(specs, tensorSpec{lp + s.name, s.shape})
		}
	}
	return specs
}

// resolveName maps a tensor name to the file's: LayerNorm weights may be
// stored as gamma/beta (older checkpoints).
func resolveName(s *safetensors, name string) string {
	if _, ok := s.tensors[name]; ok {
		return name
	}
	for _, r := range [][2]string{{"LayerNorm.weight", "LayerNorm.gamma"}, {"LayerNorm.bias", "LayerNorm.beta"}} {
		if len(name) > len(r[0]) && name[len(name)-len(r[0]):] == r[0] {
			alt := name[:len(name)-len(r[0])] + r[1]
			if _, ok := s.tensors[alt]; ok {
				return alt
			}
		}
	}
	return name
}

// checkWeights reads the safetensors header and checks that every tensor
// the forward pass reads is there, with the shape config.json implies and
// a float dtype. It settles the name prefix ("bert." or none).
func (m *Model) checkWeights() error {
	s, f, err := m.openWeights()
	if err != nil {
		return err
	}
	defer f.Close()
	if _, ok := s.tensors["embeddings.word_embeddings.weight"]; !ok {
		if _, ok := s.tensors["bert.embeddings.word_embeddings.weight"]; ok {
			m.prefix = "bert."
		}
	}
	for _, t := range m.tensorSpecs() {
		if err := s.check(resolveName(s, t.name), t.shape...); err != nil {
			if errors.Is(err, errNoTensor) {
				return fmt.Errorf("%w (not a BERT model's weights, or another architecture's)", err)
			}
			return err
		}
	}
	return nil
}

// Load reads the weights (once; later calls return the first result).
func (m *Model) Load() error {
	m.load.Do(func() { m.w, m.loadErr = m.readWeights() })
	return m.loadErr
}

func (m *Model) readWeights() (*weights, error) {
	s, f, err := m.openWeights()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	read := func(name string, n int) ([]float32, error) {
		v := make([]float32, n)
		return v, s.float32s(resolveName(s, name), v)
	}
	c := m.cfg
	h, in := c.HiddenSize, c.IntermediateSize
	p := m.prefix
	w := &weights{}
	var errs []error
	get := func(name string, n int) []float32 {
		v, err := read(name, n)
		errs = append(errs, err)
		return v
	}
	w.word = get(p+"embeddings.word_embeddings.weight", c.VocabSize*h)
	w.pos = get(p+"embeddings.position_embeddings.weight", c.MaxPositions*h)
	w.typ = get(p+"embeddings.token_type_embeddings.weight", *c.TypeVocabSize*h)
	w.embLN = layerNorm{get(p+"embeddings.LayerNorm.weight", h), get(p+"embeddings.LayerNorm.bias", h)}
	for l := range c.Layers {
		lp := p + "encoder.layer." + strconv.Itoa(l) + "."
		var lw layerWeights
		// Linear weights are stored out×in (y = x·Wᵀ + b); the product
		// wants in×out, the query, key and value matrices side by side.
		qkv := make([]float32, h*3*h)
		for k, name := range []string{"query", "key", "value"} {
			t := get(lp+"attention.self."+name+".weight", h*h)
			transposeInto(qkv, 3*h, k*h, t, h, h)
			lw.qkvB = append(lw.qkvB, get(lp+"attention.self."+name+".bias", h)...)
		}
		lw.qkv = gemm.Pack(h, 3*h, qkv)
		lw.attnOut = packLinear(get(lp+"attention.output.dense.weight", h*h), h, h)
		lw.attnOutB = get(lp+"attention.output.dense.bias", h)
		lw.attnLN = layerNorm{get(lp+"attention.output.LayerNorm.weight", h), get(lp+"attention.output.LayerNorm.bias", h)}
		lw.ffn1 = packLinear(get(lp+"intermediate.dense.weight", in*h), in, h)
		lw.ffn1B = get(lp+"intermediate.dense.bias", in)
		lw.ffn2 = packLinear(get(lp+"output.dense.weight", h*in), h, in)
		lw.ffn2B = get(lp+"output.dense.bias", h)
		lw.outLN = layerNorm{get(lp+"output.LayerNorm.weight", h), get(lp+"output.LayerNorm.bias", h)}
		w.layers = append(w.layers, lw)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return w, nil
}

// packLinear packs a Linear layer's out×in weight for x·Wᵀ.
func packLinear(t []float32, out, in int) gemm.Packed {
	wt := make([]float32, in*out)
	transposeInto(wt, out, 0, t, out, in)
	return gemm.Pack(in, out, wt)
}

// transposeInto writes the transpose of src (rows×cols) into dst, a
// matrix of width ld, from column col on: dst[j·ld + col + i] = src[i·cols + j].
func transposeInto(dst []float32, ld, col int, src []float32, rows, cols int) {
	for i := range rows {
		for j, a := range src[i*cols : (i+1)*cols] {
			dst[j*ld+col+i] = a
		}
	}
}
