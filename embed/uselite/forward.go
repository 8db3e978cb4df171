package uselite

import (
	"math"

	"github.com/viterin/vek/vek32"

	"github.com/praxis-os/continuity/embed/internal/cores"
)

// The forward pass of the USE-lite graph (dist/model.json), for a batch of
// token sequences of at most maxTokens ids each. The graph pads the batch
// into a dense [texts, longest, ·] tensor and masks the padding; here the
// tokens of all sequences are stacked into one [tokens, ·] matrix instead,
// so every dense layer is one matrix-matrix product over the whole batch,
// and attention runs per sequence over its own tokens only (what the mask
// achieves in the graph: a padded key gets a -1e9 bias, i.e. weight 0).
//
// Per token at position p of a sequence, with E the embedding table:
//
//	x = E[id] + (E[id] + timing(p))      // the graph adds the embedding twice
//	timing(p) = [sin(p·f_0..127), cos(p·f_0..127)]
//
// then two transformer layers (pre-norm, layer norm ε = 1e-6, 4 heads):
//
//	r = x·D + d  (layer 0 only: 256 → 512; layer 1: r = x)
//	y = MHA(LN(x))·O + o + r
//	x = y + relu(LN(y)·W1 + b1)·W2 + b2
//
// and per sequence: mean of x over its tokens, tanh(mean·T + t), L2-normalised.

// workspace holds the scratch buffers of one forward call, reused across
// calls to avoid allocating ~tens of MB per batch: bytesPerToken a token.
type workspace struct {
	bufs map[string][]float32
}

func (ws *workspace) get(name string, n int) []float32 {
	if ws.bufs == nil {
		ws.bufs = map[string][]float32{}
	}
	b := ws.bufs[name]
	if cap(b) < n {
		b = make([]float32, n)
		ws.bufs[name] = b
	}
	return b[:n]
}

// bytesPerToken is the scratch memory of a forward pass per token: the
// buffers of forward, layer and layerUpToFFN2 (x0, xa, xb, y, h, qkv,
// proj, f1); the per-sequence ones are small.
func (m *model) bytesPerToken() int {
	return 4 * (m.modelDim + 5*m.outputDim + 3*m.outputDim + m.hiddenFFN)
}

// timingTable returns timing(p) for p < maxTokens, row-major [maxTokens][2·128].
func (m *model) timingTable() []float32 {
	half := len(m.invTimes)
	t := make([]float32, m.maxTokens*2*half)
	for p := 0; p < m.maxTokens; p++ {
		row := t[p*2*half:]
		for j, f := range m.invTimes {
			a := float32(p) * f // float32 product, as in the graph
			row[j] = float32(math.Sin(float64(a)))
			row[half+j] = float32(math.Cos(float64(a)))
		}
	}
	return t
}

// forward embeds seqs (each 1..maxTokens ids) into out (len(seqs)×512),
// unit vectors.
func (e *Encoder) forward(ws *workspace, seqs [][]int32, out []float32, ex cores.Exec) {
	m := e.m
	T := 0
	for _, s := range seqs {
		T += len(s)
	}
	d0 := m.modelDim
	x := ws.get("x0", T*d0)
	row := 0
	for _, s := range seqs {
		for p, id := range s {
			emb := m.embeddings.data[int(id)*d0 : (int(id)+1)*d0]
			tim := e.timing[p*d0 : (p+1)*d0]
			dst := x[row*d0 : (row+1)*d0]
			for j := range dst {
				dst[j] = emb[j] + (emb[j] + tim[j])
			}
			row++
		}
	}
	dim := m.outputDim
	var pooled []float32
	if e.poolLate {
		for l := range m.layers {
			x = e.layer(ws, &m.layers[l], m.layerScales[l], seqs, x, T, [2]string{"xa", "xb"}[l], ex)
		}
		pooled = ws.get("pooled", len(seqs)*dim)
		meanRows(pooled, x, seqs, dim)
	} else {
		last := len(m.layers) - 1
		for l := range last {
			x = e.layer(ws, &m.layers[l], m.layerScales[l], seqs, x, T, [2]string{"xa", "xb"}[l], ex)
		}
		pooled = e.lastLayerPooled(ws, &m.layers[last], m.layerScales[last], seqs, x, T, ex)
	}
	// Then the tanh layer, then the L2 norm.
	m.tanhP.MulYield(out, pooled, len(seqs), ex.Threads, ex.Yield)
	for i := range seqs {
		v := out[i*dim : (i+1)*dim]
		vek32.Add_Inplace(v, m.tanhBias)
		var ss float64
		for j, a := range v {
			t := float32(math.Tanh(float64(a)))
			v[j] = t
			ss += float64(t) * float64(t)
		}
		inv := float32(1 / math.Sqrt(math.Max(ss, 1e-12)))
		vek32.MulNumber_Inplace(v, inv)
	}
}

