package embed

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"unicode/utf8"

	"github.com/praxis-os/continuity/analyze"
)

// The builtin embedder: a hashed feature embedding.
//
// Features of a text, from the tokens of analyze.Tokens minus stopwords and
// single ASCII letters (analyze.Meaningless):
//
//   - unigrams: each word's stem (analyze.Stem: Snowball English);
//   - bigrams: each pair of adjacent stems (adjacent after stopword removal);
//   - character n-grams: the 3-, 4- and 5-grams of each lowercased,
//     unstemmed word framed by boundary markers ("<run", "ning>", ...), for
//     words of at most maxNgramRunes runes that are not all digits.
//
// Each distinct feature gets the weight 1+ln(tf), tf being its count in the
// text, and is hashed (FNV-1a 64, then a murmur3 finaliser) into one of
// Dimension buckets with a sign taken from another hash bit, so that
// colliding features tend to cancel rather than pile up. Each feature class
// is accumulated separately, L2-normalised, scaled by its class weight, and
// the sum is L2-normalised. So the cosine of two texts is roughly the
// class-weight-averaged cosine of their unigram, bigram and n-gram profiles.
//
// Everything is integer hashing and IEEE float64 arithmetic (no math.Log,
// whose assembly and Go versions may differ in the last bit, and no fused
// multiply-add), so vectors are bit-identical across runs and platforms.
//
// Any change to the features, hashing or weights must bump builtinVersion:
// vectors of different versions must not be compared.
//
//	hash-v1: Porter stems (a hand-written stemmer)
//	hash-v2: Snowball English stems (analyze.Stem)
const builtinVersion = "hash-v2"

// DefaultBuiltinDimension is the builtin embedder's default dimension: 1 KiB
// per float32 vector, so 100k exchanges take about 100 MB.
const DefaultBuiltinDimension = 256

// Bounds of the builtin dimension.
const (
	MinBuiltinDimension = 16
	MaxBuiltinDimension = 8192
)

// Feature classes; the class is also hashed into the feature.
const (
	classUnigram = iota
	classBigram
	classNgram
	numClasses
)

// classWeights are the relative weights of the feature classes. With
// per-class normalisation their squares are the classes' shares of the
// cosine: unigrams 57%, bigrams 14%, character n-grams 28%.
var classWeights = [numClasses]float64{1.0, 0.5, 0.7}

const (
	minNgram      = 3
	maxNgram      = 5
	maxNgramRunes = 32 // longer words (hashes, base64) get no n-grams
	ngramBegin    = 0x01
	ngramEnd      = 0x02
	bigramSep     = 0xff
)

// FNV-1a 64-bit.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// fmix64 is murmur3's finaliser: it spreads FNV's weak low-entropy bits.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Seeds per class, so that a word and a 3-letter n-gram never collide on
// purpose.
var classSeed = [numClasses]uint64{
	fnvByte(fnvOffset, 'u'),
	fnvByte(fnvOffset, 'b'),
	fnvByte(fnvOffset, 'c'),
}

// featureKey finishes a feature hash: bits 0-1 hold the class, bit 2 the
// sign, bits 32-63 the bucket.
func featureKey(h uint64, class int) uint64 {
	k := fmix64(h)&^3 | uint64(class)
	if k == 0 {
		k = 1 << 3 // 0 marks an empty slot in the counter
	}
	return k
}

// builtin implements Embedder with hashed features.
type builtin struct {
	dim  int
	id   string
	pool sync.Pool // *builtinScratch
}

func newBuiltin(dim int) (*builtin, error) {
	if dim == 0 {
		dim = DefaultBuiltinDimension
	}
	if dim < MinBuiltinDimension || dim > MaxBuiltinDimension {
		return nil, fmt.Errorf("embed: builtin: dimension %d out of range [%d, %d]", dim, MinBuiltinDimension, MaxBuiltinDimension)
	}
	b := &builtin{dim: dim, id: fmt.Sprintf("builtin:%s:%d", builtinVersion, dim)}
	b.pool.New = func() any { return newBuiltinScratch(dim) }
	return b, nil
}

