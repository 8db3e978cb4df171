package hf

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Shape is the size of a BERT model, for WriteRandomModel.
type Shape struct {
	Hidden, Intermediate, Layers, Heads, Vocabulary, Positions int
}

// Shape is the model's size.
func (m *Model) Shape() Shape {
	c := m.cfg
	return Shape{Hidden: c.HiddenSize, Intermediate: c.IntermediateSize, Layers: c.Layers, Heads: c.Heads, Vocabulary: c.VocabSize, Positions: c.MaxPositions}
}

// BGESmallShape is bge-small-en-v1.5's shape (also all-MiniLM's, e5-small's,
// gte-small's and arctic-embed-s's but for their depth and pooling): 12
// layers, 384 wide, 12 heads, 1536 intermediate, 30522 tokens, 512
// positions; 33M parameters.
var BGESmallShape = Shape{Hidden: 384, Intermediate: 1536, Layers: 12, Heads: 12, Vocabulary: 30522, Positions: 512}

// WriteRandomModel writes a BERT model of the given shape with random
// weights (uniform in ±0.05, layer norms 1 and 0; float32; seeded, so the
// same every time) into dir, with the tokenizer, modules and pooling of
// the model folder from (whose vocabulary must not exceed the shape's):
// a model to measure speed with, without downloading one (bge-small's
// shape is 133 MB). Its vectors mean nothing.
func WriteRandomModel(dir, from string, s Shape, seed uint64) error {
	if s.Hidden <= 0 || s.Heads <= 0 || s.Hidden%s.Heads != 0 || s.Intermediate <= 0 || s.Layers <= 0 || s.Vocabulary <= 0 || s.Positions <= 0 {
		return fmt.Errorf("hf: random model: bad shape %+v", s)
	}
	for _, f := range []string{fileTokenizer, fileModules, filePooling} {
		data, err := os.ReadFile(filepath.Join(from, filepath.FromSlash(f)))
		if err != nil {
			return fmt.Errorf("hf: random model: %w", err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return fmt.Errorf("hf: random model: %w", err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			return fmt.Errorf("hf: random model: %w", err)
		}
	}
	cfg := map[string]any{"model_type": "bert", "architectures": []string{"BertModel"}, "hidden_size": s.Hidden, "intermediate_size": s.Intermediate,
		"num_hidden_layers": s.Layers, "num_attention_heads": s.Heads, "vocab_size": s.Vocabulary, "max_position_embeddings": s.Positions,
		"type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12}
	cb, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("hf: random model: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, fileConfig), cb, 0o600); err != nil {
		return fmt.Errorf("hf: random model: %w", err)
	}
	sb := fmt.Sprintf(`{"max_seq_length": %d}`, s.Positions)
	if err := os.WriteFile(filepath.Join(dir, fileSBert), []byte(sb), 0o600); err != nil {
		return fmt.Errorf("hf: random model: %w", err)
	}
	types := 2
	m := &Model{cfg: &bertConfig{VocabSize: s.Vocabulary, HiddenSize: s.Hidden, Layers: s.Layers, IntermediateSize: s.Intermediate, MaxPositions: s.Positions, TypeVocabSize: &types}}
	r := rand.New(rand.NewPCG(seed, 2))
	header := map[string]any{}
	var data []byte
	for _, t := range m.tensorSpecs() {
		n := 1
		for _, d := range t.shape {
			n *= d
		}
		begin := len(data)
		ln := strings.HasSuffix(t.name, "LayerNorm.weight")
		for range n {
			v := (r.Float32()*2 - 1) * 0.05
			if ln {
				v = 1
			}
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
		header[t.name] = map[string]any{"dtype": "F32", "shape": t.shape, "data_offsets": []int{begin, len(data)}}
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("hf: random model: %w", err)
	}
	file := binary.LittleEndian.AppendUint64(nil, uint64(len(hb)))
	file = append(append(file, hb...), data...)
	if err := os.WriteFile(filepath.Join(dir, fileWeights), file, 0o600); err != nil {
		return fmt.Errorf("hf: random model: %w", err)
	}
	return nil
}
