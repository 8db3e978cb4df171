package resume

// Cutting a long exchange to its relevant part.
//
// An exchange too long for the room it is given is not dropped: its user
// and AI texts are split into segments (lines, and sentences within long
// lines), each segment is scored by the query terms it holds (terms as the
// search index sees them: lowercased, stopwords out, Porter-stemmed; a term
// rare within the exchange weighs more than a common one), and the best
// segments are kept, in their original order, until the room is used. What
// is left out shows as the marker "[…]". Without a query, or when no
// segment matches, the opening of the user's message and of the answer are
// kept, then the end of the answer (where the outcome usually is). A
// single segment larger than the room is cut to a window of tokens around
// its first query term.

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/praxis-os/continuity/embed"
)

// Marker stands for text left out of a cut exchange.
const Marker = "[…]"

// terms is an analysed query: its distinct index terms.
type terms map[string]bool

func analyse(query string) terms {
	t := terms{}
	for _, w := range embed.Terms(query) {
		t[w] = true
	}
	return t
}

// segment is a piece of one side of an exchange.
type segment struct {
	side       int // 0 user, 1 ai
	idx        int // position within its side
	start, end int // byte span in the side's text
	tokens     int
	score      float64
	prio       int // tie-break order when scores are equal (lower first)
	hit        int // offset in the segment of its first query term, -1 if none
}

// split partitions text into segments: lines, split after sentence ends
// (". ", "! ", "? ").
// The spans cover text exactly, so adjacent segments join back to the
// original.
func split(text string) [][2]int {
	var out [][2]int
	start := 0
	for start < len(text) {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start + 1
		}
		// Following blank lines belong to this segment.
		for end < len(text) && text[end] == '\n' {
			end++
		}
		out = append(out, sentences(text, start, end)...)
		start = end
	}
	return out
}

// sentences splits text[start:end] after sentence-ending punctuation
// followed by white space.
func sentences(text string, start, end int) [][2]int {
	var out [][2]int
	s := start
	for i := start; i < end-1; i++ {
		c := text[i]
		if (c == '.' || c == '!' || c == '?') && (text[i+1] == ' ' || text[i+1] == '\t') && i+1-s >= 20 {
			j := i + 1
			for j < end && (text[j] == ' ' || text[j] == '\t') {
				j++
			}
			out = append(out, [2]int{s, j})
			s = j
			i = j - 1
		}
	}
	if s < end {
		out = append(out, [2]int{s, end})
	}
	return out
}

// cutter cuts exchanges for one pack.
type cutter struct {
	counter *Counter
	query   terms
	// cache holds each exchange's analysis (keyed by its block's time
	// stamp and texts): an exchange may be cut several times, to grow.
	cache map[string]*analysis
}

// analysis is what cutting needs to know of one exchange.
type analysis struct {
	block    string // the whole block, rendered
	full     int    // tokens of the whole block
	overhead int    // tokens of the block with both texts a Marker
	sides    [2]sideText
	segs     []segment // best first
}

func (c *cutter) analyse(user, ai string, render func(u, a string) string) *analysis {
	key := render(user, ai)
	if a, ok := c.cache[key]; ok {
		return a
	}
	a := &analysis{block: key, full: c.counter.Count(key)}
	a.overhead = c.counter.Count(render(Marker, Marker))
	a.sides = [2]sideText{{text: user, segs: split(user)}, {text: ai, segs: split(ai)}}
	a.segs = c.score(a.sides)
	if c.cache == nil {
		c.cache = map[string]*analysis{}
	}
	c.cache[key] = a
	return a
}

// sideText is one side's text and its segments.
type sideText struct {
	text string
	segs [][2]int
}

// cutExchange is an exchange as cut: its texts, its rendered block and the
// block's tokens (counted once, here).
type cutExchange struct {
	user, ai  string
	block     string
	tokens    int
	truncated bool // something was left out
}

// cut returns the exchange cut so that its block, render(user, ai), has at
// most limit tokens. ok is false when not even a useful part fits (less
// than minKeep tokens of text, for an exchange longer than that).
func (c *cutter) cut(user, ai string, limit int, render func(u, a string) string) (out cutExchange, ok bool) {
	a := c.analyse(user, ai, render)
	if a.full <= limit {
		return cutExchange{user: user, ai: ai, block: a.block, tokens: a.full}, true
	}
	room := limit - a.overhead
	if room < minKeep {
		return cutExchange{}, false
	}
	sides, segs := a.sides, a.segs

	// Greedy by priority; a segment that does not fit is skipped for
	// smaller ones. Each kept segment may add a marker (about 2 tokens).
	var kept, rest []segment
	used := 0
	for _, s := range segs {
		if cost := s.tokens + 2; used+cost <= room {
			kept = append(kept, s)
			used += cost
		} else {
			rest = append(rest, s)
		}
	}
	// What is left is filled with a window of the best segment left out,
	// starting a little before its first query term (so the term has
	// context), else at its start.
	var window *windowed
	if n := room - used - 4; len(rest) > 0 && (n >= minWindow || len(kept) == 0) {
		s := rest[0]
		from := 0
		if s.hit >= 0 {
			b := c.counter.boundaries(sides[s.side].text[s.start:s.end])
			hitTok, _ := slices.BinarySearch(b, s.hit)
			from = max(0, hitTok-n/4)
		}
		window = c.windowOf(sides, s, from, n)
	}

	var cu, ca, block string
	var tokens int
	for {
		cu, ca = assemble(sides, kept, window)
		block = render(cu, ca)
		if tokens = c.counter.Count(block); tokens <= limit {
			break
		}
		// The sum of the parts under-counted: shrink the window, else drop
		// the last kept segment.
		switch {
		case window != nil && window.text != "":
			n := c.counter.Count(window.text)
			window.text = c.counter.window(window.text, 0, n-max(1, n/8))
			window.atEnd = false
		case window != nil:
			window = nil
		case len(kept) > 0:
			kept = kept[:len(kept)-1]
		default:
			return cutExchange{}, false
		}
	}
	if c.counter.Count(cu)+c.counter.Count(ca) < minKeep && len(user)+len(ai) > len(cu)+len(ca) {
		return cutExchange{}, false
	}
	return cutExchange{user: cu, ai: ca, block: block, tokens: tokens, truncated: true}, true
}

