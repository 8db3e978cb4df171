package embed

import (
	"fmt"

	"github.com/praxis-os/continuity/embed/uselite"
)

// newUSELite returns the default embedder: Universal Sentence Encoder Lite,
// in the binary (see package uselite).
func newUSELite(cfg Config) (Embedder, error) {
	if cfg.Model != "" && cfg.Model != uselite.Version {
		return nil, fmt.Errorf("embed: uselite: unknown model %q (the built-in model is %q; set a provider to use another model)", cfg.Model, uselite.Version)
	}
	if cfg.Dimension != 0 && cfg.Dimension != uselite.Dimension {
		return nil, fmt.Errorf("embed: uselite: dimension %d: the model's vectors have %d", cfg.Dimension, uselite.Dimension)
	}
	e, err := uselite.New(uselite.Options{MaxChunks: cfg.Chunks})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return e, nil
}
