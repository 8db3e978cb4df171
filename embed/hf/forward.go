package hf

import (
	"math"

	"github.com/viterin/vek/vek32"

	"github.com/praxis-os/continuity/embed/internal/cores"
	"github.com/praxis-os/continuity/embed/internal/gemm"
)

// The forward pass of BertModel (post-norm), as transformers computes it
// in float32, for a batch of sequences. The tokens of all sequences are
// stacked into one [tokens × hidden] matrix, so every dense layer is one
// matrix product over the whole batch (package gemm, shared among
// threads), and attention runs per sequence over its own tokens: what the
// attention mask achieves in a padded batch (a masked key's weight is 0).
//
//	x = LN(word[id] + position[p] + type[t])
//	per layer:  a = LN(x + MHA(x)·Wo + bo)
//	            x = LN(a + act(a·W1 + b1)·W2 + b2)
//
// then the pooling of each sequence's rows of x, and the Normalize module.

// sequence is one input to the model: token ids with the special tokens,
// and their token type ids.
type sequence struct {
	ids, types []int32
}

// workspace holds the scratch buffers of one forward call, reused across
// calls (from a pool) so that a batch allocates nothing.
type workspace struct {
	x, qkv, att, tmp, ffn  []float32
	q, kt, v, scores, head []float32
	ktP, vP                gemm.Packed // a head's keys and values, packed
	actTmp                 []float32   // the activation's scratch
}

// bytesPerToken is the scratch memory of a forward pass per token (x,
// qkv, att, tmp, ffn); a window's attention scores come on top.
func (m *Model) bytesPerToken() int {
	return 4 * (6*m.cfg.HiddenSize + m.cfg.IntermediateSize)
}

// grow returns b resized to n, reallocated only when too small.
func grow(b *[]float32, n int) []float32 {
	if cap(*b) < n {
		*b = make([]float32, n)
	}
	*b = (*b)[:n]
	return *b
}

// activations are the hidden_act values the forward pass implements;
// each works in place, with 3·geluBlock floats of scratch.
var activations = map[string]func(x, tmp []float32){
	"gelu":              geluErf,
	"gelu_new":          geluTanh,
	"gelu_pytorch_tanh": geluTanh,
	"relu":              func(x, _ []float32) { vek32.MaximumNumber_Inplace(x, 0) },
}

// forward computes the sentence vectors of seqs (each 1..MaxTokens ids)
// into out (len(seqs) × Dimension), normalised when the model has a
// Normalize module. The weights must be loaded.
func (m *Model) forward(ws *workspace, seqs []sequence, out []float32, ex cores.Exec) {
	c, w := m.cfg, m.w
	h, inter := c.HiddenSize, c.IntermediateSize
	eps := *c.LayerNormEps
	T := 0
	for _, s := range seqs {
		T += len(s.ids)
	}
	x := grow(&ws.x, T*h)
	row := 0
	for _, s := range seqs {
		for p, id := range s.ids {
			dst := x[row*h : (row+1)*h]
			vek32.Add_Into(dst, w.word[int(id)*h:(int(id)+1)*h], w.pos[p*h:(p+1)*h])
			tt := int(s.types[p])
			vek32.Add_Inplace(dst, w.typ[tt*h:(tt+1)*h])
			row++
		}
	}
	applyLayerNorm(x, x, w.embLN, h, eps)
	act := activations[c.HiddenAct]
	for l := range w.layers {
		lw := &w.layers[l]
		qkv := grow(&ws.qkv, T*3*h)
		lw.qkv.MulYield(qkv, x, T, ex.Threads, ex.Yield)
		addBias(qkv, lw.qkvB)
		att := grow(&ws.att, T*h)
		m.attention(ws, att, qkv, seqs)
		tmp := grow(&ws.tmp, T*h)
		lw.attnOut.MulYield(tmp, att, T, ex.Threads, ex.Yield)
		addBias(tmp, lw.attnOutB)
		vek32.Add_Inplace(tmp, x)
		applyLayerNorm(x, tmp, lw.attnLN, h, eps)
		f := grow(&ws.ffn, T*inter)
		lw.ffn1.MulYield(f, x, T, ex.Threads, ex.Yield)
		addBias(f, lw.ffn1B)
		act(f, grow(&ws.actTmp, 3*geluBlock))
		lw.ffn2.MulYield(tmp, f, T, ex.Threads, ex.Yield)
		addBias(tmp, lw.ffn2B)
		vek32.Add_Inplace(tmp, x)
		applyLayerNorm(x, tmp, lw.outLN, h, eps)
	}
	dim := m.Dimension()
	row = 0
	for i, s := range seqs {
		n := len(s.ids)
		v := out[i*dim : (i+1)*dim]
		m.pipe.pooling.pool(v, x[row*h:(row+n)*h], n, h)
		if m.pipe.normalize {
			normalize(v)
		}
		row += n
	}
}

