package engine

import (
	"strings"
	"testing"

	"github.com/praxis-os/continuity/index"
)

// TestResolveVectorSet: 'continuity vectors --drop uselite' names the
// uselite vectors as the user types the embedder, not only by the whole
// identity; a name that matches none or several says what the index holds
// (it said "holds no vectors of uselite" while it held them).
func TestResolveVectorSet(t *testing.T) {
	sets := []index.VectorSet{
		{Identity: "builtin:hash-v2:256#user|ai"},
		{Identity: "hf:bge-small-en-v1.5:384#user|ai"},
		{Identity: "hf:e5-small-v2:384#user|ai"},
		{Identity: "uselite:use-lite-en-0.2.0-f16:512#user|ai"},
	}
	for _, tc := range []struct {
		name, want, err string
	}{
		{name: "uselite:use-lite-en-0.2.0-f16:512#user|ai", want: "uselite:use-lite-en-0.2.0-f16:512#user|ai"},
		{name: "uselite", want: "uselite:use-lite-en-0.2.0-f16:512#user|ai"},
		{name: "hash", want: "builtin:hash-v2:256#user|ai"},
		{name: "builtin:hash", want: "builtin:hash-v2:256#user|ai"},
		{name: "hf:bge", want: "hf:bge-small-en-v1.5:384#user|ai"},
		{name: "hf", err: `"hf" names the vectors of 2 embedders: hf:bge-small-en-v1.5:384#user|ai, hf:e5-small-v2:384#user|ai`},
		{name: "ollama", err: `the index holds no vectors of "ollama"; it holds those of builtin:hash-v2:256#user|ai, hf:bge-small-en-v1.5:384#user|ai`},
	} {
		got, err := resolveVectorSet(tc.name, sets)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("resolveVectorSet(%q) = %q, %v; want an error with %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("resolveVectorSet(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := resolveVectorSet("uselite", nil); err == nil || !strings.Contains(err.Error(), "holds none at all") {
		t.Errorf("resolveVectorSet with no vectors: %v", err)
	}
}

// TestDropVectorsOfUnreachedEmbedder: while the embedder in use is a
// remote one whose server has not answered (its space identity known up
// to its dimension: "provider:model:?#recipe"), its stored vectors are
// not another embedder's: --drop refuses them (it dropped them, and every
// exchange was embedded again, paid for, once the server answered).
func TestDropVectorsOfUnreachedEmbedder(t *testing.T) {
	e := openIngested(t, newLayout(t), Options{})
	defer e.Close()
	sets, err := e.db.VectorSets(ctx)
	if err != nil || len(sets) != 1 {
		t.Fatalf("VectorSets = %+v, %v", sets, err)
	}
	id := sets[0].Identity // builtin:hash-v2:256#...
	head, recipe, _ := strings.Cut(id, "#")
	pattern := head[:strings.LastIndex(head, ":")+1] + "?#" + recipe
	for _, inUse := range []string{id, pattern} {
		if _, err := dropVectors(ctx, e.db, inUse, DropVectorsRequest{Embedder: "hash"}); err == nil || !strings.Contains(err.Error(), "embedder in use") {
			t.Errorf("drop hash while %s is in use: %v, want a refusal", inUse, err)
		}
	}
	if _, err := dropVectors(ctx, e.db, pattern, DropVectorsRequest{Embedder: "hash"}); err == nil || !strings.Contains(err.Error(), "its server has not answered yet") {
		t.Errorf("drop while %s is in use: %v, want it to say the server has not answered", pattern, err)
	}
	resp, err := dropVectors(ctx, e.db, "builtin:hash-v2:?#other", DropVectorsRequest{Embedder: "hash"})
	if err != nil || resp.Vectors != 10 {
		t.Errorf("drop hash while another recipe's pattern is in use: %+v, %v; want 10 dropped", resp, err)
	}
}
