package resume

// Selection: which exchanges of the chain go into the pack.
//
// Candidates. The exchanges of the chain's sessions are the material, with
// one exception: the exchanges of S after its latest context_reset (all of
// S when it has none) are assumed to be still in the agent's context window
// and are left out, unless Options.IncludeCurrent. The boundary is that
// reset: what comes before it is what the agent lost.
//
// When every candidate fits whole, every one is shown whole. Otherwise
// room is given, in this order, to
//
//  1. the tail: the newest candidates before the boundary (what the agent
//     was doing when it lost its context): always the last one, then up to
//     Policy.TailMax while they fit in Policy.TailShare of the budget;
//  2. the exchanges most relevant to the query (the Source's ranking,
//     restricted to the chain): first whole, best first, those of the best
//     Policy.WholeMax that fit in Policy.WholeShare of the budget; then, so
//     that the next ones are represented too, up to Policy.RelevantMax
//     relevant exchanges at Policy.CoverShare of the budget each;
//  3. room left is handed back: the chosen exchanges that were cut grow,
//     best first, to whole when they fit, then towards whole;
//  4. the most recent remaining candidates, newest first, whole while they
//     fit; then those that did not fit, cut to the room left.
//
// Steps 3 and 4 run again on the exact count of the rendered text, so the
// budget is used: a pack ends with less room left than any cut exchange
// would need to be shown whole. An exchange larger than its room is cut to
// its relevant part (cut.go); one that cannot usefully be cut to fit is
// passed over. An exchange whose texts are identical to one already chosen
// is left out: identical texts appear once.
//
// Budget. The whole text counts: headers, notes and the files list. While
// choosing, each exchange is charged its block's tokens plus room for what
// it may add (its session's header, a gap note, its files); the rendered
// text is then counted exactly, and while it is over the budget the last
// chosen exchange is cut shorter, or dropped. The text is never over the
// budget.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
)

// Policy holds the selection's tunables. Shares are of the budget; a room
// is never below MinItem tokens.
//
// DefaultPolicy was tuned on the tune half of the LongMemEval_S dev set
// (go run ./cmd/continuity-eval --mode resume --split tune, with
// $CONTINUITY_RESUME_POLICY to try others) for evidence kept whole without
// losing evidence kept in part, and is reported on the held-out half.
type Policy struct {
	TailShare     float64 // budget share for the tail
	TailMax       int     // most exchanges in the tail
	WholeShare    float64 // budget share for the best-ranked exchanges shown whole
	WholeMax      int     // how many of the best-ranked are offered that room
	CoverShare    float64 // budget share for each further relevant exchange
	RelevantMax   int     // most exchanges chosen for relevance
	MinItem       int     // fewest tokens worth giving an exchange's block
	RelevantLimit int     // how many ranked exchanges to ask the Source for
	MaxFiles      int     // most files listed; the rest are counted
	FilesShare    float64 // budget share the files list may take
}

// DefaultPolicy is the policy of Build when Options.Policy is nil.
var DefaultPolicy = Policy{
	TailShare:     0.10,
	TailMax:       2,
	WholeShare:    0.50,
	WholeMax:      4,
	CoverShare:    0.04,
	RelevantMax:   16,
	MinItem:       64,
	RelevantLimit: 200,
	MaxFiles:      20,
	FilesShare:    0.08,
}

// fetchBatch is how many events are read from the Source at once.
const fetchBatch = 32

// maxMisses is how many candidates in a row may fail to fit (or be
// duplicates) before the recency fill stops: when the budget left is too
// small for them, reading the rest of a long chain would be in vain.
const maxMisses = 64

// candidate is an exchange that may go into the pack.
type candidate struct {
	pos    int  // index in the timeline
	window bool // after the boundary (only with IncludeCurrent)
}

// pick is a chosen exchange.
type pick struct {
	cand      int // index in plan.cands
	ev        index.Event
	user, ai  string // as included
	truncated bool
	block     string
	tokens    int // of block
	full      int // of the block shown whole; -1 when not counted yet (fullAtMost)
	rank      int // 1 + its place in the relevance ranking; 0 when not ranked, -1 not known yet (rankNow)
	extra     int // tokens charged for what comes with it (header, note, files)
}

func (pk *pick) cost() int { return pk.tokens + pk.extra }

// sessionInfo is what the pack says of one session of the chain.
type sessionInfo struct {
	first, last time.Time
	total       int // candidate exchanges
}