// layer runs one transformer layer over x (T×in) and returns T×out.
func (e *Encoder) layer(ws *workspace, w *layerWeights, scale float32, seqs [][]int32, x []float32, T int, outName string, ex cores.Exec) []float32 {
	out := w.out
	y, f1 := e.layerUpToFFN2(ws, w, scale, seqs, x, T, ex)
	f2 := ws.get("proj", T*out) // proj and h2 are done with
	w.ffn2P.MulYield(f2, f1, T, ex.Threads, ex.Yield)
	addBias(f2, w.ffn2Bias)
	nx := ws.get(outName, T*out) // distinct from x, which the caller may still hold
	vek32.Add_Into(nx, y, f2)
	return nx
}

// layerUpToFFN2 runs a layer over x (T×in) up to its second feed-forward
// product, which layer and lastLayerPooled apply differently: it returns
// y, the residual stream after attention (T×out), and f1, the first
// feed-forward product after its relu (T×hidden).
func (e *Encoder) layerUpToFFN2(ws *workspace, w *layerWeights, scale float32, seqs [][]int32, x []float32, T int, ex cores.Exec) (y, f1 []float32) {
	in, out := w.in, w.out
	// Residual input.
	y = ws.get("y", T*out)
	if w.residual != nil {
		w.residualP.MulYield(y, x, T, ex.Threads, ex.Yield)
		addBias(y, w.residualBias)
	} else {
		copy(y, x)
	}
	h := ws.get("h", T*in)
	layerNorm(h, x, w.lnScale, w.lnBias, in)
	qkv := ws.get("qkv", T*3*in)
	w.qkvP.MulYield(qkv, h, T, ex.Threads, ex.Yield)
	addBias(qkv, w.qkvBias)
	att := ws.get("h", T*in) // h is done with
	e.attention(ws, att, qkv, seqs, in, w.heads, scale)
	proj := ws.get("proj", T*out)
	w.attnOutP.MulYield(proj, att, T, ex.Threads, ex.Yield)
	addBias(proj, w.attnOutBias)
	vek32.Add_Inplace(y, proj)

	// Feed-forward, first product.
	h2 := ws.get("proj", T*out) // proj is done with
	layerNorm(h2, y, w.ffnScale, w.ffnBias, out)
	f1 = ws.get("f1", T*w.ffn1P.N)
	w.ffn1P.MulYield(f1, h2, T, ex.Threads, ex.Yield)
	addBias(f1, w.ffn1Bias)
	vek32.MaximumNumber_Inplace(f1, 0) // relu
	return y, f1
}

// meanRows sets dst (len(seqs)×dim) to the mean of each sequence's rows
// of x.
func meanRows(dst, x []float32, seqs [][]int32, dim int) {
	row := 0
	for i, s := range seqs {
		d := dst[i*dim : (i+1)*dim]
		clear(d)
		for range s {
			vek32.Add_Inplace(d, x[row*dim:(row+1)*dim])
			row++
		}
		vek32.DivNumber_Inplace(d, float32(max(len(s), 1)))
	}
}

