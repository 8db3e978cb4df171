package resume

// Shapes: what cutting needs of an exchange whatever the query.
//
// Cutting an exchange (cut.go) starts with work that depends on its texts
// and how its block is rendered, never on the query or the budget: closing
// a code fence left open, counting the block's tokens, splitting each
// side into segments, counting each segment's tokens and listing its
// terms. That is most of a pack's cost once the ranking is done, and the
// same exchanges (a chain's tail and recent ones, exchanges that answer
// several queries) are cut pack after pack. A shapeStore (kept by a Cache)
// keeps it between packs, by row id, time stamp and encoding: a stored
// event never changes, and the Cache drops everything when events are
// deleted. Only the query's part is left to each pack: which terms of
// each segment the query holds, and the segments' scores.
//
// A shape holds no text of the exchange (the pack has the event): only
// spans, counts and the segments' terms, so what it keeps is about the
// size of the texts' words.

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/praxis-os/continuity/analyze"
)

// shape is the query-independent analysis of one exchange rendered with
// one time stamp.
type shape struct {
	// fix is what closing the code fences left open adds to each side
	// (balanceFences): the texts shown whole are user+fix[0], ai+fix[1].
	fix [2]string
	// fullLB is a lower bound of the whole block's tokens (Counter.atLeast),
	// full the count itself once made (0 until then): most exchanges the
	// selection tries are far too long for the room it offers, and their
	// lower bound says so without counting them.
	fullLB int
	full   atomic.Int64
	deep   atomic.Pointer[shapeDeep]
}

// shapeDeep is the part of a shape that only cutting needs (an exchange
// that fits whole is never split).
type shapeDeep struct {
	overhead int // tokens of the block with both texts a marker
	segs     [2][][2]int
	fenceAt  [2][]fence
	fenceEnd [2][]fence
	// tokensLB is a lower bound of each segment's tokens (trimmed), tokens
	// the count plus one once made (0 until then): the segments that
	// cannot fit the room left are never counted.
	tokensLB [2][]int32
	tokens   [2][]atomic.Int32
	terms    [2][]string // each segment's distinct terms, in order of first appearance, joined by ' '
	// repeat marks the segments that repeat an earlier one (repeats).
	repeat [2][]bool
}

// newShapeDeep splits the texts as shown whole (fences balanced) and
// measures each segment.
func newShapeDeep(c *Counter, user, ai string, overhead int) *shapeDeep {
	d := &shapeDeep{overhead: overhead}
	for side, text := range [2]string{user, ai} {
		st := split(text)
		d.segs[side], d.fenceAt[side], d.fenceEnd[side] = st.segs, st.fenceAt, st.fenceEnds
		d.tokensLB[side] = make([]int32, len(st.segs))
		d.tokens[side] = make([]atomic.Int32, len(st.segs))
		d.terms[side] = make([]string, len(st.segs))
		var joined []byte
		var seen map[string]bool // for segments of many terms
		for i, sp := range st.segs {
			seg := text[sp[0]:sp[1]]
			d.tokensLB[side][i] = int32(c.atLeast(strings.TrimSpace(seg)))
			joined = joined[:0]
			clear(seen)
			analyze.EachTerm(seg, func(t []byte) {
				if len(joined) < 512 {
					if indexTerm(joined, t) >= 0 {
						return
					}
				} else {
					if seen == nil {
						seen = map[string]bool{}
					}
					if len(seen) == 0 {
						for _, u := range bytes.Split(joined, []byte{' '}) {
							seen[string(u)] = true
						}
					}
					if seen[string(t)] {
						return
					}
					seen[string(t)] = true
				}
				if len(joined) > 0 {
					joined = append(joined, ' ')
				}
				joined = append(joined, t...)
			})
			d.terms[side][i] = string(joined)
		}
	}
	d.repeat = repeats(d.terms, d.fenceAt)
	return d
}

// repeatMinTerms is the fewest terms (numbers aside) a segment must hold
// to count as a repeat of another.
const repeatMinTerms = 3