// oneDay reports whether the session lies within one UTC day, so that its
// exchanges show the time of day only.
func (si *sessionInfo) oneDay() bool { return sameDay(si.first, si.last) }

// layout is what the selection knows of a chain before reading any text:
// its timeline, the candidates, the sessions and the boundary. It depends
// on the index (the chain's links, its sessions' exchanges and resets), S
// and IncludeCurrent only, never on the query or the budget, so a Cache
// keeps it between packs (cache.go). It is not changed once built.
type layout struct {
	session        string
	includeCurrent bool
	chain          Chain
	tl             []index.TimelineEntry
	cands          []candidate
	byRow          map[int64]int // row id -> index in cands
	inCtx          int           // exchanges left out as in the window
	reset          bool          // S has a context reset
	sess           map[string]*sessionInfo
	withCands      int   // sessions with candidates
	recent         []int // candidates, newest first
}

func newLayout(session string, chain Chain, tl []index.TimelineEntry, includeCurrent bool) *layout {
	l := &layout{
		session: session, includeCurrent: includeCurrent, chain: chain, tl: tl,
		byRow: map[int64]int{},
		sess:  map[string]*sessionInfo{},
	}
	// The boundary: S's latest context reset.
	boundary := -1
	for i, e := range tl {
		if e.SessionID == session && e.Type == logformat.TypeContextReset {
			boundary = i
		}
	}
	l.reset = boundary >= 0
	for i, e := range tl {
		si := l.sess[e.SessionID]
		if si == nil {
			si = &sessionInfo{first: e.Timestamp, last: e.Timestamp}
			l.sess[e.SessionID] = si
		}
		si.first, si.last = minTime(si.first, e.Timestamp), maxTime(si.last, e.Timestamp)
		if e.Type != logformat.TypeExchange {
			continue
		}
		window := e.SessionID == session && i > boundary
		if window && !includeCurrent {
			l.inCtx++
			continue
		}
		l.byRow[e.Row] = len(l.cands)
		l.cands = append(l.cands, candidate{pos: i, window: window})
		si.total++
	}
	for _, si := range l.sess {
		if si.total > 0 {
			l.withCands++
		}
	}
	l.recent = make([]int, len(l.cands))
	for i := range l.recent {
		l.recent[i] = len(l.cands) - 1 - i
	}
	return l
}

// size is how many timeline entries the layout holds (what it costs to
// keep).
func (l *layout) size() int { return len(l.tl) }

// plan is one pack being chosen over a layout.
type plan struct {
	*layout
	opts    Options
	pol     Policy
	counter *Counter
	cut     *cutter

	// choosing
	events map[int64]index.Event
	picks  []*pick // in priority order
	picked map[int]bool
	// lastCut lowers MinItem for the last cuts, which fill what is left.
	lastCut int
	rank    map[int]int // candidate -> 1 + its place in the relevance ranking, as far as walked
	walk    *rankWalk   // the relevance ranking; nil before it is asked (or without a query)
	keys    map[string]bool
	shown   map[string]int // picks per session
	files   fileSet
	used    int
	// minExtra is leastExtra's answer, 0 until asked.
	minExtra int
	// x records what an Explanation needs (explain.go); nil unless asked.
	x *explainer
	// gone is why S's own exchanges are offered without IncludeCurrent
	// (Pack.AgentGone), "" when they are not; instead the latest session
	// when it had nothing to resume (Pack.Instead).
	gone, instead string
}

// newPlan is the plan of a pack of l: its token counter (of
// opts.Encoding; counts, when not nil, remembers counts between packs),
// the query analysed, and what choose fills.
func newPlan(l *layout, opts Options, pol Policy, counts *countCache) (*plan, error) {
	counter, err := NewCounter(opts.Encoding)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	counter = counter.withCache(counts)
	return &plan{
		layout: l, opts: opts, pol: pol, counter: counter,
		cut:    &cutter{counter: counter, query: analyse(opts.Query)},
		events: map[int64]index.Event{},
		picked: map[int]bool{}, rank: map[int]int{}, keys: map[string]bool{}, shown: map[string]int{},
	}, nil
}

