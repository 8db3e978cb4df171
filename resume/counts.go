package resume

// Token counts kept between packs.
//
// Counting tokens is most of what a pack costs when nothing is kept: every
// exchange tried is counted whole, cut ones segment by segment, and the
// rendered pack several times over. Most of that text is the same from one
// pack to the next (the chain's tail, its recent exchanges, the lines of a
// cut exchange, the pack's own headers). So a Counter given a countCache
// splits a text into chunks whose counts add up exactly to the text's
// count, and remembers the count of each chunk.
//
// Where a text may be split. The encodings' pre-tokenizers (the regular
// expressions that cut a text into pieces before byte-pair merging) match
// no piece that depends on what comes before it (no look-behind), and in
// cl100k_base and o200k_base no piece crosses
//
//   - the point just after '\n' followed by a visible ASCII character other
//     than '/' (no pattern joins a line break to what follows it, except
//     o200k_base's punctuation run, which may take a "/" after line
//     breaks), nor
//   - the point just before a space that follows an ASCII letter or digit
//     (a run of letters or digits ends there, and no pattern puts a letter
//     or digit and a following space in one piece).
//
// At such a point the pieces before it are those of the prefix counted
// alone and the pieces after it those of the rest, so the counts add. Split
// at every such point, a text falls into words (" parser", " end. Next",
// "\n## Session"), which repeat: most of a new exchange is counted from
// words seen before. TestChunkedCountExact checks the rule on real and
// random texts and FuzzChunkedCount on any. Other encodings (r50k, p50k:
// there "\n\n" before a word is two pieces, at the end of a text one) are
// counted whole, still cached by the whole text.
//
// Memory. A short chunk is remembered by its text (a copy), a longer one
// by two 64-bit hashes of it. The cache keeps two generations; when the
// current one is full, the older is dropped and the current becomes the
// older (an LRU approximation: what was used in the last generation
// survives one more).

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
)

// chunkSafe are the encodings (by codec name) whose counts add up over
// chunks split at line starts (see above).
var chunkSafe = map[string]bool{"cl100k_base": true, "o200k_base": true}

// chunks calls f with consecutive chunks of s that cover it exactly, split
// at every point described above.
func chunks(s string, f func(string)) {
	start := 0
	for i := 1; i < len(s); i++ {
		if chunkStart(s, i) {
			f(s[start:i])
			start = i
		}
	}
	if start < len(s) {
		f(s[start:])
	}
}

// chunkStart reports whether a chunk of s starts at i (0 < i < len(s)).
func chunkStart(s string, i int) bool {
	c := s[i]
	return s[i-1] == '\n' && c >= '!' && c <= '~' && c != '/' || c == ' ' && isASCIIAlnum(s[i-1])
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// DefaultCountCacheEntries is how many chunk counts a Cache keeps per
// generation (two generations: some 20 MiB at most).
const DefaultCountCacheEntries = 1 << 17

// shortChunk is the longest chunk remembered by its text.
const shortChunk = 48

type countKey [2]uint64

// countCache remembers token counts of chunks. Safe for concurrent use.
type countCache struct {
	seeds [2]maphash.Seed
	max   int

	mu   sync.Mutex
	encs map[string]*encCounts

	hits, misses atomic.Int64
}

// encCounts are the counts of one encoding: current and older generation,
// short chunks by text, longer ones by hash.
type encCounts struct {
	short, oldShort map[string]int32
	long, oldLong   map[countKey]int32
}

func newCountCache(entries int) *countCache {
	if entries <= 0 {
		entries = DefaultCountCacheEntries
	}
	return &countCache{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, max: entries,
		encs: map[string]*encCounts{}}
}

func (cc *countCache) key(s string) countKey {
	return countKey{maphash.String(cc.seeds[0], s), maphash.String(cc.seeds[1], s)}
}

// getLocked returns the count of chunk s, k its key when it is long.
func (cc *countCache) getLocked(e *encCounts, s string, k countKey) (int32, bool) {
	if len(s) <= shortChunk {
		if n, ok := e.short[s]; ok {
			return n, true
		}
		if n, ok := e.oldShort[s]; ok {
			cc.putLocked(e, s, k, n)
			return n, true
		}
		return 0, false
	}
	if n, ok := e.long[k]; ok {
		return n, true
	}
	if n, ok := e.oldLong[k]; ok {
		cc.putLocked(e, s, k, n)
		return n, true
	}
	return 0, false
}

func (cc *countCache) putLocked(e *encCounts, s string, k countKey, n int32) {
	if len(e.short)+len(e.long) >= cc.max {
		e.oldShort, e.short = e.short, make(map[string]int32, cc.max/4)
		e.oldLong, e.long = e.long, make(map[countKey]int32, cc.max/16)
	}
	if len(s) <= shortChunk {
		e.short[strings.Clone(s)] = n
	} else {
		e.long[k] = n
	}
}

func (cc *countCache) enc(name string) *encCounts {
	e := cc.encs[name]
	if e == nil {
		e = &encCounts{short: map[string]int32{}, long: map[countKey]int32{}}
		cc.encs[name] = e
	}
	return e
}

// clear forgets every count.
func (cc *countCache) clear() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.encs = map[string]*encCounts{}
}

func (cc *countCache) len() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	n := 0
	for _, e := range cc.encs {
		n += len(e.short) + len(e.oldShort) + len(e.long) + len(e.oldLong)
	}
	return n
}

// count returns the tokens of s, from the remembered counts of its chunks
// where it can: the chunks are looked up under one lock, those not found
// are counted outside it, then remembered.
func (cc *countCache) count(c *Counter, s string) int {
	if s == "" {
		return 0
	}
	type miss struct {
		s string
		k countKey
	}
	var misses []miss
	n := 0
	hits := 0
	cc.mu.Lock()
	e := cc.enc(c.encoding)
	look := func(ch string) {
		var k countKey
		if len(ch) > shortChunk {
			k = cc.key(ch)
		}
		if m, ok := cc.getLocked(e, ch, k); ok {
			n += int(m)
			hits++
		} else {
			misses = append(misses, miss{ch, k})
		}
	}
	if c.chunked {
		chunks(s, look)
	} else {
		look(s)
	}
	cc.mu.Unlock()
	cc.hits.Add(int64(hits))
	if len(misses) == 0 {
		return n
	}
	cc.misses.Add(int64(len(misses)))
	counts := make([]int32, len(misses))
	for i, m := range misses {
		counts[i] = int32(c.countUncached(m.s))
		n += int(counts[i])
	}
	cc.mu.Lock()
	e = cc.enc(c.encoding) // clear may have replaced it
	for i, m := range misses {
		cc.putLocked(e, m.s, m.k, counts[i])
	}
	cc.mu.Unlock()
	return n
}
