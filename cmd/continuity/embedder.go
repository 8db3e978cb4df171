package main

import (
	"cmp"
	"flag"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/embed/hf"
)

// embedFlags select the embedder. Each flag defaults to its environment
// variable (CONTINUITY_EMBEDDER, CONTINUITY_EMBED_URL, CONTINUITY_EMBED_MODEL,
// CONTINUITY_EMBED_DIM; CONTINUITY_EMBED_CHUNKS only from the environment;
// the API key only from CONTINUITY_EMBED_API_KEY or
// OPENAI_API_KEY, never a flag, so it stays out of process listings).
type embedFlags struct {
	cfg embed.Config
	err error
}

func (f *embedFlags) register(fs *flag.FlagSet) {
	f.cfg, f.err = embed.ConfigFromEnv()
	fs.StringVar(&f.cfg.Provider, "embedder", cmp.Or(f.cfg.Provider, embed.DefaultProvider), "embedder: uselite (default: Universal Sentence Encoder Lite, a sentence-embedding model inside the binary, offline), hf (a BERT-family model such as bge-small-en-v1.5, run in process, offline once 'continuity model pull' has installed it), hash (offline hashed word n-grams: lexical, not semantic; \"builtin\" is its deprecated old name), ollama, or openai (any OpenAI-compatible server) (env "+embed.EnvProvider+")")
	fs.StringVar(&f.cfg.URL, "embed-url", f.cfg.URL, "embedding server base URL (env "+embed.EnvURL+"; default "+embed.DefaultOllamaURL+" or "+embed.DefaultOpenAIURL+")")
	fs.StringVar(&f.cfg.Model, "embed-model", f.cfg.Model, "embedding model: for hf a model name ("+hf.KnownNames()+"; default "+hf.DefaultModel+"), a hub id installed with 'continuity model pull', or a model folder; for ollama and openai the server's model, e.g. nomic-embed-text (env "+embed.EnvModel+")")
	fs.Var(optString{&f.cfg.QueryPrefix}, "embed-query-prefix", "hf: the `TEXT` put before a search query, instead of the model's own (bge's retrieval instruction, e5's \"query: \"); \"\" for none (env "+embed.EnvQueryPrefix+")")
	fs.Var(optString{&f.cfg.PassagePrefix}, "embed-passage-prefix", "hf: the `TEXT` put before each exchange embedded for search, instead of the model's own (e5's \"passage: \"); changing it re-embeds the index (env "+embed.EnvPassagePrefix+")")
	fs.IntVar(&f.cfg.Dimension, "embed-dim", f.cfg.Dimension, "vector dimension (uselite: 512; hash: buckets, default 256; remote: expected, 0 = learn) (env "+embed.EnvDimension+")")
}

// given reports whether fs's command line set any embedder flag: the
// embedder was chosen for this command, not taken from the environment.
func (f *embedFlags) given(fs *flag.FlagSet) bool {
	set := false
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "embedder", "embed-url", "embed-model", "embed-query-prefix", "embed-passage-prefix", "embed-dim":
			set = true
		}
	})
	return set
}

// envEmbedder is the embedder the environment configures, for the
// commands without embedder flags.
func envEmbedder() *embedFlags {
	var ef embedFlags
	ef.cfg, ef.err = embed.ConfigFromEnv()
	return &ef
}

// embedder builds the configured embedder (no network call).
func (f *embedFlags) embedder() (embed.Embedder, error) {
	if f.err != nil {
		return nil, usageError("embedder settings: %v", f.err)
	}
	e, err := embed.New(f.cfg)
	if err != nil {
		return nil, usageError("embedder: %v", err)
	}
	return e, nil
}

// optString is a flag that sets a *string: nil until the flag is given
// (the default applies), the value given otherwise ("" included).
type optString struct{ p **string }

func (o optString) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return **o.p
}

func (o optString) Set(s string) error {
	*o.p = &s
	return nil
}