// choose fills p.picks.
func (p *plan) choose(ctx context.Context, src Source) error {
	budget := p.opts.Budget
	p.used = p.counter.Count(renderHeader(p.worstHeader()))
	if len(p.cands) == 0 || p.used >= budget {
		return nil
	}
	if ok, err := p.allWhole(ctx, src); ok || err != nil {
		return err
	}
	share := func(f float64) int { return max(p.pol.MinItem, int(f*float64(budget))) }

	// 1. The tail.
	var tail []int
	for i := len(p.cands) - 1; i >= 0 && len(tail) < max(1, p.pol.TailMax); i-- {
		if !p.cands[i].window {
			tail = append(tail, i)
		}
	}
	tailRoom := share(p.pol.TailShare)
	tailUsed := 0
	for k, ci := range tail {
		room := tailRoom - tailUsed
		if k > 0 && room < p.pol.MinItem {
			break
		}
		added, err := p.try(ctx, src, ci, room, k > 0, tail[k:])
		if err != nil {
			return err
		}
		if added != nil {
			tailUsed += added.cost()
		} else if k > 0 {
			break
		}
	}
	p.mark()

	// 2. Relevance: the best whole, then more of them represented.
	if strings.TrimSpace(p.opts.Query) != "" && p.remaining() >= p.pol.MinItem {
		rows, err := src.Relevant(ctx, p.opts.Query, p.chain.Sessions, p.pol.RelevantLimit)
		if err != nil {
			return fmt.Errorf("resume: rank exchanges for %q: %w", p.opts.Query, err)
		}
		p.walk = newRankWalk(rows, p.pol.RelevantLimit)
		wholeRoom := int(p.pol.WholeShare * float64(budget))
		relevant := 0
		for k := 0; k < p.pol.WholeMax; k++ {
			ci, ok, err := p.rankedAt(ctx, src, k)
			if err != nil || !ok {
				if err != nil {
					return err
				}
				break
			}
			if p.picked[ci] {
				relevant++
				continue
			}
			pk, err := p.try(ctx, src, ci, min(wholeRoom, p.remaining()), true, nil)
			if err != nil {
				return err
			}
			if pk != nil {
				wholeRoom -= pk.cost()
				relevant++
			}
		}
		for k := 0; relevant < p.pol.RelevantMax && p.remaining() >= p.pol.MinItem; k++ {
			if p.remaining()-p.leastExtra() < p.pol.MinItem {
				break // no exchange has room left (try would refuse each)
			}
			ci, ok, err := p.rankedAt(ctx, src, k)
			if err != nil || !ok {
				if err != nil {
					return err
				}
				break
			}
			if p.picked[ci] {
				if k >= p.pol.WholeMax {
					relevant++
				}
				continue
			}
			pk, err := p.try(ctx, src, ci, share(p.pol.CoverShare), false, nil)
			if err != nil {
				return err
			}
			if pk != nil {
				relevant++
			}
		}
	}

	p.mark()
	// 3 and 4, then again on the exact count.
	recent := p.recent
	for round := 0; round < 3; round++ {
		n := len(p.picks)
		grown, err := p.handBack(ctx, src)
		if err != nil {
			return err
		}
		if err := p.fillRecent(ctx, src, recent); err != nil {
			return err
		}
		if !grown && len(p.picks) == n && round > 0 {
			break
		}
		if !p.recount() {
			break
		}
	}
	return nil
}

// recount sets the room used to what the rendered text takes, when that
// is less than was charged (for headers, notes and files, an upper
// bound), and reports whether it was.
func (p *plan) recount() bool {
	exact := p.assemble(p.picks).Tokens
	worst := p.counter.Count(renderHeader(p.worstHeader())) - p.counter.Count(renderHeader(p.header(len(p.picks), len(p.shown))))
	if exact+worst+recountMargin >= p.used {
		return false
	}
	p.used = exact + worst + recountMargin
	return true
}

// recountMargin is kept free when the budget is recounted exactly: token
// counts of joined texts may differ from their sum by a token here and
// there.
const recountMargin = 2

