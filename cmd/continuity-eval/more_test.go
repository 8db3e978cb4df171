package main

import (
	"context"
	"math"
	"testing"

	"github.com/praxis-os/continuity/embed"
)

// fakeChunker cuts a text into one chunk per word; chunk k's vector is
// the unit vector of axis (len(word) + k) % 4.
type fakeChunker struct{ calls int }

func (f *fakeChunker) EmbedChunks(ctx context.Context, texts []string) ([][][]float32, error) {
	f.calls++
	out := make([][][]float32, len(texts))
	for i, t := range texts {
		k := 0
		for _, w := range splitWords(t) {
			v := make([]float32, 4)
			v[(len(w)+k)%4] = 1
			out[i] = append(out[i], v)
			k++
		}
	}
	return out, nil
}

func splitWords(s string) []string {
	var out []string
	w := ""
	for _, r := range s + " " {
		if r == ' ' {
			if w != "" {
				out = append(out, w)
			}
			w = ""
			continue
		}
		w += string(r)
	}
	return out
}

// TestChunkEmbedders: chunkN is the N-th chunk's vector (zero past the
// last chunk), chunkmean their normalised mean, and the chunks of a text
// are computed once for all N.
func TestChunkEmbedders(t *testing.T) {
	fc := &fakeChunker{}
	memo := &chunkMemo{m: map[string][][]float32{}}
	var cs []chunkEmbedder
	for k := 1; k <= 3; k++ {
		cs = append(cs, chunkEmbedder{enc: fc, base: "fake:m:4", dim: 4, n: k, memo: memo})
	}
	if id := cs[1].Identity(); id != "fake:m-chunk2:4" {
		t.Errorf("identity %q", id)
	}
	texts := []string{"ab cde", "x"}
	for k, c := range cs {
		vs, err := c.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		switch k {
		case 0:
			if vs[0][2] != 1 || vs[1][1] != 1 {
				t.Errorf("chunk1: %v", vs)
			}
		case 1:
			if vs[0][0] != 1 || vs[1][0]+vs[1][1]+vs[1][2]+vs[1][3] != 0 {
				t.Errorf("chunk2: %v (want a zero vector for a one-chunk text)", vs)
			}
		}
	}
	if fc.calls != 1 {
		t.Errorf("chunks computed %d times, want once", fc.calls)
	}
	m := chunkMean{chunks: []embed.Embedder{cs[0], cs[1], cs[2]}, id: "fake:m-chunkmean:4", dim: 4}
	vs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if h := float32(1 / math.Sqrt2); math.Abs(float64(vs[0][0]-h)) > 1e-6 || math.Abs(float64(vs[0][2]-h)) > 1e-6 || vs[1][1] != 1 {
		t.Errorf("chunkmean: %v", vs)
	}
}