func (b *builtin) Identity() string { return b.id }
func (b *builtin) Dimension() int   { return b.dim }

// Embed embeds texts on the calling goroutine; it takes a few microseconds
// per kilobyte of text. A text without any feature (empty, only
// punctuation or stopwords) yields a zero vector.
func (b *builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	s := b.pool.Get().(*builtinScratch)
	defer b.pool.Put(s)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embed: builtin: %w", err)
		}
		out[i] = s.embed(t, make([]float32, b.dim))
	}
	return out, nil
}

// builtinScratch is the reusable working memory of one embedding.
type builtinScratch struct {
	dim   int
	tok   analyze.Tokenizer
	buf   []byte
	spans []analyze.Span
	stem  []byte
	offs  []int
	tab   counter
	acc   []float64 // numClasses * dim
}

func newBuiltinScratch(dim int) *builtinScratch {
	s := &builtinScratch{dim: dim, acc: make([]float64, numClasses*dim)}
	s.tab.init(1 << 12)
	return s
}

// embed writes the embedding of text into v (zeroed, len dim) and returns v.
func (s *builtinScratch) embed(text string, v []float32) []float32 {
	s.features(text)
	s.accumulate()
	s.combine(v)
	return v
}

// features counts the features of text into s.tab.
func (s *builtinScratch) features(text string) {
	s.tab.reset()
	s.buf, s.spans = s.tok.AppendTokens(s.buf[:0], s.spans[:0], text)
	var prev uint64 // bigram hash state after the previous stem and separator
	havePrev := false
	for _, sp := range s.spans {
		w := s.buf[sp.Start:sp.End]
		if analyze.Meaningless(w) {
			continue
		}
		s.stem = analyze.AppendStem(s.stem[:0], w)
		st := s.stem

		s.tab.add(featureKey(fnvBytes(classSeed[classUnigram], st), classUnigram))
		if havePrev {
			s.tab.add(featureKey(fnvBytes(prev, st), classBigram))
		}
		prev = fnvByte(fnvBytes(classSeed[classBigram], st), bigramSep)
		havePrev = true

		s.ngrams(w)
	}
}

// ngrams adds the character n-grams of the lowercased word w.
func (s *builtinScratch) ngrams(w []byte) {
	// Rune boundaries: offs[i] is the start of rune i, offs[n] = len(w).
	offs := s.offs[:0]
	digits := true
	for i := 0; i < len(w); {
		offs = append(offs, i)
		c := w[i]
		if c < '0' || c > '9' {
			digits = false
		}
		if c < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRune(w[i:])
			i += size
		}
	}
	n := len(offs)
	offs = append(offs, len(w))
	s.offs = offs
	if digits || n > maxNgramRunes {
		return
	}
	// Units -1 (begin marker), 0..n-1 (runes), n (end marker).
	feed := func(h uint64, u int) uint64 {
		switch u {
		case -1:
			return fnvByte(h, ngramBegin)
		case n:
			return fnvByte(h, ngramEnd)
		}
		return fnvBytes(h, w[offs[u]:offs[u+1]])
	}
	for start := -1; start+minNgram-1 <= n; start++ {
		h := classSeed[classNgram]
		for l := 1; l <= maxNgram && start+l-1 <= n; l++ {
			h = feed(h, start+l-1)
			if l >= minNgram {
				s.tab.add(featureKey(h, classNgram))
			}
		}
	}
}

// accumulate hashes the counted features into the per-class accumulators.
func (s *builtinScratch) accumulate() {
	clear(s.acc)
	dim := uint64(s.dim)
	for _, slot := range s.tab.used {
		k := s.tab.keys[slot]
		w := tfWeight(s.tab.counts[slot])
		bucket := ((k >> 32) * dim) >> 32 // in [0, dim): Lemire's range reduction
		i := int(k&3)*s.dim + int(bucket)
		if k&4 != 0 {
			s.acc[i] -= w
		} else {
			s.acc[i] += w
		}
	}
}

