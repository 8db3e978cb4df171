package uselite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/x448/float16"

	"github.com/praxis-os/continuity/embed/internal/gemm"
)

// Weight kinds in uselite.bin (see internal/gen).
const (
	kindF32 = 1
	kindF16 = 2
)

// packed is a weight matrix packed for the shared micro-kernel (package
// embed/internal/gemm).
type packed = gemm.Packed

const panelWidth = gemm.PanelWidth

// pack packs w for the micro-kernel.
func pack(w matrix) packed { return gemm.Pack(w.rows, w.cols, w.data) }

// matrix is a row-major rows×cols float32 matrix.
type matrix struct {
	rows, cols int
	data       []float32
}

// readWeights parses uselite.bin into float32 tensors by name, each with
// its shape. fp16 weights are widened to float32 once, here.
func readWeights(b []byte) (map[string][]float32, map[string][]int, error) {
	bad := func(why string) error { return fmt.Errorf("uselite: weights file: %s", why) }
	if len(b) < 12 || string(b[:8]) != "USELITE1" {
		return nil, nil, bad("bad magic")
	}
	le := binary.LittleEndian
	n := int(le.Uint32(b[8:]))
	b = b[12:]
	vals := make(map[string][]float32, n)
	shapes := make(map[string][]int, n)
	for range n {
		if len(b) < 2 {
			return nil, nil, bad("truncated")
		}
		l := int(le.Uint16(b))
		if len(b) < 2+l+2 {
			return nil, nil, bad("truncated")
		}
		name := string(b[2 : 2+l])
		kind, ndim := b[2+l], int(b[3+l])
		b = b[4+l:]
		if len(b) < 4*ndim {
			return nil, nil, bad("truncated")
		}
		shape := make([]int, ndim)
		size := 1
		for i := range shape {
			shape[i] = int(le.Uint32(b[4*i:]))
			size *= shape[i]
		}
		b = b[4*ndim:]
		v := make([]float32, size)
		switch kind {
		case kindF16:
			if len(b) < 2*size {
				return nil, nil, bad("truncated " + name)
			}
			for i := range v {
				v[i] = float16.Frombits(le.Uint16(b[2*i:])).Float32()
			}
			b = b[2*size:]
		case kindF32:
			if len(b) < 4*size {
				return nil, nil, bad("truncated " + name)
			}
			for i := range v {
				v[i] = math.Float32frombits(le.Uint32(b[4*i:]))
			}
			b = b[4*size:]
		default:
			return nil, nil, bad(fmt.Sprintf("%s: unknown kind %d", name, kind))
		}
		vals[name], shapes[name] = v, shape
	}
	if len(b) != 0 {
		return nil, nil, bad("trailing bytes")
	}
	return vals, shapes, nil
}

// weightNames maps the graph's weight names to the parts of the model.
const (
	pfx   = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
	pfxTS = pfx + "TransformerStack/"
	pfxK  = "module/Encoder_en/KonaTransformer/Encode/"
)

// layerWeights are one transformer layer's parameters.
type layerWeights struct {
	in, out, heads int

	lnScale, lnBias   []float32 // pre-attention layer norm (in)
	qkv               matrix    // in × 3·in
	qkvBias           []float32
	attnOut           matrix // in × out
	attnOutBias       []float32
	residual          *matrix // in × out when in ≠ out ("AdjustResidualInput/dense")
	residualBias      []float32
	ffnScale, ffnBias []float32 // pre-FFN layer norm (out)
	ffn1              matrix    // out × 1536
	ffn1Bias          []float32
	ffn2              matrix // 1536 × out
	ffn2Bias          []float32

	// The matrices above, packed for the micro-kernel (package gemm).
	qkvP, attnOutP, residualP, ffn1P, ffn2P packed
}

