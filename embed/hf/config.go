package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The files of a Hugging Face / sentence-transformers model folder.
const (
	fileConfig    = "config.json"
	fileWeights   = "model.safetensors"
	fileTokenizer = "tokenizer.json"
	fileModules   = "modules.json"
	fileSBert     = "sentence_bert_config.json"
	fileSTConfig  = "config_sentence_transformers.json"
	filePooling   = "1_Pooling/config.json"
)

// maxConfigFile bounds the JSON configuration files read (they are a few
// hundred bytes).
const maxConfigFile = 1 << 20

// readJSON decodes the JSON file path into v. A missing file is reported
// as fs.ErrNotExist (wrapped); a malformed one names the file.
func readJSON(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() > maxConfigFile {
		return fmt.Errorf("%s: %d bytes, too large for a configuration file", path, st.Size())
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// bertConfig is what the forward pass reads of config.json.
type bertConfig struct {
	ModelType             string   `json:"model_type"`
	Architectures         []string `json:"architectures"`
	VocabSize             int      `json:"vocab_size"`
	HiddenSize            int      `json:"hidden_size"`
	Layers                int      `json:"num_hidden_layers"`
	Heads                 int      `json:"num_attention_heads"`
	IntermediateSize      int      `json:"intermediate_size"`
	MaxPositions          int      `json:"max_position_embeddings"`
	TypeVocabSize         *int     `json:"type_vocab_size"`
	HiddenAct             string   `json:"hidden_act"`
	LayerNormEps          *float64 `json:"layer_norm_eps"`
	PositionEmbeddingType string   `json:"position_embedding_type"`
}

// Bounds on config.json's sizes: far above any BERT-family model, low
// enough that a hostile file cannot make the loader allocate terabytes
// (the weights' shapes must match anyway).
const (
	maxHidden    = 8192
	maxLayers    = 128
	maxVocab     = 1 << 21
	maxPositions = 1 << 16
)

// readBertConfig reads and checks config.json: a BERT model (model_type
// "bert") with absolute positions and a GELU (or ReLU) activation.
func readBertConfig(path string) (*bertConfig, error) {
	var c bertConfig
	if err := readJSON(path, &c); err != nil {
		return nil, err
	}
	if !isBert(&c) {
		found := fmt.Sprintf("%q", c.ModelType)
		if c.ModelType == "" {
			found = "missing"
		}
		if len(c.Architectures) > 0 {
			found += " (architectures " + strings.Join(c.Architectures, ", ") + ")"
		}
		return nil, fmt.Errorf("%s: model_type %s: continuity's hf embedder reads BERT models (model_type \"bert\": bge-small, all-MiniLM, e5-small, gte-small, arctic-embed-s) only", path, found)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...))
	}
	switch {
	case c.HiddenSize <= 0 || c.HiddenSize > maxHidden:
		return nil, bad("hidden_size %d", c.HiddenSize)
	case c.Layers <= 0 || c.Layers > maxLayers:
		return nil, bad("num_hidden_layers %d", c.Layers)
	case c.Heads <= 0 || c.HiddenSize%c.Heads != 0:
		return nil, bad("num_attention_heads %d does not divide hidden_size %d", c.Heads, c.HiddenSize)
	case c.IntermediateSize <= 0 || c.IntermediateSize > 8*maxHidden:
		return nil, bad("intermediate_size %d", c.IntermediateSize)
	case c.VocabSize <= 0 || c.VocabSize > maxVocab:
		return nil, bad("vocab_size %d", c.VocabSize)
	case c.MaxPositions <= 0 || c.MaxPositions > maxPositions:
		return nil, bad("max_position_embeddings %d", c.MaxPositions)
	case c.TypeVocabSize != nil && (*c.TypeVocabSize <= 0 || *c.TypeVocabSize > 1024):
		return nil, bad("type_vocab_size %d", *c.TypeVocabSize)
	case c.LayerNormEps != nil && !(*c.LayerNormEps > 0 && *c.LayerNormEps < 1):
		return nil, bad("layer_norm_eps %v", *c.LayerNormEps)
	case c.PositionEmbeddingType != "" && c.PositionEmbeddingType != "absolute":
		return nil, bad("position_embedding_type %q: continuity reads absolute position embeddings only", c.PositionEmbeddingType)
	}
	if _, ok := activations[c.HiddenAct]; !ok {
		return nil, bad("hidden_act %q: continuity reads gelu, gelu_new, gelu_pytorch_tanh and relu", c.HiddenAct)
	}
	if c.TypeVocabSize == nil {
		two := 2
		c.TypeVocabSize = &two
	}
	if c.LayerNormEps == nil {
		eps := 1e-12
		c.LayerNormEps = &eps
	}
	return &c, nil
}

