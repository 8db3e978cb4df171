package embed

import (
	"cmp"
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
	// ProviderUSELite is the default: Universal Sentence Encoder Lite,
	// a sentence-embedding model compiled into the binary (embed/uselite).
	ProviderUSELite = "uselite"
	// ProviderHash is the hashed word and character n-gram embedder
	// (lexical, not semantic; microseconds per text).
	ProviderHash = "hash"
	// ProviderBuiltin is the deprecated name of ProviderHash, accepted for
	// existing configurations. Its vectors keep the identity
	// "builtin:hash-v2:<dim>", so an index built with it stays valid.
	ProviderBuiltin = "builtin"
	ProviderOllama  = "ollama"
	ProviderOpenAI  = "openai"
	// ProviderHF is a BERT-family model run in process (embed/hf), read
	// from the model cache (`continuity model pull`) or a folder.
	ProviderHF = "hf"
	// DefaultProvider is used when no provider is configured.
	DefaultProvider = ProviderUSELite
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

// Config selects and configures an embedder. The zero value is the
// default embedder (uselite) with its default settings.
type Config struct {
	// Provider is "uselite" (or "", the default), "hash" ("builtin" is
	// its deprecated alias), "hf" (a BERT-family model in process),
	// "ollama" or "openai" (any OpenAI-compatible endpoint).
	Provider string
	// URL is the remote API's base URL, to which "/embeddings" is
	// appended. Defaults: DefaultOllamaURL, DefaultOpenAIURL. For ollama, a
	// URL without a path gets "/api" ("http://host:11434" works); for
	// openai, a URL without a path gets "/v1". A trailing "/embeddings" is
	// removed.
	URL string
	// Model is the remote model, used verbatim (required for remote
	// providers; "nomic-embed-text" and "nomic-embed-text:latest" are
	// different identities). For hash it must be "" or the hash version
	// ("hash-v2"); for uselite "" or uselite.Version. For hf, a model
	// name (bge-small-en-v1.5, a hub id, a name installed with
	// --from; "" is bge-small-en-v1.5) looked up in the model cache, or
	// a model folder.
	Model string
	// APIKey is sent as "Authorization: Bearer <key>" by the openai
	// provider. Required for api.openai.com, optional elsewhere.
	APIKey string
	// Dimension is the vector length. For hash, the number of hash
	// buckets (default DefaultBuiltinDimension). For uselite, 0 or 512.
	// For remote providers, the
	// expected dimension (0: learned from the first response); any other
	// length is an error.
	Dimension int
	// Timeout bounds each remote request (default DefaultTimeout).
	Timeout time.Duration
	// Concurrency bounds the requests in flight per Embed call of a remote
	// embedder (default DefaultConcurrency).
	Concurrency int
	// Chunks is, for uselite and hf, the most windows of the model (128
	// tokens for uselite) embedded per text (default 8); a non-default
	// value is part of the identity.
	Chunks int
	// QueryPrefix and PassagePrefix, when not nil, replace an hf model's
	// own prefixes (bge's retrieval instruction before queries, e5's
	// "query: " and "passage: "); "" means none. A passage prefix other
	// than the model's is part of the identity.
	QueryPrefix, PassagePrefix *string
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
	EnvChunks      = "CONTINUITY_EMBED_CHUNKS"      // uselite, hf: chunks per text
	EnvOpenAIKey   = "OPENAI_API_KEY"
	// EnvQueryPrefix and EnvPassagePrefix override an hf model's
	// prefixes; set and empty means no prefix.
	EnvQueryPrefix   = "CONTINUITY_EMBED_QUERY_PREFIX"
	EnvPassagePrefix = "CONTINUITY_EMBED_PASSAGE_PREFIX"
)

// ConfigFromEnv builds a Config from the environment: CONTINUITY_EMBEDDER,
// CONTINUITY_EMBED_URL, CONTINUITY_EMBED_MODEL, CONTINUITY_EMBED_API_KEY,
// CONTINUITY_EMBED_DIM, CONTINUITY_EMBED_TIMEOUT,
// CONTINUITY_EMBED_CONCURRENCY, CONTINUITY_EMBED_CHUNKS,
// CONTINUITY_EMBED_QUERY_PREFIX and CONTINUITY_EMBED_PASSAGE_PREFIX. Unset
// variables leave defaults. For the
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
	if v, ok := os.LookupEnv(EnvQueryPrefix); ok {
		cfg.QueryPrefix = &v
	}
	if v, ok := os.LookupEnv(EnvPassagePrefix); ok {
		cfg.PassagePrefix = &v
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
	if cfg.Chunks, err = envInt(EnvChunks); err != nil {
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
	if cfg.Chunks < 0 {
		return nil, fmt.Errorf("embed: negative chunks %d", cfg.Chunks)
	}
	p := strings.ToLower(strings.TrimSpace(cfg.Provider))
	if (cfg.QueryPrefix != nil || cfg.PassagePrefix != nil) && p != ProviderHF {
		return nil, fmt.Errorf("embed: %s: query and passage prefixes (%s, %s) apply to the hf embedder only", cmp.Or(p, DefaultProvider), EnvQueryPrefix, EnvPassagePrefix)
	}
	switch p {
	case "", ProviderUSELite:
		return newUSELite(cfg)
	case ProviderHash, ProviderBuiltin:
		if cfg.Model != "" && cfg.Model != builtinVersion {
			return nil, fmt.Errorf("embed: %s: unknown model %q (the hash embedder is %q; set a provider to use a model)", p, cfg.Model, builtinVersion)
		}
		return newBuiltin(cfg.Dimension)
	case ProviderHF:
		return newHF(cfg)
	case ProviderOllama:
		return newOllama(cfg)
	case ProviderOpenAI:
		return newOpenAI(cfg)
	default:
		return nil, fmt.Errorf("embed: %w %q (want %s, %s, %s, %s or %s)", ErrUnknownProvider, cfg.Provider, ProviderUSELite, ProviderHash, ProviderHF, ProviderOllama, ProviderOpenAI)
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
