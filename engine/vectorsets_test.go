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