// isBert reports whether config.json describes a BERT model: model_type
// "bert", or no model_type and a Bert* architecture (older files).
func isBert(c *bertConfig) bool {
	if c.ModelType != "" {
		return c.ModelType == "bert"
	}
	for _, a := range c.Architectures {
		if strings.HasPrefix(a, "Bert") {
			return true
		}
	}
	return false
}

// pipeline is what the sentence-transformers files say: the folder that
// holds the transformer (modules.json's Transformer path), the pooling,
// whether a Normalize module follows, the longest input, and the prompts.
type pipeline struct {
	transformerDir string
	pooling        Pooling
	normalize      bool
	maxSeqLength   int               // 0: not set
	prompts        map[string]string // config_sentence_transformers.json
	poolingFile    string            // the pooling configuration read, relative to the folder ("" none)
	hasModules     bool
	hasPooling     bool
}

// readPipeline reads modules.json, the pooling configuration,
// sentence_bert_config.json and config_sentence_transformers.json of dir.
// A folder without modules.json (a plain transformers model) gets mean
// pooling and normalisation unless def says otherwise.
func readPipeline(dir string, def *Known) (*pipeline, error) {
	p := &pipeline{transformerDir: dir, pooling: PoolMean, normalize: true}
	if def != nil {
		p.pooling = def.Pooling
	}
	poolingPath, err := p.readModules(dir)
	if err != nil {
		return nil, err
	}
	if err := p.readPooling(dir, poolingPath); err != nil {
		return nil, err
	}
	if err := p.readSBertConfig(dir); err != nil {
		return nil, err
	}
	var stc struct {
		Prompts map[string]string `json:"prompts"`
	}
	switch err := readJSON(filepath.Join(dir, fileSTConfig), &stc); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		p.prompts = stc.Prompts
	}
	return p, nil
}

// readModules reads modules.json, when there is one: a Transformer, then a
// Pooling, then an optional Normalize module, in that order. It returns the
// path of the pooling configuration to read (1_Pooling/config.json
// without modules.json).
func (p *pipeline) readModules(dir string) (poolingPath string, err error) {
	var modules []struct {
		Name string `json:"name"`
		Path string `json:"path"`
		Type string `json:"type"`
	}
	poolingPath = filepath.Join(dir, filepath.FromSlash(filePooling))
	switch err := readJSON(filepath.Join(dir, fileModules), &modules); {
	case errors.Is(err, fs.ErrNotExist):
		return poolingPath, nil
	case err != nil:
		return "", err
	}
	p.hasModules = true
	p.normalize = false
	sawPooling, sawTransformer := false, false
	for i, m := range modules {
		typ := m.Type[strings.LastIndex(m.Type, ".")+1:]
		sub, err := insideDir(dir, m.Path)
		if err != nil {
			return "", fmt.Errorf("%s: module %s: %w", filepath.Join(dir, fileModules), m.Name, err)
		}
		switch {
		case typ == "Transformer" && i == 0:
			p.transformerDir = sub
			sawTransformer = true
		case typ == "Pooling" && sawTransformer && !sawPooling:
			poolingPath = filepath.Join(sub, "config.json")
			sawPooling = true
		case typ == "Normalize" && sawPooling:
			p.normalize = true
		default:
			return "", fmt.Errorf("%s: module %d (%s, %s): continuity's hf embedder reads a Transformer, then a Pooling, then an optional Normalize module", filepath.Join(dir, fileModules), i, m.Path, m.Type)
		}
	}
	if !sawPooling {
		return "", fmt.Errorf("%s: no Pooling module", filepath.Join(dir, fileModules))
	}
	return poolingPath, nil
}