// lastLayerPooled runs the last transformer layer over x and returns the
// mean of its output over each sequence's tokens (len(seqs)×out), which
// is all the model reads of it. The layer's last step is affine per
// token, x' = y + relu(h)·W2 + b2, so its mean is mean(y) +
// mean(relu(h))·W2 + b2: the second feed-forward product (a sixth of the
// model's work per token) runs once per sequence instead of once per
// token. Summed in another order, the vectors differ from the per-token
// mean by float32 rounding only (TestPooledLastLayer: components within
// 1e-6, cosine 1 - 1e-12).
func (e *Encoder) lastLayerPooled(ws *workspace, w *layerWeights, scale float32, seqs [][]int32, x []float32, T int, ex cores.Exec) []float32 {
	out, hid := w.out, w.ffn1P.N
	y, f1 := e.layerUpToFFN2(ws, w, scale, seqs, x, T, ex)

	S := len(seqs)
	meanY := ws.get("meanY", S*out)
	meanRows(meanY, y, seqs, out)
	meanF1 := ws.get("meanF1", S*hid)
	meanRows(meanF1, f1, seqs, hid)
	pooled := ws.get("pooled", S*out)
	w.ffn2P.MulYield(pooled, meanF1, S, ex.Threads, ex.Yield)
	addBias(pooled, w.ffn2Bias)
	vek32.Add_Inplace(pooled, meanY)
	return pooled
}

// attention computes multi-head self-attention per sequence: qkv is T×3·dim
// (queries, keys, values side by side), the result T×dim.
func (e *Encoder) attention(ws *workspace, dst, qkv []float32, seqs [][]int32, dim, heads int, scale float32) {
	d := dim / heads
	stride := 3 * dim
	start := 0
	for _, s := range seqs {
		n := len(s)
		q := ws.get("q", n*d)
		kt := ws.get("kt", d*n)
		v := ws.get("v", n*d)
		sc := ws.get("scores", n*n)
		o := ws.get("o", n*d)
		for hd := 0; hd < heads; hd++ {
			for i := 0; i < n; i++ {
				r := qkv[(start+i)*stride:]
				copy(q[i*d:(i+1)*d], r[hd*d:(hd+1)*d])
				copy(v[i*d:(i+1)*d], r[2*dim+hd*d:2*dim+(hd+1)*d])
				k := r[dim+hd*d : dim+(hd+1)*d]
				for j, a := range k {
					kt[j*n+i] = a
				}
			}
			vek32.MulNumber_Inplace(q, scale)
			vek32.MatMul_Into(sc, q, kt, d)
			for i := 0; i < n; i++ {
				softmax(sc[i*n : (i+1)*n])
			}
			vek32.MatMul_Into(o, sc, v, n)
			for i := 0; i < n; i++ {
				copy(dst[(start+i)*dim+hd*d:(start+i)*dim+(hd+1)*d], o[i*d:(i+1)*d])
			}
		}
		start += n
	}
}

func softmax(x []float32) {
	m := x[0]
	for _, a := range x[1:] {
		m = max(m, a)
	}
	var s float32
	for i, a := range x {
		ea := float32(math.Exp(float64(a - m)))
		x[i] = ea
		s += ea
	}
	inv := 1 / s
	for i := range x {
		x[i] *= inv
	}
}

// layerNorm normalises each row of x (rows of n) into dst:
// (x - mean) · rsqrt(var + 1e-6) · scale + bias.
func layerNorm(dst, x, scale, bias []float32, n int) {
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n]
		var sum float64
		for _, a := range row {
			sum += float64(a)
		}
		mean := float32(sum / float64(n))
		var sq float64
		for _, a := range row {
			dd := float64(a - mean)
			sq += dd * dd
		}
		rs := float32(1 / math.Sqrt(sq/float64(n)+1e-6))
		o := dst[r : r+n]
		for j, a := range row {
			o[j] = (a-mean)*(scale[j]*rs) + bias[j]
		}
	}
}

// addBias adds b to every row of x.
func addBias(x, b []float32) {
	n := len(b)
	for r := 0; r+n <= len(x); r += n {
		vek32.Add_Inplace(x[r:r+n], b)
	}
}
