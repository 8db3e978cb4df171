package embed

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// newOllama returns an embedder for an Ollama server. On the wire, for
// each text (the request chromem-go's NewEmbeddingFuncOllama sends):
//
//	POST <URL>/embeddings            (default http://localhost:11434/api/embeddings)
//	Content-Type: application/json
//	{"model":"<model>","prompt":"<text>"}
//
//	200 {"embedding":[0.1,...]}
//
// This is Ollama's original single-text endpoint (still served; the newer
// /api/embed takes batches). The
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
		encode: func(text string) ([]byte, error) {
			return json.Marshal(map[string]string{"model": model, "prompt": text})
		},
		decode: decodeOllama,
		header: http.Header{"Content-Type": {"application/json"}},
	}
	return newRemote(r, cfg), nil
}

// decodeOllama reads the vector of Ollama's answer.
func decodeOllama(body []byte) ([]float32, error) {
	var resp struct {
		Embedding []float32 `json:"embedding"`
	}
	if err := decodeJSON(body, &resp); err != nil {
		return nil, err
	}
	if len(resp.Embedding) == 0 {
		return nil, errNoEmbedding
	}
	return resp.Embedding, nil
}
