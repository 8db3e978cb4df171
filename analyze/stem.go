package analyze

import (
	"hash/maphash"
	"sync"

	"github.com/kljensen/snowball/english"
)

// Stem returns the Snowball English (Porter2) stem of a lowercase word:
// authenticate, authentication -> authent; running, runs -> run;
// connections -> connect. Words of one or two letters, and words holding
// anything but the ASCII letters a-z (digits, capitals, other scripts:
// ipv4, sha256, café), are returned unchanged: they are names more often
// than English words.
func Stem(word string) string {
	if !stemmable(word) {
		return word
	}
	return stems.get(word)
}

// stemmable reports whether w is a lowercase ASCII word of three letters
// or more.
func stemmable(w string) bool {
	if len(w) <= 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// stemCache remembers stems: the Snowball stemmer is slow next to a map
// look-up and allocates, and the words of a log follow Zipf's law, so a few
// thousand distinct words make up most of the text. It is sharded so that
// the full-text indexer and the embedding worker do not contend.
type stemCache struct {
	seed   maphash.Seed
	shards [16]stemShard
}

type stemShard struct {
	mu sync.Mutex
	m  map[string]string
}

// stemShardMax bounds each shard; past it the shard starts afresh.
const stemShardMax = 1 << 14

var stems = &stemCache{seed: maphash.MakeSeed()}

func (c *stemCache) get(w string) string {
	sh := &c.shards[maphash.String(c.seed, w)%uint64(len(c.shards))]
	sh.mu.Lock()
	s, ok := sh.m[w]
	sh.mu.Unlock()
	if ok {
		return s
	}
	s = english.Stem(w, true)
	sh.mu.Lock()
	if sh.m == nil || len(sh.m) >= stemShardMax {
		sh.m = make(map[string]string, 1024)
	}
	sh.m[w] = s
	sh.mu.Unlock()
	return s
}

// AppendStem appends the stem of the lowercase word w (as Stem) to dst.
// It allocates nothing when the stem is cached.
func AppendStem(dst, w []byte) []byte {
	if !stemmable(string(w)) {
		return append(dst, w...)
	}
	return append(dst, stems.getBytes(w)...)
}

func (c *stemCache) getBytes(w []byte) string {
	sh := &c.shards[maphash.Bytes(c.seed, w)%uint64(len(c.shards))]
	sh.mu.Lock()
	s, ok := sh.m[string(w)]
	sh.mu.Unlock()
	if ok {
		return s
	}
	return c.get(string(w))
}

// recentStems caches, in front of the shared cache, the stems of the
// short words an Analyzer met last: a slot per hash of the word, no lock,
// no pointers (words and stems are held in the slots), 256 KiB, so that a
// look-up touches one slot of memory instead of a map's buckets and the
// strings they point to. In a backfill, looking stems up in the shared
// map was the largest Go cost of indexing after SQLite; most look-ups are
// of the few words this cache holds.
type recentStems struct {
	slots [8192]recentSlot
}

// recentMax is the longest word (in bytes) recentStems holds; longer ones
// go to the shared cache.
const recentMax = 15

type recentSlot struct {
	wordLen, stemLen uint8
	word, stem       [recentMax]byte
}

// recentPool holds the Analyzers of AppendDocument and Document.
var recentPool = sync.Pool{New: func() any { return new(Analyzer) }}

// appendStem appends the stem of the lowercase word w (as AppendStem) to
// dst; h is w's FNV-1a hash (fnvAdd over its bytes, from fnvInit).
func (r *recentStems) appendStem(dst, w []byte, h uint32) []byte {
	if len(w) > recentMax || !stemmable(string(w)) {
		return AppendStem(dst, w)
	}
	s := &r.slots[h%uint32(len(r.slots))]
	if int(s.wordLen) == len(w) && string(s.word[:len(w)]) == string(w) {
		return append(dst, s.stem[:s.stemLen]...)
	}
	stem := stems.getBytes(w)
	if len(stem) <= recentMax {
		s.wordLen, s.stemLen = uint8(len(w)), uint8(len(stem))
		copy(s.word[:], w)
		copy(s.stem[:], stem)
	}
	return append(dst, stem...)
}

// Stemmer stems words as AppendStem does, through a cache of the words it
// met last (256 KiB, no lock): for a caller that stems many texts in turn
// on one goroutine (keep one per goroutine, or pool them). The zero value
// is ready.
type Stemmer struct {
	recent recentStems
}

// AppendStem appends the stem of the lowercase word w to dst, as the
// package's AppendStem.
func (s *Stemmer) AppendStem(dst, w []byte) []byte {
	h := fnvInit
	for _, c := range w {
		h = fnvAdd(h, c)
	}
	return s.recent.appendStem(dst, w, h)
}

// FNV-1a, 32 bits: cheap to compute while a word is lowercased byte by
// byte.
const fnvInit = uint32(2166136261)

func fnvAdd(h uint32, c byte) uint32 { return (h ^ uint32(c)) * 16777619 }
