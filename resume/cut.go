package resume

// Cutting a long exchange to its relevant part.
//
// An exchange too long for the room it is given is not dropped: its user
// and AI texts are split into segments (lines, and sentences within long
// lines of prose; a line of code inside a fenced block stays whole), each
// segment is scored by the query terms it holds (terms as the search index
// sees them: lowercased, stopwords out, Porter-stemmed; a term rare within
// the exchange weighs more than a common one), and the best segments are
// kept, in their original order, until the room is used. Each place where
// text was left out says how much: "[… 1,234 characters cut]". Without a
// query, or when no segment matches, the opening of the user's message and
// of the answer are kept, then the end of the answer (where the outcome
// usually is), then the following segments in order. Cuts fall between
// segments, so on line or sentence boundaries; only a single segment
// larger than the whole room is cut inside, at a word boundary near its
// first query term.
//
// Code fences are never left open: a kept line inside a fenced block whose
// opening line was cut gets that opening line back, and a block left open
// by a cut (or by the original text) is closed, so the rest of the pack
// does not render as code.

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/internal/lazyre"
)

// MarkerRE matches the marker that stands for text left out of a cut
// exchange: "[… 1,234 characters cut]".
var MarkerRE = lazyre.New(`\[… [0-9,]+ characters? cut\]`)

// marker is the marker for n characters (runes) left out.
func marker(n int) string {
	if n == 1 {
		return "[… 1 character cut]"
	}
	return "[… " + commas(n) + " characters cut]"
}

// commas writes n with thousands separators.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// StripMarkers returns s without its cut markers: the text kept.
func StripMarkers(s string) string { return MarkerRE().ReplaceAllString(s, "") }

// terms is an analysed query: its distinct index terms.
type terms map[string]bool

func analyse(query string) terms {
	t := terms{}
	for _, w := range analyze.Terms(query) {
		t[w] = true
	}
	return t
}

// segment is a piece of one side of an exchange.
type segment struct {
	side       int // 0 user, 1 ai
	idx        int // position within its side
	start, end int // byte span in the side's text
	tokensLB   int // a lower bound of its tokens (trimmed); the count is its shape's
	score      float64
	prio       int  // tie-break order when scores are equal (lower first)
	matched    bool // it holds a query term
	repeat     bool // it repeats an earlier segment (shape.go's repeats): never kept
}

// fence is the fenced code block a point of a text lies in.
type fence struct {
	block       int    // ordinal of the block in its text; -1 outside any
	open, close string // its opening line (without the line end), its closing line
}

var noFence = fence{block: -1}

// fenceOpener reports whether line opens a fenced code block (CommonMark:
// up to three spaces, then three or more backticks or tildes), and the
// line that would close it.
func fenceOpener(line string) (closer string, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return "", false
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return "", false
	}
	return t[:n], true
}

// closes reports whether line closes a block opened with delimiter d.
func closes(line, d string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || !strings.HasPrefix(t, d) {
		return false
	}
	rest := strings.TrimLeft(t, d[:1])
	return strings.TrimSpace(rest) == ""
}

// sideText is one side's text, its segments and the fenced block each
// segment starts and ends in.
type sideText struct {
	text               string
	segs               [][2]int
	fenceAt, fenceEnds []fence // before, after each segment
}

// split partitions text into segments: lines, and outside fenced code
// blocks lines split after sentence ends (". ", "! ", "? "). The spans
// cover text exactly, so adjacent segments join back to the original.
func split(text string) sideText {
	st := sideText{text: text}
	cur := noFence
	blocks := 0
	start := 0
	for start < len(text) {
		line, end := nextLine(text, start)
		// Following blank lines belong to this segment.
		for end < len(text) && text[end] == '\n' {
			end++
		}
		before := cur
		var spans [][2]int
		switch {
		case cur.block >= 0:
			if closes(line, cur.close) {
				cur = noFence
			}
			spans = [][2]int{{start, end}}
		default:
			if d, ok := fenceOpener(line); ok {
				// Copies: a shape kept between packs must not hold the text.
				cur = fence{block: blocks, open: strings.Clone(strings.TrimSpace(line)), close: strings.Clone(d)}
				blocks++
				spans = [][2]int{{start, end}}
			} else {
				spans = sentences(text, start, end)
			}
		}
		for i, sp := range spans {
			st.segs = append(st.segs, sp)
			if i == 0 {
				st.fenceAt = append(st.fenceAt, before)
			} else {
				st.fenceAt = append(st.fenceAt, noFence)
			}
			st.fenceEnds = append(st.fenceEnds, cur)
		}
		start = end
	}
	return st
}

