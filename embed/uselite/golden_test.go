package uselite

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/embed/internal/cores"
)

// golden is testdata/golden.json, written by testdata/jsref/golden.js with
// the package's own JS runtime (@energetic-ai/embeddings on TF.js).
type golden struct {
	Source string `json:"source"`
	Texts  []struct {
		Text   string  `json:"text"`
		IDs    []int32 `json:"ids"`
		Vector string  `json:"vector"` // base64 little-endian float32
	} `json:"texts"`
}

func readGolden(t testing.TB) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Texts) < 50 {
		t.Fatalf("golden.json has %d texts, want at least 50", len(g.Texts))
	}
	return g
}

func decodeVector(t testing.TB, s string) []float32 {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 4*Dimension {
		t.Fatalf("golden vector: %d bytes, %v", len(b), err)
	}
	v := make([]float32, Dimension)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// TestGoldenTokens checks the Go tokenizer gives exactly the JS tokenizer's
// ids on every golden text.
func TestGoldenTokens(t *testing.T) {
	g := readGolden(t)
	e, err := newLoaded(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Texts {
		if got := e.tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%.60q):\n got %v\nwant %v", c.Text, got, c.IDs)
		}
	}
}

// TestGoldenVectors checks the Go forward pass (fp16 weights) against the
// JS runtime (float32 weights) on the first 128 tokens of every golden text
// (what the JS model reads): cosine ≥ 0.999 each. The texts are embedded in
// one batch, so stacking sequences of different lengths is covered too.
func TestGoldenVectors(t *testing.T) {
	g := readGolden(t)
	e, err := newLoaded(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var seqs [][]int32
	for _, c := range g.Texts {
		seqs = append(seqs, c.IDs[:min(len(c.IDs), MaxTokens)])
	}
	out := make([]float32, len(seqs)*Dimension)
	e.forward(&workspace{}, seqs, out, cores.Exec{Threads: 1})
	worst := 1.0
	for i, c := range g.Texts {
		cos := cosine(out[i*Dimension:(i+1)*Dimension], decodeVector(t, c.Vector))
		worst = min(worst, cos)
		if cos < 0.999 {
			t.Errorf("%.60q (%d tokens): cosine %.5f with the JS vector, want ≥ 0.999", c.Text, len(c.IDs), cos)
		}
	}
	t.Logf("%d texts, worst cosine %.6f (%s)", len(g.Texts), worst, g.Source)
}

// quantize8 rounds a packed matrix to int8 with one scale per output
// column (symmetric), and back: what int8 storage would give.
func quantize8(p packed) packed {
	q := packed{K: p.K, N: p.N, Data: make([]float32, len(p.Data))}
	for pi := 0; pi < p.Panels(); pi++ {
		base := pi * p.K * panelWidth
		for c := 0; c < panelWidth; c++ {
			var m float64
			for k := 0; k < p.K; k++ {
				m = math.Max(m, math.Abs(float64(p.Data[base+k*panelWidth+c])))
			}
			s := m / 127
			for k := 0; k < p.K; k++ {
				i := base + k*panelWidth + c
				if s > 0 {
					q.Data[i] = float32(math.Round(float64(p.Data[i])/s) * s)
				}
			}
		}
	}
	return q
}

// TestGoldenInt8 measures what int8 weights (per-column scales; the
// embedding table per row) would cost against the JS vectors. It only
// reports: the committed weights are fp16.
func TestGoldenInt8(t *testing.T) {
	g := readGolden(t)
	e, err := newLoaded(Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := *e.m
	for l := range m.layers {
		w := m.layers[l]
		w.qkvP, w.attnOutP, w.ffn1P, w.ffn2P = quantize8(w.qkvP), quantize8(w.attnOutP), quantize8(w.ffn1P), quantize8(w.ffn2P)
		if w.residual != nil {
			w.residualP = quantize8(w.residualP)
		}
		m.layers[l] = w
	}
	m.tanhP = quantize8(m.tanhP)
	emb := make([]float32, len(m.embeddings.data))
	d := m.embeddings.cols
	for r := 0; r < m.embeddings.rows; r++ {
		row := m.embeddings.data[r*d : (r+1)*d]
		var mx float64
		for _, a := range row {
			mx = math.Max(mx, math.Abs(float64(a)))
		}
		for j, a := range row {
			if mx > 0 {
				s := mx / 127
				emb[r*d+j] = float32(math.Round(float64(a)/s) * s)
			}
		}
	}
	m.embeddings.data = emb
	q := &Encoder{tok: e.tok, m: &m, timing: e.timing, maxChunks: e.maxChunks, threads: e.threads}
	var seqs [][]int32
	for _, c := range g.Texts {
		seqs = append(seqs, c.IDs[:min(len(c.IDs), MaxTokens)])
	}
	out := make([]float32, len(seqs)*Dimension)
	q.forward(&workspace{}, seqs, out, cores.Exec{Threads: 1})
	worst, sum := 1.0, 0.0
	for i, c := range g.Texts {
		cos := cosine(out[i*Dimension:(i+1)*Dimension], decodeVector(t, c.Vector))
		worst = min(worst, cos)
		sum += cos
	}
	t.Logf("int8 weights: worst cosine %.5f, mean %.5f over %d texts (fp16: see TestGoldenVectors)", worst, sum/float64(len(g.Texts)), len(g.Texts))
}

// newLoaded is New with the model read, for tests that reach into it.
func newLoaded(opts Options) (*Encoder, error) {
	e, err := New(opts)
	if err != nil {
		return nil, err
	}
	return e, e.init()
}
