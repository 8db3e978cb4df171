package hf

import (
	"math"
	"strings"
)

// Pooling is how a sequence's token vectors become one sentence vector
// (sentence-transformers' Pooling module). Several modes concatenate
// their vectors, in the order CLS, max, mean, mean_sqrt_len, as
// sentence-transformers does.
type Pooling uint8

const (
	// PoolCLS takes the first token's vector ([CLS]): bge, arctic-embed.
	PoolCLS Pooling = 1 << iota
	// PoolMax takes each component's maximum over the tokens.
	PoolMax
	// PoolMean averages the tokens' vectors (special tokens included):
	// all-MiniLM, e5, gte.
	PoolMean
	// PoolMeanSqrtLen sums them and divides by √tokens.
	PoolMeanSqrtLen
)

var poolingNames = map[string]Pooling{
	"cls": PoolCLS, "max": PoolMax, "mean": PoolMean, "mean_sqrt_len_tokens": PoolMeanSqrtLen,
}

// String names the modes, e.g. "cls" or "mean".
func (p Pooling) String() string {
	var names []string
	for _, m := range []struct {
		p    Pooling
		name string
	}{{PoolCLS, "cls"}, {PoolMax, "max"}, {PoolMean, "mean"}, {PoolMeanSqrtLen, "mean_sqrt_len_tokens"}} {
		if p&m.p != 0 {
			names = append(names, m.name)
		}
	}
	return strings.Join(names, "+")
}

// modes is how many modes p concatenates.
func (p Pooling) modes() int {
	n := 0
	for q := p; q != 0; q &= q - 1 {
		n++
	}
	return n
}

// pool writes the pooled vector of one sequence's token vectors x (n
// rows of h) into dst (modes()·h).
func (p Pooling) pool(dst, x []float32, n, h int) {
	off := 0
	if p&PoolCLS != 0 {
		copy(dst[off:off+h], x[:h])
		off += h
	}
	if p&PoolMax != 0 {
		d := dst[off : off+h]
		copy(d, x[:h])
		for r := 1; r < n; r++ {
			for j, a := range x[r*h : (r+1)*h] {
				d[j] = max(d[j], a)
			}
		}
		off += h
	}
	if p&(PoolMean|PoolMeanSqrtLen) != 0 {
		sum := make([]float32, h)
		for r := range n {
			for j, a := range x[r*h : (r+1)*h] {
				sum[j] += a
			}
		}
		if p&PoolMean != 0 {
			d := dst[off : off+h]
			for j, s := range sum {
				d[j] = s / float32(n)
			}
			off += h
		}
		if p&PoolMeanSqrtLen != 0 {
			d := dst[off : off+h]
			q := float32(math.Sqrt(float64(n)))
			for j, s := range sum {
				d[j] = s / q
			}
		}
	}
}

// normalize scales v to unit length (a zero vector stays zero), as
// sentence-transformers' Normalize module does (it divides by
// max(‖v‖, 1e-12)).
func normalize(v []float32) {
	var ss float64
	for _, a := range v {
		ss += float64(a) * float64(a)
	}
	n := math.Max(math.Sqrt(ss), 1e-12)
	for i, a := range v {
		v[i] = float32(float64(a) / n)
	}
}
