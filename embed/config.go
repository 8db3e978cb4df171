package embed

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Providers.
const (
	ProviderBuiltin = "builtin"
	ProviderOllama  = "ollama"
	ProviderOpenAI  = "openai"
)

// Defaults.
const (
	DefaultOllamaURL   = "http://localhost:11434/api"
	DefaultOpenAIURL   = "https://api.openai.com/v1"
	DefaultTimeout     = 60 * time.Second // per remote call; a cold Ollama model takes a while to load
	DefaultConcurrency = 4
)

// ErrUnknownProvider is returned by New for a provider it does not know.
var ErrUnknownProvider = errors.New("unknown embedding provider")

// Config selects and configures an embedder. The zero value is the builtin
// embedder with its default dimension.
type Config struct {
	// Provider is "builtin" (or ""), "ollama" or "openai" (any
	// OpenAI-compatible endpoint).
	Provider string
	// URL is the remote API's base URL, to which "/embeddings" is
	// appended. Defaults: DefaultOllamaURL, DefaultOpenAIURL. For ollama, a
	// URL without a path gets "/api" ("http://host:11434" works); for
	// openai, a URL without a path gets "/v1". A trailing "/embeddings" is
	// removed.
	URL string
	// Model is the remote model, used verbatim (required for remote
	// providers; "nomic-embed-text" and "nomic-embed-text:latest" are
	// different identities). For builtin it must be "" or the builtin
	// version ("hash-v1").
	Model string
	// APIKey is sent as "Authorization: Bearer <key>" by the openai
	// provider. Required for api.openai.com, optional elsewhere.
	APIKey string
	// Dimension is the vector length. For builtin, the number of hash
	// buckets (default DefaultBuiltinDimension). For remote providers, the
	// expected dimension (0: learned from the first response); any other
	// length is an error.
	Dimension int
	// Timeout bounds each remote request (default DefaultTimeout).
	Timeout time.Duration
	// Concurrency bounds the requests in flight per Embed call of a remote
	// embedder (default DefaultConcurrency).
	Concurrency int
}

// Environment variables read by ConfigFromEnv.
const (
	EnvProvider    = "CONTINUITY_EMBEDDER"
	EnvURL         = "CONTINUITY_EMBED_URL"
	EnvModel       = "CONTINUITY_EMBED_MODEL"
	EnvAPIKey      = "CONTINUITY_EMBED_API_KEY"
	EnvDimension   = "CONTINUITY_EMBED_DIM"
	EnvTimeout     = "CONTINUITY_EMBED_TIMEOUT"     // a time.ParseDuration string, e.g. "90s"
	EnvConcurrency = "CONTINUITY_EMBED_CONCURRENCY" // requests in flight
	EnvOpenAIKey   = "OPENAI_API_KEY"
)

// ConfigFromEnv builds a Config from the environment: CONTINUITY_EMBEDDER,
// CONTINUITY_EMBED_URL, CONTINUITY_EMBED_MODEL, CONTINUITY_EMBED_API_KEY,
// CONTINUITY_EMBED_DIM, CONTINUITY_EMBED_TIMEOUT and
// CONTINUITY_EMBED_CONCURRENCY. Unset variables leave defaults. For the
// openai provider without CONTINUITY_EMBED_API_KEY, OPENAI_API_KEY is used,
// but only when the URL is OpenAI's own, so that an OpenAI key is never
// sent to another server. It fails only on malformed numbers and durations;
// New validates the rest.
func ConfigFromEnv() (Config, error) {
	cfg := Config{
		Provider: strings.TrimSpace(os.Getenv(EnvProvider)),
		URL:      strings.TrimSpace(os.Getenv(EnvURL)),
		Model:    strings.TrimSpace(os.Getenv(EnvModel)),
		APIKey:   strings.TrimSpace(os.Getenv(EnvAPIKey)),
	}
	if cfg.APIKey == "" && strings.EqualFold(cfg.Provider, ProviderOpenAI) && isOpenAIURL(cfg.URL) {
		cfg.APIKey = strings.TrimSpace(os.Getenv(EnvOpenAIKey))
	}
	var err error
	if cfg.Dimension, err = envInt(EnvDimension); err != nil {
		return Config{}, err
	}
	if cfg.Concurrency, err = envInt(EnvConcurrency); err != nil {
		return Config{}, err
	}
	if s := strings.TrimSpace(os.Getenv(EnvTimeout)); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("embed: %s=%q: want a positive duration such as 90s", EnvTimeout, s)
		}
		cfg.Timeout = d
	}
	return cfg, nil
}

func envInt(name string) (int, error) {
	s := strings.TrimSpace(os.Getenv(name))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("embed: %s=%q: want a positive integer", name, s)
	}
	return n, nil
}

// isOpenAIURL reports whether u is empty (the default) or on api.openai.com.
func isOpenAIURL(u string) bool {
	if u == "" {
		return true
	}
	p, err := url.Parse(u)
	return err == nil && strings.EqualFold(p.Hostname(), "api.openai.com")
}

// New returns the embedder cfg describes. It does not contact any server;
// see Resolve and Prober.
func New(cfg Config) (Embedder, error) {
	if cfg.Dimension < 0 {
		return nil, fmt.Errorf("embed: negative dimension %d", cfg.Dimension)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("embed: negative timeout %s", cfg.Timeout)
	}
	if cfg.Concurrency < 0 {
		return nil, fmt.Errorf("embed: negative concurrency %d", cfg.Concurrency)
	}
	switch p := strings.ToLower(strings.TrimSpace(cfg.Provider)); p {
	case "", ProviderBuiltin:
		if cfg.Model != "" && cfg.Model != builtinVersion {
			return nil, fmt.Errorf("embed: builtin: unknown model %q (the builtin embedder is %q; set a provider to use a model)", cfg.Model, builtinVersion)
		}
		return newBuiltin(cfg.Dimension)
	case ProviderOllama:
		return newOllama(cfg)
	case ProviderOpenAI:
		return newOpenAI(cfg)
	default:
		return nil, fmt.Errorf("embed: %w %q (want %s, %s or %s)", ErrUnknownProvider, cfg.Provider, ProviderBuiltin, ProviderOllama, ProviderOpenAI)
	}
}

// baseURL validates a remote base URL, applies the provider's default path
// and strips a trailing slash or "/embeddings".
func baseURL(raw, def, defPath string) (*url.URL, error) {
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("invalid URL %q: want http(s)://host[:port]/path", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("invalid URL %q: no query or fragment allowed", raw)
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/embeddings")
	u.RawPath = ""
	if u.Path == "" {
		u.Path = defPath
	}
	return u, nil
}