// minKeep is the fewest tokens of text worth showing of a cut exchange;
// minWindow the fewest worth adding as a partial segment.
const (
	minKeep   = 24
	minWindow = 8
)

// windowed is a segment cut to a window of tokens.
type windowed struct {
	seg            segment
	text           string
	atStart, atEnd bool // the window starts (ends) where the segment does
}

func (c *cutter) windowOf(sides [2]sideText, s segment, from, n int) *windowed {
	text := sides[s.side].text[s.start:s.end]
	wt := c.counter.window(text, from, n)
	trimmed := strings.TrimSpace(text)
	return &windowed{seg: s, text: wt,
		atStart: strings.HasPrefix(trimmed, strings.TrimSpace(wt)) && from == 0,
		atEnd:   strings.HasSuffix(trimmed, strings.TrimSpace(wt))}
}

// score returns the segments of both sides, best first.
func (c *cutter) score(sides [2]sideText) []segment {
	var segs []segment
	df := map[string]int{}
	segTerms := [][]string{}
	for side, st := range sides {
		for i, sp := range st.segs {
			text := st.text[sp[0]:sp[1]]
			s := segment{side: side, idx: i, start: sp[0], end: sp[1], hit: -1,
				tokens: c.counter.Count(strings.TrimSpace(text))}
			var matched []string
			if len(c.query) > 0 {
				seen := map[string]bool{}
				for _, t := range embed.Terms(text) {
					if c.query[t] && !seen[t] {
						seen[t] = true
						matched = append(matched, t)
						df[t]++
					}
				}
				if len(matched) > 0 {
					s.hit = firstHit(text, c.query)
				}
			}
			segs = append(segs, s)
			segTerms = append(segTerms, matched)
		}
	}
	n := float64(len(segs))
	for i := range segs {
		for _, t := range segTerms[i] {
			segs[i].score += math.Log(1 + n/float64(df[t]))
		}
		segs[i].prio = headPriority(segs[i], len(sides[segs[i].side].segs))
	}
	slices.SortStableFunc(segs, func(a, b segment) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return a.prio - b.prio
	})
	return segs
}

// headPriority orders segments when scores tie: the user's first segment,
// the answer's first, the answer's last, then alternately the following
// segments of each side.
func headPriority(s segment, n int) int {
	switch {
	case s.side == 0 && s.idx == 0:
		return 0
	case s.side == 1 && s.idx == 0:
		return 1
	case s.side == 1 && s.idx == n-1:
		return 2
	}
	return 3 + 2*s.idx + s.side
}

// firstHit returns the byte offset of the first word of text whose term is
// in q, -1 if none.
func firstHit(text string, q terms) int {
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r) {
				break
			}
			j += size
		}
		for _, t := range embed.Terms(text[i:j]) {
			if q[t] {
				return i
			}
		}
		i = j
	}
	return -1
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// assemble joins the kept segments of each side in their original order,
// with Marker where text was left out. A side that was empty stays empty;
// a side of which nothing is kept is just Marker.
func assemble(sides [2]sideText, kept []segment, w *windowed) (string, string) {
	var out [2]string
	for side, st := range sides {
		n := len(st.segs)
		if n == 0 {
			continue
		}
		keep := make([]bool, n)
		for _, s := range kept {
			if s.side == side {
				keep[s.idx] = true
			}
		}
		var b strings.Builder
		endsCut := false // b ends with Marker
		emit := func(text string, cutBefore, cutAfter bool) {
			text = strings.TrimSpace(text)
			if text == "" {
				return
			}
			switch {
			case cutBefore && !endsCut:
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(Marker + " ")
			case b.Len() > 0:
				b.WriteByte(' ')
			}
			b.WriteString(text)
			endsCut = cutAfter
			if cutAfter {
				b.WriteString(" " + Marker)
			}
		}
		for i := 0; i < n; i++ {
			if w != nil && w.seg.side == side && w.seg.idx == i {
				emit(w.text, i > 0 || !w.atStart, i < n-1 || !w.atEnd)
				continue
			}
			if !keep[i] {
				continue
			}
			j := i
			for j+1 < n && keep[j+1] && !(w != nil && w.seg.side == side && w.seg.idx == j+1) {
				j++
			}
			emit(st.text[st.segs[i][0]:st.segs[j][1]], i > 0, j < n-1)
			i = j
		}
		if b.Len() == 0 {
			out[side] = Marker
			continue
		}
		out[side] = b.String()
	}
	return out[0], out[1]
}