// model holds every parameter of USE-lite.
type model struct {
	embeddings  matrix    // 8002 × 256
	invTimes    []float32 // 128 timing-signal frequencies
	layers      [2]layerWeights
	tanh        matrix // 512 × 512
	tanhP       packed
	tanhBias    []float32
	vocabulary  int
	modelDim    int // 256
	outputDim   int // 512
	maxTokens   int // 128
	hiddenFFN   int // 1536
	layerScales [2]float32
}

func loadModel(b []byte) (*model, error) {
	vals, shapes, err := readWeights(b)
	if err != nil {
		return nil, err
	}
	var errs []error
	get := func(name string, shape ...int) []float32 {
		v, ok := vals[name]
		if !ok {
			errs = append(errs, fmt.Errorf("uselite: weight %s missing", name))
			return nil
		}
		if fmt.Sprint(shapes[name]) != fmt.Sprint(shape) {
			errs = append(errs, fmt.Errorf("uselite: weight %s has shape %v, want %v", name, shapes[name], shape))
			return nil
		}
		return v
	}
	mat := func(name string, rows, cols int, shape ...int) matrix {
		return matrix{rows: rows, cols: cols, data: get(name, shape...)}
	}
	m := &model{modelDim: 256, outputDim: 512, maxTokens: 128, hiddenFFN: 1536}
	m.embeddings = mat("module/Embeddings_en", 8002, 256, 8002, 256)
	m.vocabulary = 8002
	m.invTimes = get(pfxTS+"Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", 1, 128)
	for l, dims := range [2][2]int{{256, 512}, {512, 512}} {
		in, out := dims[0], dims[1]
		L := fmt.Sprintf("Layer_%d/TransformerLayer/", l)
		w := &m.layers[l]
		w.in, w.out, w.heads = in, out, 4
		w.lnScale = get(pfx+L+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", in)
		w.lnBias = get(pfx+L+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", in)
		w.qkv = mat(pfxK+L+"MultiheadAttention/qkv_transform_single/kernel/part_0", in, 3*in, 1, 1, in, 3*in)
		w.qkvBias = get(pfx+L+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*in)
		w.attnOut = mat(pfxK+L+"MultiheadAttention/output_transform_single/kernel/part_0", in, out, 1, 1, in, out)
		w.attnOutBias = get(pfx+L+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", out)
		if in != out {
			r := mat(pfx+L+"dense/kernel/ConcatPartitions/concat", in, out, in, out)
			w.residual = &r
			w.residualBias = get(pfx+L+"dense/bias/ConcatPartitions/concat", out)
		}
		w.ffnScale = get(pfx+L+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", out)
		w.ffnBias = get(pfx+L+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", out)
		w.ffn1 = mat(pfxTS+L+"FFN/conv1/Tensordot/Reshape_1", out, 1536, out, 1536)
		w.ffn1Bias = get(pfx+L+"FFN/conv1/bias/ConcatPartitions/concat", 1536)
		w.ffn2 = mat(pfxTS+L+"FFN/conv2/Tensordot/Reshape_1", 1536, out, 1536, out)
		w.ffn2Bias = get(pfx+L+"FFN/conv2/bias/ConcatPartitions/concat", out)
		m.layerScales[l] = float32(1 / math.Sqrt(float64(in/w.heads)))
	}
	m.tanh = mat("module/Encoder_en/hidden_layers/tanh_layer_0/weights", 512, 512, 512, 512)
	m.tanhBias = get("module/Encoder_en/hidden_layers/tanh_layer_0/bias", 512)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Pack the matrices for the micro-kernel and drop the row-major copies.
	for l := range m.layers {
		w := &m.layers[l]
		w.qkvP, w.qkv.data = pack(w.qkv), nil
		w.attnOutP, w.attnOut.data = pack(w.attnOut), nil
		if w.residual != nil {
			w.residualP, w.residual.data = pack(*w.residual), nil
		}
		w.ffn1P, w.ffn1.data = pack(w.ffn1), nil
		w.ffn2P, w.ffn2.data = pack(w.ffn2), nil
	}
	m.tanhP, m.tanh.data = pack(m.tanh), nil
	return m, nil
}