// allWhole chooses every candidate whole when they all fit (counted
// exactly); else it chooses nothing. Long chains are not tried: their
// exchanges could not all fit.
func (p *plan) allWhole(ctx context.Context, src Source) (bool, error) {
	if len(p.cands)*minExchangeTokens > p.opts.Budget {
		return false, nil
	}
	var all []int
	for i := len(p.cands) - 1; i >= 0; i-- {
		all = append(all, i)
	}
	// Cheap bounds first: the texts' bytes, then their tokens as counted.
	bytes := 0
	for k, ci := range all {
		ev, err := p.event(ctx, src, ci, all[k:])
		if err != nil {
			return false, err
		}
		if bytes += len(ev.User) + len(ev.AI); bytes > maxBytesPerToken*p.opts.Budget {
			return false, nil
		}
	}
	var picks []*pick
	keys := map[string]bool{}
	used := 0
	for _, ci := range all {
		ev := p.events[p.tl[p.cands[ci].pos].Row]
		key := ev.User + "\x00" + ev.AI
		if keys[key] {
			continue
		}
		keys[key] = true
		st := stamp(ev.Timestamp, p.sess[ev.SessionID].oneDay())
		a := p.cut.analyse(exRef{row: ev.Row, stamp: st, user: ev.User, ai: ev.AI}, false)
		full := p.cut.full(a)
		if used += full; used > p.opts.Budget {
			return false, nil
		}
		picks = append(picks, &pick{cand: ci, ev: ev, user: a.user, ai: a.ai, block: a.block, tokens: full, full: full})
	}
	if pk := p.assemble(picks); pk.Tokens > p.opts.Budget {
		return false, nil
	}
	for _, pk := range picks {
		p.picked[pk.cand] = true
		p.shown[pk.ev.SessionID]++
	}
	maps.Copy(p.keys, keys)
	p.picks = picks
	p.used = p.opts.Budget
	return true, nil
}

// maxExactTries is how many candidates a recency fill may try by counting
// the pack exactly, when the charge for what comes with an exchange (the
// worst case of a gap note, a session header, its files) says it does not
// fit but its block alone would.
const maxExactTries = 4

// tryExact adds candidate ci whole if the pack with it, counted exactly,
// is within the budget. Its event must have been read (by try).
func (p *plan) tryExact(ci int) bool {
	if p.picked[ci] {
		return false
	}
	ev, ok := p.events[p.tl[p.cands[ci].pos].Row]
	if !ok || p.keys[ev.User+"\x00"+ev.AI] || len(ev.User)+len(ev.AI) > maxBytesPerToken*p.remaining() {
		return false
	}
	st := stamp(ev.Timestamp, p.sess[ev.SessionID].oneDay())
	x := exRef{row: ev.Row, stamp: st, user: ev.User, ai: ev.AI}
	full, ok := p.cut.wholeAtMost(x, p.remaining())
	if !ok {
		return false
	}
	a := p.cut.analyse(x, false)
	pk := &pick{cand: ci, ev: ev, user: a.user, ai: a.ai, block: a.block, tokens: full, full: full, rank: p.rankNow(ci)}
	picks := append(slices.Clone(p.picks), pk)
	exact := p.assemble(picks).Tokens
	sessions := maps.Clone(p.shown)
	sessions[ev.SessionID]++
	worst := p.counter.Count(renderHeader(p.worstHeader())) - p.counter.Count(renderHeader(p.header(len(picks), len(sessions))))
	if exact+recountMargin > p.opts.Budget {
		return false
	}
	newFiles, filesCost := p.offerFiles(&p.files, ev.Files)
	p.picks = picks
	p.picked[ci] = true
	p.keys[ev.User+"\x00"+ev.AI] = true
	p.shown[ev.SessionID]++
	p.files.add(newFiles, filesCost)
	p.used = max(p.used, min(p.opts.Budget, exact+worst+recountMargin))
	return true
}

// maxBytesPerToken bounds the bytes of text a token of cl100k_base-like
// encodings stands for in practice (English prose averages about 4).
const maxBytesPerToken = 12

// minExchangeTokens is the fewest tokens an exchange's block takes.
const minExchangeTokens = 8

// handBack gives the room left to the chosen exchanges that were cut, most
// relevant first (then in the order they were chosen): first each that now
// fits whole is made whole, then each grows towards whole. It reports
// whether any grew.
func (p *plan) handBack(ctx context.Context, src Source) (bool, error) {
	for _, pk := range p.picks {
		if pk.rank < 0 {
			r, err := p.rankOf(ctx, src, pk.cand)
			if err != nil {
				return false, err
			}
			pk.rank = r
		}
	}
	order := slices.Clone(p.picks)
	slices.SortStableFunc(order, func(a, b *pick) int {
		switch {
		case a.rank > 0 && b.rank > 0:
			return cmp.Compare(a.rank, b.rank)
		case a.rank > 0:
			return -1
		case b.rank > 0:
			return 1
		}
		return 0
	})
	grown := false
	for _, pk := range order {
		if pk.truncated && p.fullAtMost(pk, pk.tokens+p.remaining()) {
			grown = p.grow(pk, pk.full) || grown
		}
	}
	for _, pk := range order {
		// Growing a shown exchange costs no header: any room worth a
		// window is worth giving it.
		if p.remaining() < minWindow {
			break
		}
		if pk.truncated {
			grown = p.grow(pk, pk.tokens+p.remaining()) || grown
		}
	}
	return grown, nil
}

