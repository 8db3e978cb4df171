package hf

import (
	"fmt"
	"slices"
	"strings"
)

// Known is a model continuity knows by name: where it lives on the
// Hugging Face hub, at which pinned revision, and what the folder may not
// say (the prefixes its authors ask for). `continuity model pull NAME`
// downloads exactly that revision.
type Known struct {
	// Name is the short name, e.g. "bge-small-en-v1.5".
	Name string
	// Repo is the hub id, e.g. "BAAI/bge-small-en-v1.5".
	Repo string
	// Revision is the pinned commit.
	Revision string
	// Pooling is the model's pooling, for a folder without a pooling
	// configuration (the hub's folders have one).
	Pooling Pooling
	// QueryPrefix is put before a search query, PassagePrefix before a
	// text that is searched, as the model's authors ask.
	QueryPrefix, PassagePrefix string
	// Dimension is the vector length.
	Dimension int
	// DownloadMB is about how much `model pull` downloads.
	DownloadMB int
	// License is the model's license.
	License string
	// SHA256 pins the content of some files (path → hex sha256): a hub or
	// mirror that reports another hash for them is refused.
	SHA256 map[string]string
	// Source says where the pinned revision comes from.
	Source string
}

// bgeInstruction is the retrieval instruction bge (English v1.5) and
// arctic-embed (v1) put before queries.
const bgeInstruction = "Represent this sentence for searching relevant passages: "

// knownModels are the models of the BERT family this embedder is made
// for. The revisions of bge-small and all-MiniLM were pinned by the
// project; those of e5-small-v2, gte-small and arctic-embed-s are the
// revisions the MTEB benchmark (embeddings-benchmark/mteb, mteb/models)
// evaluates. Each pull checks every file against the sizes and hashes the
// hub reports for that revision.
var knownModels = []Known{
	{
		Name: "bge-small-en-v1.5", Repo: "BAAI/bge-small-en-v1.5",
		Revision: "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a",
		Pooling:  PoolCLS, QueryPrefix: bgeInstruction,
		Dimension: 384, DownloadMB: 134, License: "MIT",
		SHA256: map[string]string{fileWeights: "3c9f31665447c8911517620762200d2245a2518d6e7208acc78cd9db317e21ad"},
		Source: "pinned by the project (issue 20)",
	},
	{
		Name: "all-MiniLM-L6-v2", Repo: "sentence-transformers/all-MiniLM-L6-v2",
		Revision:  "c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
		Pooling:   PoolMean,
		Dimension: 384, DownloadMB: 92, License: "Apache-2.0",
		Source: "pinned by the project (issue 20)",
	},
	{
		Name: "e5-small-v2", Repo: "intfloat/e5-small-v2",
		Revision: "dca8b1a9dae0d4575df2bf423a5edb485a431236",
		Pooling:  PoolMean, QueryPrefix: "query: ", PassagePrefix: "passage: ",
		Dimension: 384, DownloadMB: 135, License: "MIT",
		Source: "MTEB's model registry (mteb/models/e5_models.py)",
	},
	{
		Name: "gte-small", Repo: "thenlper/gte-small",
		Revision:  "17e1f347d17fe144873b1201da91788898c639cd",
		Pooling:   PoolMean,
		Dimension: 384, DownloadMB: 68, License: "MIT",
		Source: "MTEB's model registry (mteb/models/gte_models.py)",
	},
	{
		Name: "snowflake-arctic-embed-s", Repo: "Snowflake/snowflake-arctic-embed-s",
		Revision: "d3c1d2d433dd0fdc8e9ca01331a5f225639e798f",
		Pooling:  PoolCLS, QueryPrefix: bgeInstruction,
		Dimension: 384, DownloadMB: 135, License: "Apache-2.0",
		Source: "MTEB's model registry (mteb/models/arctic_models.py)",
	},
}

// DefaultModel is the model `--embedder hf` uses without --embed-model.
const DefaultModel = "bge-small-en-v1.5"

// KnownModels returns the known models, in a stable order.
func KnownModels() []Known { return slices.Clone(knownModels) }

// LookupKnown finds a known model by short name or hub id (case
// insensitive).
func LookupKnown(name string) (*Known, bool) {
	for i := range knownModels {
		k := &knownModels[i]
		if strings.EqualFold(name, k.Name) || strings.EqualFold(name, k.Repo) {
			c := *k
			return &c, true
		}
	}
	return nil, false
}

// KnownNames lists the known short names, for messages.
func KnownNames() string {
	var names []string
	for _, k := range knownModels {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// validRepo checks a hub id: owner/name, each of letters, digits, '-',
// '_' and '.', not starting with '.'.
func validRepo(repo string) error {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || strings.Contains(name, "/") {
		return fmt.Errorf("%q is not a hub id (owner/name)", repo)
	}
	for _, part := range []string{owner, name} {
		if part == "" || len(part) > 96 || part[0] == '.' || part[0] == '-' {
			return fmt.Errorf("%q is not a hub id (owner/name)", repo)
		}
		for _, r := range part {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
				return fmt.Errorf("%q is not a hub id (owner/name)", repo)
			}
		}
	}
	return nil
}
