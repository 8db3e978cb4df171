package embed

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	chromem "github.com/philippgille/chromem-go"
)

// newOllama returns an embedder for an Ollama server, through chromem-go's
// NewEmbeddingFuncOllama. On the wire, for each text:
//
//	POST <URL>/embeddings            (default http://localhost:11434/api/embeddings)
//	Content-Type: application/json
//	{"model":"<model>","prompt":"<text>"}
//
//	200 {"embedding":[0.1,...]}
//
// This is Ollama's original single-text endpoint (still served; the newer
// /api/embed takes batches but chromem-go v0.7.0 does not use it). The
// identity is "ollama:<model>:<dim>": the same model gives the same vectors
// whichever host serves it.
func newOllama(cfg Config) (Embedder, error) {
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, fmt.Errorf("embed: ollama: no model configured (set %s, e.g. nomic-embed-text)", EnvModel)
	}
	u, err := baseURL(cfg.URL, DefaultOllamaURL, "/api")
	if err != nil {
		return nil, fmt.Errorf("embed: ollama %s: %w", model, err)
	}
	base := u.String()
	r := &remote{
		provider: ProviderOllama,
		model:    model,
		base:     base,
		idPrefix: ProviderOllama + ":" + model,
		hint:     "is Ollama running? start it with `ollama serve`",
		fn:       chromem.NewEmbeddingFuncOllama(model, base),
		reqBody: func(text string) ([]byte, error) {
			return json.Marshal(map[string]string{"model": model, "prompt": text})
		},
		header: http.Header{"Content-Type": {"application/json"}},
	}
	return newRemote(r, cfg), nil
}