// fullAtMost reports whether the chosen exchange pk shown whole takes at
// most limit tokens, counting it (pk.full) only when a lower bound does
// not say it cannot.
func (p *plan) fullAtMost(pk *pick, limit int) bool {
	if pk.full < 0 {
		x := exRef{row: pk.ev.Row, stamp: stamp(pk.ev.Timestamp, p.sess[pk.ev.SessionID].oneDay()), user: pk.ev.User, ai: pk.ev.AI}
		n, ok := p.cut.wholeAtMost(x, limit)
		if !ok {
			return false
		}
		pk.full = n
	}
	return pk.full <= limit
}

// fillRecent adds the most recent candidates not chosen yet, newest
// first: whole while they fit, then those that did not fit, cut to the
// room left.
func (p *plan) fillRecent(ctx context.Context, src Source, recent []int) error {
	var later []int
	misses, exact := 0, 0
	for k, ci := range recent {
		if p.remaining() < minExchangeTokens || misses == maxMisses {
			break
		}
		if p.picked[ci] {
			continue
		}
		if exact == maxExactTries && p.remaining()-p.leastExtra() < p.pol.MinItem {
			// No room for any exchange whole (try would refuse it) and
			// no exact try left: it waits for the cuts below.
			later = append(later, ci)
			misses++
			continue
		}
		pk, err := p.try(ctx, src, ci, p.remaining(), true, recent[k:])
		if err != nil {
			return err
		}
		if pk == nil && exact < maxExactTries {
			exact++
			if p.tryExact(ci) {
				pk = p.picks[len(p.picks)-1]
			}
		}
		if pk == nil && !p.picked[ci] {
			later = append(later, ci)
			misses++
		} else {
			misses = 0
		}
	}
	p.lastCut = p.pol.MinItem / 2
	defer func() { p.lastCut = 0 }()
	for k, ci := range later {
		if p.remaining()-p.leastExtra() < p.pol.MinItem-p.lastCut {
			break // no exchange has room left (try would refuse each)
		}
		if _, err := p.try(ctx, src, ci, p.remaining(), false, later[k:]); err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) remaining() int { return p.opts.Budget - p.used }

// try adds candidate ci with at most room tokens for its block, if it is
// not chosen yet, not a duplicate, and a useful part of it fits (with
// wholeOnly, all of it). next is the list being walked from ci on, to read
// events in batches.
func (p *plan) try(ctx context.Context, src Source, ci, room int, wholeOnly bool, next []int) (*pick, error) {
	if p.picked[ci] {
		return nil, nil
	}
	p.seen(ci)
	ev, err := p.event(ctx, src, ci, next)
	if err != nil {
		return nil, err
	}
	key := ev.User + "\x00" + ev.AI
	if p.keys[key] {
		return nil, nil
	}
	// Room for what the exchange brings along: the blank line, its
	// session's header or a gap note next to an exchange of the same
	// session, its files.
	extra := 1
	if p.shown[ev.SessionID] == 0 {
		extra += p.sessionHeaderCost(ev.SessionID)
	} else {
		extra += p.gapReserve(ev.SessionID)
	}
	newFiles, filesCost := p.offerFiles(&p.files, ev.Files)
	extra += filesCost
	x := exRef{row: ev.Row, stamp: stamp(ev.Timestamp, p.sess[ev.SessionID].oneDay()), user: ev.User, ai: ev.AI}
	if !wholeOnly {
		// A short prompt is never cut: the room is at least what it
		// needs with a useful part of the answer.
		room = max(room, p.cut.promptRoom(x))
	}
	room = min(room, p.remaining()-extra)
	if least := p.pol.MinItem - p.lastCut; room < least || wholeOnly && room < minExchangeTokens {
		return nil, nil
	}
	// A text of more than maxBytesPerToken bytes a token of the room
	// cannot fit whole: no need to count it.
	if wholeOnly && len(ev.User)+len(ev.AI) > maxBytesPerToken*room {
		return nil, nil
	}
	full := -1 // not counted yet (fullAtMost)
	if wholeOnly {
		n, ok := p.cut.wholeAtMost(x, room)
		if !ok {
			return nil, nil
		}
		full = n
	}
	cx, ok := p.cut.cut(x, room)
	if !ok {
		return nil, nil
	}
	if !cx.truncated {
		full = cx.tokens
	}
	pk := &pick{cand: ci, ev: ev, user: cx.user, ai: cx.ai, truncated: cx.truncated, block: cx.block,
		tokens: cx.tokens, full: full, rank: p.rankNow(ci), extra: extra}
	p.picks = append(p.picks, pk)
	p.picked[ci] = true
	p.keys[key] = true
	p.shown[ev.SessionID]++
	p.files.add(newFiles, filesCost)
	p.used += pk.cost()
	return pk, nil
}

// grow gives a cut exchange up to room tokens, as the budget allows. It
// reports whether the exchange grew.
func (p *plan) grow(pk *pick, room int) bool {
	room = min(room, pk.tokens+p.remaining())
	if !pk.truncated || room <= pk.tokens {
		return false
	}
	cx, ok := p.cut.cut(exRef{row: pk.ev.Row, stamp: stamp(pk.ev.Timestamp, p.sess[pk.ev.SessionID].oneDay()), user: pk.ev.User, ai: pk.ev.AI}, room)
	if !ok || cx.tokens <= pk.tokens {
		return false
	}
	p.used += cx.tokens - pk.tokens
	pk.user, pk.ai, pk.truncated, pk.block, pk.tokens = cx.user, cx.ai, cx.truncated, cx.block, cx.tokens
	return true
}

// event returns candidate ci's event, reading it and the next few of the
// walk in one batch.
func (p *plan) event(ctx context.Context, src Source, ci int, next []int) (index.Event, error) {
	row := p.tl[p.cands[ci].pos].Row
	if ev, ok := p.events[row]; ok {
		return ev, nil
	}
	var rows []int64
	for _, c := range next {
		r := p.tl[p.cands[c].pos].Row
		if _, ok := p.events[r]; !ok && !p.picked[c] {
			rows = append(rows, r)
		}
		if len(rows) == fetchBatch {
			break
		}
	}
	if len(rows) == 0 || rows[0] != row {
		rows = append([]int64{row}, rows...)
	}
	evs, err := src.Events(ctx, rows)
	if err != nil {
		return index.Event{}, fmt.Errorf("resume: read exchanges: %w", err)
	}
	for _, ev := range evs {
		p.events[ev.ID] = ev
	}
	ev, ok := p.events[row]
	if !ok {
		return index.Event{}, fmt.Errorf("resume: exchange row %d vanished from the index", row)
	}
	return ev, nil
}

// worstHeader is the pack's header with counts as long as they can get.
func (p *plan) worstHeader() headerInfo {
	h := p.header(len(p.cands), len(p.sess))
	h.total = max(h.total, 1) // the "Shown: ..." form, the longer one
	return h
}

func (p *plan) header(shown, sessionsShown int) headerInfo {
	return headerInfo{
		session: p.session, chain: p.chain,
		chainLine: chainLine(p.chain, p.counter, max(16, p.opts.Budget/10)),
		shown:     shown, total: len(p.cands), sessionsShown: sessionsShown,
		sessionsTotal: p.sessionsWithCandidates(), inWindow: p.inCtx, includeCurrent: p.opts.IncludeCurrent, hasReset: p.reset,
		gone: p.gone, instead: p.instead,
	}
}

func (p *plan) sessionsWithCandidates() int { return p.withCands }

// leastExtra is the least any candidate brings along (try's extra: the
// blank line, its session's header or a gap note; files may add none),
// so that remaining()-leastExtra() bounds the room any try can give.
func (p *plan) leastExtra() int {
	if p.minExtra == 0 {
		least := -1
		for id, si := range p.sess {
			if si.total == 0 {
				continue
			}
			if c := 1 + min(p.sessionHeaderCost(id), p.gapReserve(id)); least < 0 || c < least {
				least = c
			}
		}
		p.minExtra = max(least, 1)
	}
	return p.minExtra
}

// gapReserve is the most a gap note in the session can take.
func (p *plan) gapReserve(id string) int {
	n := p.sess[id].total
	return 1 + p.counter.Count(renderGap(n, n))
}

// sessionHeaderCost is the most the session's header can take.
func (p *plan) sessionHeaderCost(id string) int {
	si := p.sess[id]
	return 1 + p.counter.Count(renderSessionHeader(id, si.first, si.last, si.total, si.total))
}

// fileSet is the files listed so far and the tokens they take.
type fileSet struct {
	listed map[string]bool
	order  []string
	tokens int
}

// offerFiles returns which of an exchange's files would be listed next to
// those of fs, and the tokens they would add: files not listed yet, within
// MaxFiles and FilesShare of the budget (the list is secondary: it never
// keeps an exchange out).
func (p *plan) offerFiles(fs *fileSet, files []string) ([]string, int) {
	var out []string
	cost := 0
	room := int(p.pol.FilesShare * float64(p.opts.Budget))
	for _, f := range files {
		if fs.has(f) || slices.ContainsFunc(out, func(o string) bool { return sameFile(o, f) }) {
			continue
		}
		if len(fs.order)+len(out) >= p.pol.MaxFiles {
			break
		}
		c := p.counter.Count(renderFileLine(f))
		if len(fs.order) == 0 && len(out) == 0 {
			c += 1 + p.counter.Count(filesHeading) + p.counter.Count(renderMoreFiles(worstCount))
		}
		if fs.tokens+cost+c > room {
			break
		}
		out = append(out, f)
		cost += c
	}
	return out, cost
}

// has reports whether fs lists f, under this name or another of the same
// file (sameFile).
func (fs *fileSet) has(f string) bool {
	return fs.listed[f] || slices.ContainsFunc(fs.order, func(o string) bool { return sameFile(o, f) })
}

// sameFile reports whether two paths an exchange's files name are the
// same file: equal, or one absolute and ending with the other, relative
// (the workspace's root, which the producer may or may not have written,
// before it).
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	if strings.HasPrefix(b, "/") {
		a, b = b, a
	}
	b = strings.TrimPrefix(b, "./")
	return strings.HasPrefix(a, "/") && !strings.HasPrefix(b, "/") && b != "" && strings.HasSuffix(a, "/"+b)
}

