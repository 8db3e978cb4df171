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
// expressions that cut a text into pieces before byte-pair merging) never
// join a line break to a following visible ASCII character in one piece,
// with one exception (o200k_base lets "/" follow a run of punctuation and
// line breaks). And no piece depends on what comes before it (no
// look-behind). So in cl100k_base and o200k_base, a text splits at every
// point just after '\n' followed by an ASCII character from '!' to '~'
// other than '/': the pieces before that point are those of the prefix
// counted alone, the pieces after it those of the rest, and the counts
// add. TestChunkedCountExact checks this on real and random texts and
// FuzzChunkedCount on any; other encodings (r50k, p50k: there
// "\n\n" before a word is two pieces, at the end of a text one) are
// counted whole, still cached by the whole text.
//
// Memory. A chunk is remembered by two 64-bit hashes of its encoding and
// text, not by the text: 24 bytes and the map's overhead an entry. The
// cache keeps two generations; when the current one is full, the older is
// dropped and the current becomes the older (an LRU approximation: what
// was used in the last generation survives one more).

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// chunkSafe are the encodings (by codec name) whose counts add up over
// chunks split at line starts (see above).
var chunkSafe = map[string]bool{"cl100k_base": true, "o200k_base": true}

// lineStartSafe reports whether a text may be split just before byte c
// that follows a '\n'.
func lineStartSafe(c byte) bool { return c >= '!' && c <= '~' && c != '/' }

// chunks calls f with consecutive chunks of s that cover it exactly, split
// just before every lineStartSafe byte that follows a '\n'.
func chunks(s string, f func(string)) {
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i-1] == '\n' && lineStartSafe(s[i]) {
			f(s[start:i])
			start = i
		}
	}
	if start < len(s) {
		f(s[start:])
	}
}

// DefaultCountCacheEntries is how many chunk counts a Cache keeps per
// generation (two generations: about 2 × 2^18 × ~50 bytes = 25 MiB at
// most).
const DefaultCountCacheEntries = 1 << 18

type countKey [2]uint64

// countCache remembers token counts of chunks. Safe for concurrent use.
type countCache struct {
	seeds [2]maphash.Seed
	max   int

	mu       sync.Mutex
	cur, old map[countKey]int32

	hits, misses atomic.Int64
}

func newCountCache(entries int) *countCache {
	if entries <= 0 {
		entries = DefaultCountCacheEntries
	}
	return &countCache{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, max: entries,
		cur: map[countKey]int32{}}
}

func (cc *countCache) key(encoding, s string) countKey {
	var k countKey
	for i, seed := range cc.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteString(encoding)
		h.WriteByte(0)
		h.WriteString(s)
		k[i] = h.Sum64()
	}
	return k
}

func (cc *countCache) get(k countKey) (int, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if n, ok := cc.cur[k]; ok {
		return int(n), true
	}
	if n, ok := cc.old[k]; ok {
		cc.putLocked(k, n)
		return int(n), true
	}
	return 0, false
}

func (cc *countCache) put(k countKey, n int) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.putLocked(k, int32(n))
}

func (cc *countCache) putLocked(k countKey, n int32) {
	if len(cc.cur) >= cc.max {
		cc.old, cc.cur = cc.cur, make(map[countKey]int32, cc.max/4)
	}
	cc.cur[k] = n
}

// clear forgets every count.
func (cc *countCache) clear() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.cur, cc.old = map[countKey]int32{}, nil
}

func (cc *countCache) len() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.cur) + len(cc.old)
}

// count returns the tokens of s, from the remembered counts of its chunks
// where it can.
func (cc *countCache) count(c *Counter, s string) int {
	if s == "" {
		return 0
	}
	if !c.chunked {
		return cc.countChunk(c, s)
	}
	n := 0
	chunks(s, func(ch string) { n += cc.countChunk(c, ch) })
	return n
}

func (cc *countCache) countChunk(c *Counter, s string) int {
	k := cc.key(c.encoding, s)
	if n, ok := cc.get(k); ok {
		cc.hits.Add(1)
		return n
	}
	cc.misses.Add(1)
	n := c.countUncached(s)
	cc.put(k, n)
	return n
}