// readPooling reads the pooling configuration at poolingPath, when there
// is one (a folder without modules.json may have none: the known model's
// pooling, else mean, applies).
func (p *pipeline) readPooling(dir, poolingPath string) error {
	var pc struct {
		Mode          string `json:"pooling_mode"`
		CLS           bool   `json:"pooling_mode_cls_token"`
		Mean          bool   `json:"pooling_mode_mean_tokens"`
		Max           bool   `json:"pooling_mode_max_tokens"`
		MeanSqrt      bool   `json:"pooling_mode_mean_sqrt_len_tokens"`
		WeightedMean  bool   `json:"pooling_mode_weightedmean_tokens"`
		LastToken     bool   `json:"pooling_mode_lasttoken"`
		IncludePrompt *bool  `json:"include_prompt"`
	}
	switch err := readJSON(poolingPath, &pc); {
	case errors.Is(err, fs.ErrNotExist):
		if p.hasModules {
			return fmt.Errorf("%s: missing (modules.json names a Pooling module)", poolingPath)
		}
		return nil
	case err != nil:
		return err
	}
	p.hasPooling = true
	if rel, err := filepath.Rel(dir, poolingPath); err == nil {
		p.poolingFile = filepath.ToSlash(rel)
	}
	if pc.WeightedMean || pc.LastToken {
		return fmt.Errorf("%s: weighted-mean and last-token pooling are not supported (CLS, mean, max and mean_sqrt_len are)", poolingPath)
	}
	if pc.IncludePrompt != nil && !*pc.IncludePrompt {
		return fmt.Errorf("%s: include_prompt false is not supported", poolingPath)
	}
	var mode Pooling
	if pc.Mode != "" {
		m, ok := poolingNames[pc.Mode]
		if !ok {
			return fmt.Errorf("%s: pooling_mode %q is not supported (cls, mean, max, mean_sqrt_len_tokens are)", poolingPath, pc.Mode)
		}
		mode = m
	} else {
		for _, f := range []struct {
			set  bool
			mode Pooling
		}{{pc.CLS, PoolCLS}, {pc.Max, PoolMax}, {pc.Mean, PoolMean}, {pc.MeanSqrt, PoolMeanSqrtLen}} {
			if f.set {
				mode |= f.mode
			}
		}
	}
	if mode == 0 {
		return fmt.Errorf("%s: no pooling mode set", poolingPath)
	}
	p.pooling = mode
	return nil
}

// readSBertConfig reads sentence_bert_config.json's max_seq_length, when
// the folder has one.
func (p *pipeline) readSBertConfig(dir string) error {
	var sb struct {
		MaxSeqLength *int `json:"max_seq_length"`
	}
	switch err := readJSON(filepath.Join(dir, fileSBert), &sb); {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	if sb.MaxSeqLength != nil {
		if *sb.MaxSeqLength <= 0 {
			return fmt.Errorf("%s: max_seq_length %d", filepath.Join(dir, fileSBert), *sb.MaxSeqLength)
		}
		p.maxSeqLength = *sb.MaxSeqLength
	}
	return nil
}

// insideDir returns dir/rel, refusing a path that leaves dir.
func insideDir(dir, rel string) (string, error) {
	if rel == "" {
		return dir, nil
	}
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("path %q leaves the model folder", rel)
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}