// shortName is the name a file is listed under: of the names the picks
// give it (sameFile), the relative one, without a leading "./".
func shortName(f string, names []string) string {
	for _, n := range names {
		if sameFile(n, f) && len(n) < len(f) {
			f = n
		}
	}
	return strings.TrimPrefix(f, "./")
}

func (fs *fileSet) add(files []string, cost int) {
	if fs.listed == nil {
		fs.listed = map[string]bool{}
	}
	for _, f := range files {
		fs.listed[f] = true
		fs.order = append(fs.order, f)
	}
	fs.tokens += cost
}

// pack renders the chosen exchanges and enforces the budget exactly.
func (p *plan) pack() *Pack {
	budget := p.opts.Budget
	picks := p.picks
	for {
		pk := p.assemble(picks)
		if pk.Tokens <= budget {
			return pk
		}
		if len(picks) == 0 {
			// Not even the header fits: cut it.
			pk.Text = p.counter.Truncate(pk.Text, budget)
			pk.Tokens = p.counter.Count(pk.Text)
			return pk
		}
		// Over: cut the last chosen exchange shorter, else drop it.
		last := picks[len(picks)-1]
		x := exRef{row: last.ev.Row, stamp: stamp(last.ev.Timestamp, p.sess[last.ev.SessionID].oneDay()), user: last.ev.User, ai: last.ev.AI}
		cx, ok := p.cut.cut(x, last.tokens-(pk.Tokens-budget)-1)
		if ok && cx.tokens < last.tokens {
			picks = append(slices.Clone(picks[:len(picks)-1]), &pick{cand: last.cand, ev: last.ev, user: cx.user, ai: cx.ai,
				truncated: cx.truncated, block: cx.block, tokens: cx.tokens, full: last.full, extra: last.extra})
			continue
		}
		picks = picks[:len(picks)-1]
	}
}

