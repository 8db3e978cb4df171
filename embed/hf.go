package embed

import (
	"fmt"

	"github.com/praxis-os/continuity/embed/hf"
)

// newHF returns the in-process BERT-family embedder for cfg.Model (a
// model name looked up in the model cache, or a folder; see hf.Locate).
// It never downloads: a model that is not installed is an error that says
// how to pull it.
func newHF(cfg Config) (Embedder, error) {
	if cfg.URL != "" {
		return nil, fmt.Errorf("embed: hf: the model runs in process; --embed-url is for ollama and openai")
	}
	e, err := hf.New(cfg.Model, hf.Options{MaxChunks: cfg.Chunks, QueryPrefix: cfg.QueryPrefix, PassagePrefix: cfg.PassagePrefix})
	if err != nil {
		return nil, fmt.Errorf("embed: hf: %w", err)
	}
	if cfg.Dimension != 0 && cfg.Dimension != e.Dimension() {
		return nil, fmt.Errorf("embed: hf: dimension %d: the model's vectors have %d", cfg.Dimension, e.Dimension())
	}
	return e, nil
}