// attention computes multi-head self-attention per sequence: qkv holds
// each token's query, key and value side by side (T × 3h), dst gets the
// heads' outputs side by side (T × h).
func (m *Model) attention(ws *workspace, dst, qkv []float32, seqs []sequence) {
	h, heads := m.cfg.HiddenSize, m.cfg.Heads
	d := h / heads
	scale := float32(1 / math.Sqrt(float64(d)))
	start := 0
	for _, s := range seqs {
		n := len(s.ids)
		q := grow(&ws.q, n*d)
		kt := grow(&ws.kt, d*n)
		v := grow(&ws.v, n*d)
		sc := grow(&ws.scores, n*n)
		o := grow(&ws.head, n*d)
		for hd := range heads {
			for i := range n {
				r := qkv[(start+i)*3*h:]
				copy(q[i*d:(i+1)*d], r[hd*d:(hd+1)*d])
				copy(v[i*d:(i+1)*d], r[2*h+hd*d:2*h+(hd+1)*d])
				for j, a := range r[h+hd*d : h+(hd+1)*d] {
					kt[j*n+i] = a
				}
			}
			// scores = q·kᵀ and out = softmax(scores)·v on the packed
			// kernel, one goroutine: the sequences of a batch are small.
			gemm.PackInto(&ws.ktP, d, n, kt)
			ws.ktP.Mul(sc, q, n, 1)
			for i := range n {
				row := sc[i*n : (i+1)*n]
				vek32.MulNumber_Inplace(row, scale)
				softmax(row)
			}
			gemm.PackInto(&ws.vP, n, d, v)
			ws.vP.Mul(o, sc, n, 1)
			for i := range n {
				copy(dst[(start+i)*h+hd*d:(start+i)*h+(hd+1)*d], o[i*d:(i+1)*d])
			}
		}
		start += n
	}
}

// softmax replaces x by its softmax, with a vectorised float32 exp
// (relative error under 1e-7; 0 for what underflows).
func softmax(x []float32) {
	vek32.AddNumber_Inplace(x, -vek32.Max(x))
	vek32.Exp_Inplace(x)
	vek32.MulNumber_Inplace(x, 1/vek32.Sum(x))
}

// applyLayerNorm normalises each row (of n) of src into dst (which may be
// src): (x - mean) / √(var + eps) · w + b, the statistics in float64.
func applyLayerNorm(dst, src []float32, ln layerNorm, n int, eps float64) {
	for r := 0; r+n <= len(src); r += n {
		row := src[r : r+n]
		var sum float64
		for _, a := range row {
			sum += float64(a)
		}
		mean := sum / float64(n)
		var sq float64
		for _, a := range row {
			dd := float64(a) - mean
			sq += dd * dd
		}
		inv := 1 / math.Sqrt(sq/float64(n)+eps)
		o := dst[r : r+n]
		for j, a := range row {
			o[j] = float32((float64(a)-mean)*inv)*ln.w[j] + ln.b[j]
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

// geluErf is transformers' "gelu": x·Φ(x) = x/2·(1 + erf(x/√2)). erf
// is Abramowitz and Stegun's 7.1.26 (absolute error under 1.5e-7),
// computed with vectorised passes over blocks of x, so that the negative
// side, x/2·erfc(|x|/√2), does not subtract: math.Erf, element by element,
// cost more than the layer's matrix products (BenchmarkEmbedBGEShape;
// docs/performance.md, "Figures behind design choices"). tmp holds at least
// 3·geluBlock floats.
func geluErf(x, tmp []float32) {
	const (
		invSqrt2 = 0.70710678118654752
		p        = 0.3275911
		a1       = 0.254829592
		a2       = -0.284496736
		a3       = 1.421413741
		a4       = -1.453152027
		a5       = 1.061405429
	)
	for lo := 0; lo < len(x); lo += geluBlock {
		xs := x[lo:min(lo+geluBlock, len(x))]
		n := len(xs)
		t, e, q := tmp[:n], tmp[geluBlock:geluBlock+n], tmp[2*geluBlock:2*geluBlock+n]
		vek32.MulNumber_Into(t, xs, invSqrt2) // z
		vek32.Mul_Into(e, t, t)
		vek32.MulNumber_Inplace(e, -1)
		vek32.Exp_Inplace(e) // exp(-z²)
		vek32.Abs_Inplace(t)
		vek32.MulNumber_Inplace(t, p)
		vek32.AddNumber_Inplace(t, 1)
		vek32.Inv_Inplace(t) // 1/(1 + p|z|)
		vek32.MulNumber_Into(q, t, a5)
		for _, a := range [...]float32{a4, a3, a2, a1} {
			vek32.AddNumber_Inplace(q, a)
			vek32.Mul_Inplace(q, t)
		}
		vek32.Mul_Inplace(q, e) // erfc(|z|)
		// x/2·erfc(|z|) + max(x, 0)·(1 - erfc(|z|)): x - x/2·erfc(z) for
		// x ≥ 0, x/2·erfc(-z) below, without a branch per element.
		vek32.Mul_Into(e, xs, q)
		vek32.MulNumber_Inplace(e, 0.5)
		vek32.MulNumber_Inplace(q, -1)
		vek32.AddNumber_Inplace(q, 1)
		vek32.MaximumNumber_Into(t, xs, 0)
		vek32.Mul_Inplace(t, q)
		vek32.Add_Into(xs, e, t)
	}
}

// geluBlock is the block of geluErf's passes: 3 blocks of scratch stay
// in L1.
const geluBlock = 1024

// geluTanh is the tanh approximation ("gelu_new", "gelu_pytorch_tanh").
func geluTanh(x, _ []float32) {
	const c = 0.7978845608028654 // √(2/π)
	for i, a := range x {
		f := float64(a)
		x[i] = float32(0.5 * f * (1 + math.Tanh(c*(f+0.044715*f*f*f))))
	}
}