// assemble renders a pack of these picks.
func (p *plan) assemble(picks []*pick) *Pack {
	sorted := slices.Clone(picks)
	slices.SortFunc(sorted, func(a, b *pick) int { return cmp.Compare(a.cand, b.cand) })

	// Sessions in the order of their first shown exchange.
	var order []string
	groups := map[string][]*pick{}
	for _, pk := range sorted {
		s := pk.ev.SessionID
		if groups[s] == nil {
			order = append(order, s)
		}
		groups[s] = append(groups[s], pk)
	}

	var b strings.Builder
	b.WriteString(renderHeader(p.header(len(picks), len(order))))
	pack := &Pack{
		SessionID: p.session, Chain: slices.Clone(p.chain.Sessions), Budget: p.opts.Budget, Encoding: p.counter.Name(),
		Exchanges: []Exchange{}, Omitted: len(p.cands) - len(picks), InContext: p.inCtx, Files: []string{},
		AgentGone: p.gone, Instead: p.instead,
	}
	by, of := supersessions(sorted)
	for _, s := range order {
		si := p.sess[s]
		b.WriteString("\n" + renderSessionHeader(s, si.first, si.last, len(groups[s]), si.total))
		for i, pk := range groups[s] {
			if i > 0 {
				if gap := p.gap(groups[s][i-1], pk); gap != "" {
					b.WriteString("\n" + gap)
				}
			}
			b.WriteString("\n" + pk.block + supersessionNote(by[pk], of[pk]))
			x := Exchange{
				ID: pk.ev.EventID, SessionID: s, Timestamp: pk.ev.Timestamp,
				User: pk.user, AI: pk.ai, Truncated: pk.truncated,
			}
			if o := by[pk]; o != nil {
				x.SupersededBy = o.ev.EventID
			}
			for _, o := range of[pk] {
				x.Supersedes = append(x.Supersedes, o.ev.EventID)
			}
			pack.Exchanges = append(pack.Exchanges, x)
		}
	}
	files, more := p.fileList(picks)
	if len(files) > 0 {
		b.WriteString("\n" + filesHeading)
		for _, f := range files {
			b.WriteString(renderFileLine(f))
		}
		if more > 0 {
			b.WriteString(renderMoreFiles(more))
		}
		pack.Files = files
	}
	pack.Text = b.String()
	pack.Tokens = p.counter.Count(pack.Text)
	return pack
}

