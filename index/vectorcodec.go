package index

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// How the index stores vectors (schema version 10): each vector of an
// exchange quantised to 8 bits, as the in-memory space (package vectors)
// keeps it: a float32 scale (little-endian) then dim int8 components;
// component j of the unit vector is about code[j]·scale. A vector that is
// zero (or not finite) is stored with scale 0 and is similar to nothing.
// An exchange's vectors (VectorsPerIdentity) sit one after the other in
// one blob: per·(4+dim) bytes, 1,032 for two of 512 dimensions, so that
// three rows fit a 4 KB page (float32, two vectors took 4,096 bytes and
// overflow pages).
//
// The space is loaded from these bytes as they are (no quantisation at
// start), and quantising the float32 vectors the embedder returns here,
// with the function the space used, gives the codes and scales the space
// built from float32 vectors before: search ranks as it did.

// textPromptAnswer is the text recipe (package vectors, TextPromptAnswer)
// whose exchanges have two vectors, the prompt's and the answer's;
// vectors.TestVectorsPerIdentity checks the two packages agree.
const textPromptAnswer = "user|ai"

// VectorsPerIdentity is how many vectors an exchange has under a space
// identity (package vectors, SpaceIdentity: the embedder's identity, "#"
// and the text recipe): 2 for the prompt-and-answer recipe (and an
// identity without recipe, whose recipe is the default one), else 1.
func VectorsPerIdentity(identity string) int {
	i := strings.LastIndex(identity, "#")
	if i < 0 || identity[i+1:] == textPromptAnswer {
		return 2
	}
	return 1
}

// QuantizeUnit writes vec, normalised, into dst (len(vec)) as int8
// components, the largest magnitude at ±127, and returns their scale; 0
// (and dst zero) when vec is zero or not finite.
func QuantizeUnit(dst []int8, vec []float32) float32 {
	norm := math.Sqrt(float64(dot32(vec, vec)))
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		clear(dst[:len(vec)])
		return 0
	}
	var m float32
	for _, x := range vec {
		if a := float32(math.Abs(float64(x))); a > m {
			m = a
		}
	}
	if m == 0 {
		clear(dst[:len(vec)])
		return 0
	}
	inv := float64(127 / m)
	dst = dst[:len(vec)]
	for j, x := range vec {
		// RoundToEven is one instruction on amd64 (ROUNDSD), and
		// branch-free: the signs of the components are random.
		dst[j] = int8(math.RoundToEven(float64(x) * inv))
	}
	return float32(float64(m) / norm / 127)
}

// dot32 is the float32 inner product in eight lanes (the order of
// vectors.Dot, so that a norm computed here is the space's to the bit).
func dot32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// encodeQuantized appends to buf the stored form of vec, per vectors of
// len(vec)/per components (per divides len(vec)).
func encodeQuantized(buf []byte, vec []float32, per int) []byte {
	dim := len(vec) / per
	for k := range per {
		o := len(buf)
		buf = append(buf, make([]byte, 4+dim)...)
		codes := int8s(buf[o+4 : o+4+dim])
		scale := QuantizeUnit(codes, vec[k*dim:(k+1)*dim])
		binary.LittleEndian.PutUint32(buf[o:], math.Float32bits(scale))
	}
	return buf
}

// Quantized is an exchange's stored vectors: Per vectors of Dim int8
// components (Codes, Per·Dim) and their scales.
type Quantized struct {
	Dim    int
	Codes  []int8
	Scales []float32
}

// decodeQuantized reads a stored blob of per vectors into q, whose slices
// are reused when large enough. The codes alias b (valid until the next
// row): callers copy them.
func decodeQuantized(q *Quantized, b []byte, per int) error {
	if per <= 0 || len(b)%per != 0 || len(b)/per <= 4 {
		return fmt.Errorf("%d bytes are not %d quantised vectors", len(b), per)
	}
	q.Dim = len(b)/per - 4
	if cap(q.Codes) < per*q.Dim {
		q.Codes = make([]int8, per*q.Dim)
	}
	q.Codes, q.Scales = q.Codes[:per*q.Dim], q.Scales[:0]
	for k := range per {
		o := k * (4 + q.Dim)
		q.Scales = append(q.Scales, math.Float32frombits(binary.LittleEndian.Uint32(b[o:])))
		copy(q.Codes[k*q.Dim:(k+1)*q.Dim], int8s(b[o+4:o+4+q.Dim]))
	}
	return nil
}

// Float32s returns the vectors as float32 (component j about
// code[j]·scale), one after the other: for tests and tools; search uses
// the codes.
func (q Quantized) Float32s() []float32 {
	out := make([]float32, len(q.Codes))
	for i, c := range q.Codes {
		out[i] = float32(c) * q.Scales[i/q.Dim]
	}
	return out
}

// int8s views b as int8s.
func int8s(b []byte) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}
