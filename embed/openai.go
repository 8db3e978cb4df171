package embed

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// newOpenAI returns an embedder for an OpenAI-compatible API (OpenAI, LM
// Studio, llama.cpp server, vLLM, LocalAI, ...). On the wire, for each
// text (the request chromem-go's NewEmbeddingFuncOpenAICompat sends):
//
//	POST <URL>/embeddings            (default https://api.openai.com/v1/embeddings)
//	Content-Type: application/json
//	Authorization: Bearer <api key>  (sent even when the key is empty)
//	{"input":"<text>","model":"<model>"}
//
//	200 {"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,...]}],...}
//
// Only data[0].embedding is read. The identity is
// "openai:<host[:port]>/<model>:<dim>": endpoints on different hosts may
// serve different weights under the same model name.
func newOpenAI(cfg Config) (Embedder, error) {
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, fmt.Errorf("embed: openai: no model configured (set %s, e.g. text-embedding-3-small)", EnvModel)
	}
	u, err := baseURL(cfg.URL, DefaultOpenAIURL, "/v1")
	if err != nil {
		return nil, fmt.Errorf("embed: openai %s: %w", model, err)
	}
	if cfg.APIKey == "" && strings.EqualFold(u.Hostname(), "api.openai.com") {
		return nil, fmt.Errorf("embed: openai %s: no API key for %s (set %s or %s)", model, u.Host, EnvAPIKey, EnvOpenAIKey)
	}
	base := u.String()
	r := &remote{
		provider: ProviderOpenAI,
		model:    model,
		base:     base,
		idPrefix: ProviderOpenAI + ":" + strings.ToLower(u.Host) + "/" + model,
		hint:     "is the server running at that address?",
		encode: func(text string) ([]byte, error) {
			return json.Marshal(map[string]string{"input": text, "model": model})
		},
		decode: decodeOpenAI,
		header: http.Header{
			"Content-Type":  {"application/json"},
			"Authorization": {"Bearer " + cfg.APIKey},
		},
	}
	return newRemote(r, cfg), nil
}

// decodeOpenAI reads the vector of an OpenAI list object: data[0].
func decodeOpenAI(body []byte) ([]float32, error) {
	var resp struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := decodeJSON(body, &resp); err != nil {
		return nil, err
	}
	if len(resp.Data) == 0 || len(resp.Data[0].Embedding) == 0 {
		return nil, errNoEmbedding
	}
	return resp.Data[0].Embedding, nil
}