// gap is the note between two shown exchanges of one session: how many of
// its candidate exchanges, and context resets, lie between them.
func (p *plan) gap(a, b *pick) string {
	s := a.ev.SessionID
	omitted, resets := 0, 0
	for pos := p.cands[a.cand].pos + 1; pos < p.cands[b.cand].pos; pos++ {
		e := p.tl[pos]
		if e.SessionID != s {
			continue
		}
		switch {
		case e.Type == logformat.TypeContextReset:
			resets++
		case e.Type == logformat.TypeExchange:
			if _, ok := p.byRow[e.Row]; ok {
				omitted++
			}
		}
	}
	if omitted+resets == 0 {
		return ""
	}
	return renderGap(omitted, resets)
}

// fileList returns the files to list for these picks and how many more
// they reference. Which files are listed is decided as while choosing
// (offerFiles, in the picks' priority order); they are shown newest
// reference first.
func (p *plan) fileList(picks []*pick) ([]string, int) {
	type ref struct {
		cand, idx int // newest referencing candidate, index in its list
	}
	refs := map[string]ref{}
	var fs fileSet
	var names []string // every name the picks give a file
	for _, pk := range picks {
		fs.add(p.offerFiles(&fs, pk.ev.Files))
		for i, f := range pk.ev.Files {
			if r, seen := refs[f]; !seen || pk.cand > r.cand {
				refs[f] = ref{pk.cand, i}
			}
			if !slices.Contains(names, f) {
				names = append(names, f)
			}
		}
	}
	// A file named several ways counts once, at its newest reference.
	newest := func(f string) ref {
		r := refs[f]
		for _, n := range names {
			if sameFile(n, f) && refs[n].cand > r.cand {
				r = refs[n]
			}
		}
		return r
	}
	listed := fs.order
	slices.SortStableFunc(listed, func(a, b string) int {
		ra, rb := newest(a), newest(b)
		if c := cmp.Compare(rb.cand, ra.cand); c != 0 {
			return c
		}
		return cmp.Compare(ra.idx, rb.idx)
	})
	distinct := 0
	for i, f := range names {
		if !slices.ContainsFunc(names[:i], func(o string) bool { return sameFile(o, f) }) {
			distinct++
		}
	}
	out := make([]string, len(listed))
	for i, f := range listed {
		out[i] = shortName(f, names)
	}
	return out, distinct - len(listed)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