// nextLine returns the line of text that starts at start, without its
// line end, and where the next line starts.
func nextLine(text string, start int) (line string, next int) {
	next = strings.IndexByte(text[start:], '\n')
	if next < 0 {
		next = len(text)
	} else {
		next += start + 1
	}
	return strings.TrimRight(text[start:next], "\r\n"), next
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

// balanceFences returns text with a closing line added when it leaves a
// fenced code block open, so that what follows it does not render as code.
func balanceFences(text string) string {
	if close, open := openFence(text); open {
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		return text + close
	}
	return text
}

// openFence reports whether text ends inside a fenced code block, and the
// line that would close it: split's reading of fences, line by line,
// without splitting.
func openFence(text string) (close string, open bool) {
	if !strings.Contains(text, "``") && !strings.Contains(text, "~~") {
		return "", false
	}
	for start := 0; start < len(text); {
		line, end := nextLine(text, start)
		switch {
		case open:
			if closes(line, close) {
				close, open = "", false
			}
		default:
			close, open = fenceOpener(line)
		}
		start = end
	}
	return close, open
}

// cutter cuts exchanges for one pack.
type cutter struct {
	counter *Counter
	query   terms
	// shapes keeps what does not depend on the query between packs (a
	// Cache's); nil keeps nothing.
	shapes *shapeStore
	// cache holds this pack's analysis of each exchange: an exchange may
	// be cut several times, to grow.
	cache map[exKey]*analysis
}

// exRef is an exchange to measure or cut: its row, the stamp its block
// is rendered with, and its texts.
type exRef struct {
	row      int64 // 0: an exchange of no index (tests): nothing is kept
	stamp    string
	user, ai string
}

func (x exRef) render(u, a string) string { return renderExchange(x.stamp, u, a) }

// exKey names an analysis within a pack.
type exKey struct {
	row   int64
	stamp string
	texts string // for row 0 only
}

func (x exRef) key() exKey {
	if x.row == 0 {
		return exKey{stamp: x.stamp, texts: x.user + "\x00" + x.ai}
	}
	return exKey{row: x.row, stamp: x.stamp}
}

// analysis is what cutting needs to know of one exchange for this pack.
type analysis struct {
	sh       *shape
	user, ai string // as shown whole (fences balanced)
	block    string // the whole block, rendered
	overhead int    // tokens of the block with both texts a marker
	deep     *shapeDeep
	sides    [2]sideText
	segs     []segment // best first, for this pack's query
}

// analyse returns the exchange's analysis; segments are scored only when
// deep (cutting needs them, measuring the whole does not). What does not
// depend on the query comes from the shape store when it has it.
func (c *cutter) analyse(x exRef, deep bool) *analysis {
	key := x.key()
	a, ok := c.cache[key]
	if !ok {
		var sk shapeKey
		var sh *shape
		if x.row != 0 {
			sk = shapeKey{row: x.row, stamp: x.stamp, enc: c.counter.Name()}
			sh = c.shapes.get(sk)
		}
		var u, ai, block string
		if sh != nil {
			u, ai = x.user+sh.fix[0], x.ai+sh.fix[1]
			block = x.render(u, ai)
		} else {
			u, ai = balanceFences(x.user), balanceFences(x.ai)
			block = x.render(u, ai)
			sh = &shape{fix: [2]string{u[len(x.user):], ai[len(x.ai):]}, fullLB: c.counter.atLeast(block)}
			if x.row != 0 {
				c.shapes.put(sk, sh)
			}
		}
		a = &analysis{sh: sh, user: u, ai: ai, block: block}
		if c.cache == nil {
			c.cache = map[exKey]*analysis{}
		}
		c.cache[key] = a
	}
	if deep && a.segs == nil {
		d := a.sh.deep.Load()
		if d == nil {
			d = newShapeDeep(c.counter, a.user, a.ai, c.counter.Count(x.render(marker(len(a.user)), marker(len(a.ai)))))
			if a.sh.deep.CompareAndSwap(nil, d) && x.row != 0 {
				c.shapes.grew(d.size())
			}
		}
		a.overhead = d.overhead
		a.deep = d
		a.sides = d.sides(a.user, a.ai)
		a.segs = c.score(d)
	}
	return a
}

// full returns the tokens of the exchange's block shown whole, counting
// them the first time.
func (c *cutter) full(a *analysis) int {
	if n := a.sh.full.Load(); n > 0 {
		return int(n)
	}
	n := c.counter.Count(a.block)
	a.sh.full.Store(int64(n))
	return n
}

// wholeAtMost returns the tokens of x's block shown whole, and whether
// they are at most limit; when a lower bound says they are not, they are
// not counted (n is then that bound).
func (c *cutter) wholeAtMost(x exRef, limit int) (n int, ok bool) {
	a := c.analyse(x, false)
	if a.sh.fullLB > limit {
		return a.sh.fullLB, false
	}
	n = c.full(a)
	return n, n <= limit
}

// cutExchange is an exchange as cut: its texts, its rendered block and the
// block's tokens (counted once, here).
type cutExchange struct {
	user, ai  string
	block     string
	tokens    int
	truncated bool // something was left out
}

// Estimated tokens of a marker, and of a fence line put back.
const (
	markerTokens = 9
	fenceTokens  = 4
)

// cut returns the exchange cut so that its block, render(user, ai), has at
// most limit tokens. ok is false when not even a useful part fits (less
// than minKeep tokens of text, for an exchange longer than that).
//
// It keeps the best segments that fit by estimate (greedy), else a window
// of the best one; counts the block, dropping segments or shrinking the
// window while the estimate under-counted (shrink); and adds segments left
// out while it over-counted (grow).
func (c *cutter) cut(x exRef, limit int) (out cutExchange, ok bool) {
	if n, ok := c.wholeAtMost(x, limit); ok {
		a := c.analyse(x, false)
		return cutExchange{user: a.user, ai: a.ai, block: a.block, tokens: n}, true
	}
	a := c.analyse(x, true)
	room := limit - a.overhead
	if room < minKeep {
		return cutExchange{}, false
	}
	p := &cutPlan{c: c, a: a, x: x, limit: limit, room: room,
		keep: [2][]bool{make([]bool, len(a.sides[0].segs)), make([]bool, len(a.sides[1].segs))}}
	if !p.keepPrompt() {
		return cutExchange{}, false
	}
	p.greedy()
	if len(p.kept) == p.forced {
		p.window = p.bestWindow()
	}
	if out, ok = p.shrink(); !ok {
		return cutExchange{}, false
	}
	if w := p.window; w != nil && p.forced > 0 && p.c.counter.Count(w.text) < minKeep {
		// A shred of the answer beside the prompt says less than its
		// marker: the prompt alone, and what else fits.
		p.window = nil
		out = p.render(nil)
	}
	if p.window == nil {
		out = p.grow(out)
	}
	if !p.useful(out) {
		return cutExchange{}, false
	}
	out.truncated = true
	return out, true
}

// shortPrompt is the longest user text, in characters, that is never cut:
// a question that short is what the answer is about, and a marker in its
// place says nothing.
const shortPrompt = 300

// keepPrompt keeps the whole user text when it is short (shortPrompt),
// before anything else; it reports false when that does not fit the room.
func (p *cutPlan) keepPrompt() bool {
	u := p.a.sides[0]
	if len(u.segs) == 0 || utf8.RuneCountInString(u.text) > shortPrompt {
		return true
	}
	for i := range u.segs {
		p.add(segment{side: 0, idx: i, start: u.segs[i][0], end: u.segs[i][1]})
	}
	p.forced = len(p.kept)
	// The whole text in place of the marker the overhead counts for it.
	p.used = max(0, p.c.counter.Count(strings.TrimSpace(u.text))-markerTokens)
	return p.used <= p.room
}

// promptRoom is the room an exchange with a short prompt (shortPrompt)
// needs to be shown cut: the prompt whole, and minKeep tokens of the
// answer; 0 for a longer prompt.
func (c *cutter) promptRoom(x exRef) int {
	if utf8.RuneCountInString(x.user) > shortPrompt {
		return 0
	}
	a := c.analyse(x, false)
	n := c.counter.Count(x.render(a.user, marker(utf8.RuneCountInString(a.ai))))
	if strings.TrimSpace(a.ai) != "" {
		n += minKeep
	}
	return n
}

// useful reports whether a cut shows enough to be worth its place: some
// text besides its markers, and of an exchange cut to a window only (no
// segment of it kept whole), at least minKeep tokens. A whole sentence or
// line (a kept segment: often the user's question itself) is not a shred,
// however short.
func (p *cutPlan) useful(out cutExchange) bool {
	u, a := StripMarkers(out.user), StripMarkers(out.ai)
	if !hasWords(u) && !hasWords(a) {
		return false // nothing but markers
	}
	return len(p.kept) > 0 || p.c.counter.Count(u)+p.c.counter.Count(a) >= minKeep
}

// hasWords reports whether s holds a letter or a digit.
func hasWords(s string) bool { return strings.IndexFunc(s, analyze.IsWordRune) >= 0 }

// cutPlan is one cut of an exchange in progress: the segments kept (in
// the order kept) and left out, and the window of the best one when none
// is kept whole.
type cutPlan struct {
	c     *cutter
	a     *analysis
	x     exRef
	limit int // the block's tokens
	room  int // the tokens of text, markers and fences by estimate

	keep       [2][]bool // per side, whether each segment is kept
	kept, rest []segment
	window     *windowed
	// forced is how many of kept, first, are the short prompt kept
	// whatever the query (keepPrompt); used their cost.
	forced, used int
}

// costWith is a segment's cost with n tokens of text. A segment that
// starts a new run of kept text costs a marker (and its fence's opening
// and closing lines, inside a block); one that joins two runs gives one
// back.
func (p *cutPlan) costWith(s segment, n int) int {
	k := p.keep[s.side]
	left := s.idx > 0 && k[s.idx-1]
	right := s.idx < len(k)-1 && k[s.idx+1]
	switch {
	case !left && !right:
		n += markerTokens
		side := &p.a.sides[s.side]
		if side.fenceAt[s.idx].block >= 0 || side.fenceEnds[s.idx].block >= 0 {
			n += 2 * fenceTokens
		}
	case left && right:
		n -= markerTokens
	}
	return n
}

// cost counts a segment's tokens; costLB takes their lower bound (so a
// segment it says does not fit, does not).
func (p *cutPlan) cost(s segment) int {
	return p.costWith(s, p.a.deep.tokensOf(p.c.counter, s.side, s.idx, p.a.sides[s.side].text))
}

func (p *cutPlan) costLB(s segment) int { return p.costWith(s, s.tokensLB) }

func (p *cutPlan) add(s segment) {
	p.kept = append(p.kept, s)
	p.keep[s.side][s.idx] = true
}

// dropFrom drops the segments kept from position n on.
func (p *cutPlan) dropFrom(n int) {
	for _, s := range p.kept[n:] {
		p.keep[s.side][s.idx] = false
	}
	p.kept = p.kept[:n]
}

// greedy keeps segments by priority; a segment that does not fit is
// skipped for smaller ones.
func (p *cutPlan) greedy() {
	used := p.used
	for _, s := range p.a.segs {
		if p.keep[s.side][s.idx] || s.repeat {
			continue
		}
		if used+p.costLB(s) > p.room {
			p.rest = append(p.rest, s)
		} else if n := p.cost(s); used+n <= p.room {
			p.add(s)
			used += n
		} else {
			p.rest = append(p.rest, s)
		}
	}
}

// bestWindow is the best segment not kept cut at word boundaries to a
// window that fits, starting a little before its first query term; nil
// when every segment is kept.
func (p *cutPlan) bestWindow() *windowed {
	sides := p.a.sides
	i := slices.IndexFunc(p.a.segs, func(s segment) bool { return !p.keep[s.side][s.idx] && !s.repeat })
	if i < 0 {
		return nil
	}
	s := p.a.segs[i]
	// One marker of its side is in the overhead already.
	n := p.room - p.used - markerTokens
	if sides[s.side].fenceAt[s.idx].block >= 0 {
		n -= 2 * fenceTokens
	}
	from := 0
	text := sides[s.side].text[s.start:s.end]
	if hit := p.c.firstHit(s, text); hit >= 0 {
		b := p.c.counter.boundaries(text)
		hitTok, _ := slices.BinarySearch(b, hit)
		from = max(0, hitTok-n/4)
	}
	return p.c.windowOf(sides, s, from, n)
}

// render assembles the texts kept (and the window) and counts the block.
func (p *cutPlan) render(window *windowed) cutExchange {
	u, a := assemble(p.a.sides, p.kept, window, p.c.counter)
	block := p.x.render(u, a)
	return cutExchange{user: u, ai: a, block: block, tokens: p.c.counter.Count(block)}
}

// shrink renders the plan until the block fits: while the estimate
// under-counted, it drops the last kept segment, else shrinks the window.
// ok is false when nothing is left to drop.
func (p *cutPlan) shrink() (out cutExchange, ok bool) {
	for {
		if out = p.render(p.window); out.tokens <= p.limit {
			return out, true
		}
		switch {
		case len(p.kept) > p.forced:
			p.dropFrom(len(p.kept) - 1)
			if len(p.kept) == p.forced {
				// The one segment that seemed to fit does not: a window
				// of the best one, as when none fits whole, rather than
				// nothing.
				p.window = p.bestWindow()
			}
		case p.window != nil && p.window.text != "":
			// Smaller each time: a window trimmed to word boundaries may
			// come out the same for a token less.
			n := p.c.counter.Count(p.window.text)
			for step := max(1, n/8); ; step *= 2 {
				w := p.c.windowOf(p.a.sides, p.window.seg, p.window.from, n-step)
				if len(w.text) < len(p.window.text) || n-step <= 0 {
					p.window = w
					break
				}
			}
		default:
			return cutExchange{}, false
		}
	}
}

// grow adds to out, while the estimate over-counted, the segments left
// out, best first, by estimate within the room the exact count shows,
// and counts again (a few rounds at most: counting a long block is what
// costs).
func (p *cutPlan) grow(out cutExchange) cutExchange {
	for round := 0; round < 3 && p.limit-out.tokens >= minWindow; round++ {
		slack := p.limit - out.tokens
		n := len(p.kept)
		for _, s := range p.rest {
			if p.keep[s.side][s.idx] || p.costLB(s) > slack {
				continue
			}
			if c := p.cost(s); c <= slack {
				p.add(s)
				slack -= c
			}
		}
		if len(p.kept) == n {
			break
		}
		if more := p.render(nil); more.tokens <= p.limit {
			out = more
			continue
		}
		p.dropFrom(n)
		break
	}
	return out
}

// minKeep is the fewest tokens of text worth showing of a cut exchange
// when no whole segment of it fits; minWindow the fewest worth trying to
// add.
const (
	minKeep   = 24
	minWindow = 8
)

// windowed is a segment cut to a window of tokens, at word boundaries.
type windowed struct {
	seg        segment
	from       int    // first token of the window
	text       string // the window
	start, end int    // its byte span in the side's text
}

func (c *cutter) windowOf(sides [2]sideText, s segment, from, n int) *windowed {
	text := sides[s.side].text[s.start:s.end]
	wt := c.counter.window(text, from, max(0, n))
	off := 0
	if i := strings.Index(text, wt); i >= 0 && wt != "" {
		off = i
	}
	start, end := off, off+len(wt)
	// Word boundaries: drop a partial word at either end, when the window
	// holds more than that word.
	if start > 0 && !isSpaceBefore(text, start) {
		if i := strings.IndexFunc(text[start:end], unicode.IsSpace); i > 0 {
			start += i
		}
	}
	if end < len(text) && !unicode.IsSpace(rune(text[end])) {
		if i := strings.LastIndexFunc(text[start:end], unicode.IsSpace); i > 0 {
			end = start + i
		}
	}
	return &windowed{seg: s, from: from, text: strings.TrimSpace(text[start:end]), start: s.start + start, end: s.start + end}
}

func isSpaceBefore(text string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return unicode.IsSpace(r)
}

// score returns the segments of both sides, best first: by the query
// terms each holds (a term rare within the exchange weighs more), ties
// by headPriority.
func (c *cutter) score(d *shapeDeep) []segment {
	var segs []segment
	df := map[string]int{}
	var segTerms [][]string
	for side := range 2 {
		for i, sp := range d.segs[side] {
			s := segment{side: side, idx: i, start: sp[0], end: sp[1], tokensLB: int(d.tokensLB[side][i])}
			var matched []string
			if len(c.query) > 0 {
				matched = c.query.in(d.terms[side][i])
				for _, t := range matched {
					df[t]++
				}
				s.matched = len(matched) > 0
			}
			// A repeat of an earlier segment is never kept (its marker
			// says how much was like it), unless the query names what
			// sets it apart (a term with a digit: "CheckField30",
			// "batch 450").
			s.repeat = d.repeat[side][i] && !slices.ContainsFunc(matched, func(t string) bool {
				return strings.IndexFunc(t, unicode.IsDigit) >= 0
			})
			segs = append(segs, s)
			segTerms = append(segTerms, matched)
		}
	}
	n := float64(len(segs))
	for i := range segs {
		// Summed in the order the terms first appear in the segment.
		for _, t := range segTerms[i] {
			segs[i].score += math.Log(1 + n/float64(df[t]))
		}
		segs[i].prio = headPriority(segs[i], len(d.segs[segs[i].side]))
	}
	slices.SortStableFunc(segs, func(a, b segment) int {
		if a.repeat != b.repeat {
			if b.repeat {
				return -1
			}
			return 1
		}
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

// in returns the terms of q that joined (distinct terms separated by
// single spaces) holds, in the order they appear there.
func (q terms) in(joined string) []string {
	type at struct {
		pos int
		t   string
	}
	var found []at
	for t := range q {
		if p := indexTerm(joined, t); p >= 0 {
			found = append(found, at{p, t})
		}
	}
	slices.SortFunc(found, func(a, b at) int { return a.pos - b.pos })
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.t
	}
	return out
}

// indexTerm returns where t stands as a whole term in joined, -1 if not.
func indexTerm[S string | []byte](joined, t S) int {
	if len(t) == 0 {
		return -1
	}
	for off := 0; off < len(joined); {
		i := indexOf(joined[off:], t)
		if i < 0 {
			return -1
		}
		i += off
		if (i == 0 || joined[i-1] == ' ') && (i+len(t) == len(joined) || joined[i+len(t)] == ' ') {
			return i
		}
		off = i + 1
	}
	return -1
}

// indexOf is strings.Index, or bytes.Index for byte slices.
func indexOf[S string | []byte](s, t S) int {
	switch s := any(s).(type) {
	case string:
		return strings.Index(s, any(t).(string))
	case []byte:
		return bytes.Index(s, any(t).([]byte))
	}
	panic("unreachable")
}

// firstHit returns the offset in text (segment s's) of its first word
// whose term the query holds, -1 if none.
func (c *cutter) firstHit(s segment, text string) int {
	if !s.matched {
		return -1
	}
	return firstHit(text, c.query)
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
		if !analyze.IsWordRune(r) {
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !analyze.IsWordRune(r) {
				break
			}
			j += size
		}
		for _, t := range analyze.Terms(text[i:j]) {
			if q[t] {
				return i
			}
		}
		i = j
	}
	return -1
}

// assemble joins the kept segments of each side in their original order
// (the window, when there is one, in its segment's place). Each place
// where text was left out gets a marker saying how many characters, unless
// the text costs no more tokens than its marker: then the text stays. A
// kept line of a fenced block whose opening line was cut gets it back, and
// a block left open is closed. A side that was empty stays empty; a side
// of which nothing is kept is just a marker.
func assemble(sides [2]sideText, kept []segment, w *windowed, counter *Counter) (string, string) {
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
		wi := -1
		if w != nil && w.seg.side == side {
			wi = w.seg.idx
		}
		var b strings.Builder
		cur := noFence
		pos := 0 // bytes of the original accounted for
		trimEnd := func() {
			t := strings.TrimRight(b.String(), " \t")
			b.Reset()
			b.WriteString(t)
		}
		lineStart := func() {
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				b.WriteByte('\n')
			}
		}
		// gap writes what lies between pos and start: white space as is,
		// else a marker (on its own line unless the cut is within a
		// line of prose).
		gap := func(start int, next fence, midLine bool) {
			g := st.text[pos:start]
			if strings.TrimSpace(g) == "" {
				if b.Len() > 0 {
					b.WriteString(g)
				}
				return
			}
			if cheaperThanMarker(g, counter) {
				// The text itself, as the original has it (it holds no
				// fence line: it lies in the block, or outside any, where
				// its neighbours are).
				b.WriteString(g)
				return
			}
			if cur.block >= 0 && cur.block != next.block {
				lineStart()
				b.WriteString(cur.close + "\n")
				cur = noFence
			}
			m := marker(utf8.RuneCountInString(g))
			if midLine && cur.block < 0 && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				trimEnd()
				b.WriteString(" " + m + " ")
				return
			}
			lineStart()
			b.WriteString(m)
			if midLine && cur.block < 0 {
				b.WriteByte(' ')
			} else {
				b.WriteByte('\n')
			}
		}
		for i := 0; i < n; i++ {
			if !keep[i] && i != wi {
				continue
			}
			j := i
			start, end := st.segs[i][0], st.segs[i][1]
			if i == wi {
				start, end = w.start, w.end
			} else {
				for j+1 < n && keep[j+1] && j+1 != wi {
					j++
				}
				end = st.segs[j][1]
			}
			at := st.fenceAt[i]
			midLine := start > 0 && st.text[start-1] != '\n'
			gap(start, at, midLine)
			if at.block >= 0 && cur.block != at.block {
				lineStart()
				b.WriteString(at.open + "\n")
			}
			text := st.text[start:end]
			if i == wi {
				text = w.text
			}
			b.WriteString(text)
			cur = st.fenceEnds[j]
			if i == wi && end < st.segs[i][1] {
				cur = at
			}
			pos = end
			i = j
		}
		// What is left out at the end, and a block still open.
		if rest := st.text[pos:]; pos < len(st.text) && strings.TrimSpace(rest) != "" && cheaperThanMarker(rest, counter) {
			b.WriteString(rest)
		} else if pos < len(st.text) && strings.TrimSpace(rest) != "" {
			midLine := pos > 0 && st.text[pos-1] != '\n'
			m := marker(utf8.RuneCountInString(rest))
			if midLine && cur.block < 0 && b.Len() > 0 {
				trimEnd()
				b.WriteString(" " + m)
			} else {
				lineStart()
				b.WriteString(m)
			}
		}
		if cur.block >= 0 {
			lineStart()
			b.WriteString(cur.close)
		}
		text := strings.TrimSpace(b.String())
		if text == "" {
			text = marker(utf8.RuneCountInString(st.text))
		}
		out[side] = text
	}
	return out[0], out[1]
}

// cheaperThanMarker reports whether text left out costs no more tokens
// than the marker that would stand for it, and holds no fence line (it is
// then shown as it is: a marker must never cost more than what it
// replaces).
func cheaperThanMarker(text string, counter *Counter) bool {
	m := marker(utf8.RuneCountInString(text))
	if counter == nil || len(text) > 4*len(m) || strings.Contains(text, "``") || strings.Contains(text, "~~") {
		return false
	}
	return counter.Count(strings.TrimSpace(text)) <= counter.Count(m)
}