// combine writes the class-weighted sum of the normalised class vectors,
// normalised, into v. v stays zero when there is no feature.
func (s *builtinScratch) combine(v []float32) {
	var scale [numClasses]float64
	for c := range numClasses {
		a := s.acc[c*s.dim : (c+1)*s.dim]
		var sum float64
		for _, x := range a {
			sum += float64(x * x)
		}
		if sum > 0 {
			scale[c] = classWeights[c] / math.Sqrt(sum)
		}
	}
	u, b, g := s.acc[:s.dim], s.acc[s.dim:2*s.dim], s.acc[2*s.dim:]
	var norm float64
	for i := range s.dim {
		// Explicit conversions round each product: no fused multiply-add.
		x := float64(scale[0] * u[i])
		x += float64(scale[1] * b[i])
		x += float64(scale[2] * g[i])
		u[i] = x
		norm += float64(x * x)
	}
	if norm == 0 {
		return
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(u[i] / norm)
	}
}

// counter counts uint64 keys (never 0) in an open-addressing hash table
// with linear probing; used lists the occupied slots in insertion order.
type counter struct {
	keys   []uint64
	counts []uint32
	used   []int32
	mask   uint64
}

func (c *counter) init(size int) {
	c.keys = make([]uint64, size)
	c.counts = make([]uint32, size)
	c.used = make([]int32, 0, size/2)
	c.mask = uint64(size - 1)
}

func (c *counter) reset() {
	for _, i := range c.used {
		c.keys[i] = 0
		c.counts[i] = 0
	}
	c.used = c.used[:0]
}

func (c *counter) add(k uint64) {
	for i := (k >> 3) & c.mask; ; i = (i + 1) & c.mask {
		switch c.keys[i] {
		case k:
			c.counts[i]++
			return
		case 0:
			c.keys[i] = k
			c.counts[i] = 1
			c.used = append(c.used, int32(i))
			if 2*len(c.used) > len(c.keys) {
				c.grow()
			}
			return
		}
	}
}

// grow doubles the table, keeping the insertion order of used.
func (c *counter) grow() {
	keys, counts, used := c.keys, c.counts, c.used
	c.init(2 * len(keys))
	for _, old := range used {
		k := keys[old]
		i := (k >> 3) & c.mask
		for c.keys[i] != 0 {
			i = (i + 1) & c.mask
		}
		c.keys[i] = k
		c.counts[i] = counts[old]
		c.used = append(c.used, int32(i))
	}
}

// tfWeight is the sublinear term weight 1+ln(tf).
func tfWeight(tf uint32) float64 {
	if int(tf) < len(tfTable) {
		return tfTable[tf]
	}
	return 1 + detLog(float64(tf))
}

var tfTable = func() (t [256]float64) {
	for i := 1; i < len(t); i++ {
		t[i] = 1 + detLog(float64(i))
	}
	return t
}()

// detLog is the natural logarithm of x >= 1 using only correctly rounded
// IEEE operations, hence identical on every platform (math.Log has
// architecture-specific implementations). Accurate to about 1 ulp.
func detLog(x float64) float64 {
	// x = m * 2^e with m in [1, 2); ln x = e ln2 + 2 atanh((m-1)/(m+1)).
	e := bits.Len64(uint64(x)) - 1
	m := x / float64(uint64(1)<<e)
	z := float64((m - 1) / (m + 1))
	z2 := float64(z * z)
	var sum float64
	term := z
	for k := 1; k <= 41; k += 2 {
		sum += float64(term / float64(k))
		term = float64(term * z2)
	}
	return float64(float64(e)*math.Ln2) + 2*sum
}