// repeats marks the segments of prose, of either side, whose terms are
// those of an earlier segment once the terms holding a digit are set
// aside: the near-identical lines of a log or a listing ("checked batch
// 12: ok", "checked batch 13: ok"), of which a cut keeps the first only.
// Lines of code (in a fenced block) are never repeats: their numbers
// matter.
func repeats(terms [2][]string, fenceAt [2][]fence) [2][]bool {
	var out [2][]bool
	seen := map[string]bool{}
	for side := range 2 {
		out[side] = make([]bool, len(terms[side]))
		for i, joined := range terms[side] {
			if fenceAt[side][i].block >= 0 {
				continue
			}
			var key []string
			for _, t := range strings.Fields(joined) {
				if strings.IndexFunc(t, unicode.IsDigit) < 0 {
					key = append(key, t)
				}
			}
			if len(key) < repeatMinTerms {
				continue
			}
			slices.Sort(key)
			k := strings.Join(key, " ")
			out[side][i] = seen[k]
			seen[k] = true
		}
	}
	return out
}

// tokensOf returns the tokens of segment i of side (trimmed), text the
// side's text, counting them the first time.
func (d *shapeDeep) tokensOf(c *Counter, side, i int, text string) int {
	if n := d.tokens[side][i].Load(); n > 0 {
		return int(n - 1)
	}
	sp := d.segs[side][i]
	n := c.Count(strings.TrimSpace(text[sp[0]:sp[1]]))
	d.tokens[side][i].Store(int32(n + 1))
	return n
}

// sides returns the segmented sides of the texts the shape was made of.
func (d *shapeDeep) sides(user, ai string) [2]sideText {
	var out [2]sideText
	for side, text := range [2]string{user, ai} {
		out[side] = sideText{text: text, segs: d.segs[side], fenceAt: d.fenceAt[side], fenceEnds: d.fenceEnd[side]}
	}
	return out
}

// size is about what d keeps in memory, in bytes.
func (d *shapeDeep) size() int {
	n := 64
	for side := range 2 {
		n += len(d.segs[side]) * (16 + 2*40 + 8 + 16)
		for _, t := range d.terms[side] {
			n += len(t)
		}
		for _, f := range d.fenceAt[side] {
			n += len(f.open) + len(f.close)
		}
	}
	return n
}

// shapeKey names a shape: an exchange's row, the stamp its block is
// rendered with (the time of day, or the date too) and the encoding its
// tokens are counted in.
type shapeKey struct {
	row   int64
	stamp string
	enc   string
}

// shapeStore keeps shapes, bounded in bytes: two generations, as the
// texts and token counts are kept (when the current one is full the older
// is dropped). Safe for concurrent use; a nil store keeps nothing.
type shapeStore struct {
	max int

	mu       sync.Mutex
	cur, old map[shapeKey]*shape
	size     int
}

// shapeBase is what a shape without its deep part takes, about.
const shapeBase = 160

func newShapeStore(bytes int) *shapeStore {
	return &shapeStore{max: bytes, cur: map[shapeKey]*shape{}}
}

func (s *shapeStore) get(k shapeKey) *shape {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh, ok := s.cur[k]; ok {
		return sh
	}
	if sh, ok := s.old[k]; ok {
		s.putLocked(k, sh, shapeBase+deepSize(sh))
		return sh
	}
	return nil
}

func deepSize(sh *shape) int {
	if d := sh.deep.Load(); d != nil {
		return d.size()
	}
	return 0
}

func (s *shapeStore) put(k shapeKey, sh *shape) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(k, sh, shapeBase+deepSize(sh))
}

// grew accounts for the deep part added to a shape kept.
func (s *shapeStore) grew(bytes int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.size += bytes
	if s.size > s.max/2 {
		s.old, s.cur, s.size = s.cur, map[shapeKey]*shape{}, 0
	}
}

func (s *shapeStore) putLocked(k shapeKey, sh *shape, bytes int) {
	if bytes > s.max/8 {
		return
	}
	if s.size+bytes > s.max/2 {
		s.old, s.cur, s.size = s.cur, map[shapeKey]*shape{}, 0
	}
	if _, ok := s.cur[k]; !ok {
		s.cur[k] = sh
		s.size += bytes
	}
}

// clear drops every shape.
func (s *shapeStore) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur, s.old, s.size = map[shapeKey]*shape{}, nil, 0
}

func (s *shapeStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cur) + len(s.old)
}
