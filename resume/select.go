package resume

// Selection: which exchanges of the chain go into the pack.
//
// Candidates. The exchanges of the chain's sessions are the material, with
// one exception: the exchanges of S after its latest context_reset (all of
// S when it has none) are assumed to be still in the agent's context window
// and are left out, unless Options.IncludeCurrent. The boundary is that
// reset: what comes before it is what the agent lost.
//
// Priority. Room is given, in this order, to
//
//  1. the tail: the newest candidates before the boundary (what the agent
//     was doing when it lost its context): always the last one, then up to
//     Policy.TailMax while they fit in Policy.TailShare of the budget;
//  2. the exchanges most relevant to the query (the Source's ranking,
//     restricted to the chain): coverage first, the best Policy.RelevantMax
//     at Policy.CoverShare of the budget each (the best one at
//     Policy.TopShare), so that many are represented even when they are
//     long; then each grows, best first, up to Policy.ItemShare;
//  3. the most recent remaining candidates, newest first, Policy.ItemShare
//     each,
//
// until the budget is used. An exchange larger than its room is cut to its
// relevant part (cut.go); one that cannot usefully be cut to fit is passed
// over for smaller ones. An exchange whose texts are identical to one
// already chosen is left out: identical texts appear once.
//
// Budget. The whole text counts: headers, notes and the files list. While
// choosing, each exchange is charged its block's tokens plus room for what
// it may add (its session's header, a gap note, its files); the rendered
// text is then counted exactly, and while it is over the budget the last
// chosen exchange is dropped. The text is never over the budget.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
)

// Policy holds the selection's tunables. Shares are of the budget; a room
// is never below MinItem tokens.
//
// DefaultPolicy was tuned on LongMemEval_S (go run ./cmd/continuity-eval
// --mode resume, with $CONTINUITY_RESUME_POLICY to try others): smaller
// rooms represent more exchanges (recall rises until the cuts get shorter
// than a sentence or two of context), larger ones read better.
type Policy struct {
	TailShare     float64 // budget share for the tail
	TailMax       int     // most exchanges in the tail
	TopShare      float64 // budget share for the best-ranked exchange
	CoverShare    float64 // budget share for the other relevant exchanges, at first
	RelevantMax   int     // most exchanges chosen for relevance
	ItemShare     float64 // budget share any other exchange may grow to
	MinItem       int     // fewest tokens worth giving an exchange's block
	RelevantLimit int     // how many ranked exchanges to ask the Source for
	MaxFiles      int     // most files listed; the rest are counted
	FilesShare    float64 // budget share the files list may take
}

// DefaultPolicy is the policy of Build when Options.Policy is nil.
var DefaultPolicy = Policy{
	TailShare:     0.10,
	TailMax:       2,
	TopShare:      0.12,
	CoverShare:    0.04,
	RelevantMax:   16,
	ItemShare:     0.08,
	MinItem:       40,
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

type plan struct {
	session string
	opts    Options
	pol     Policy
	counter *Counter
	cut     *cutter
	chain   Chain
	tl      []index.TimelineEntry
	cands   []candidate
	byRow   map[int64]int // row id -> index in cands
	inCtx   int           // exchanges left out as in the window
	reset   bool          // S has a context reset
	sess    map[string]*sessionInfo

	// choosing
	events map[int64]index.Event
	picks  []*pick // in priority order
	picked map[int]bool
	keys   map[string]bool
	shown  map[string]int // picks per session
	files  fileSet
	used   int
}

func newPlan(session string, chain Chain, tl []index.TimelineEntry, opts Options, pol Policy, counter *Counter) *plan {
	p := &plan{
		session: session, opts: opts, pol: pol, counter: counter, chain: chain, tl: tl,
		cut:    &cutter{counter: counter, query: analyse(opts.Query)},
		byRow:  map[int64]int{},
		sess:   map[string]*sessionInfo{},
		events: map[int64]index.Event{},
		picked: map[int]bool{}, keys: map[string]bool{}, shown: map[string]int{},
	}
	// The boundary: S's latest context reset.
	boundary := -1
	for i, e := range tl {
		if e.SessionID == session && e.Type == logformat.TypeContextReset {
			boundary = i
		}
	}
	p.reset = boundary >= 0
	for i, e := range tl {
		si := p.sess[e.SessionID]
		if si == nil {
			si = &sessionInfo{first: e.Timestamp, last: e.Timestamp}
			p.sess[e.SessionID] = si
		}
		si.first, si.last = minTime(si.first, e.Timestamp), maxTime(si.last, e.Timestamp)
		if e.Type != logformat.TypeExchange {
			continue
		}
		window := e.SessionID == session && i > boundary
		if window && !opts.IncludeCurrent {
			p.inCtx++
			continue
		}
		p.byRow[e.Row] = len(p.cands)
		p.cands = append(p.cands, candidate{pos: i, window: window})
		si.total++
	}
	return p
}

// choose fills p.picks.
func (p *plan) choose(ctx context.Context, src Source) error {
	budget := p.opts.Budget
	p.used = p.counter.Count(renderHeader(p.worstHeader()))
	if len(p.cands) == 0 || p.used >= budget {
		return nil
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
		added, err := p.try(ctx, src, ci, room, tail[k:])
		if err != nil {
			return err
		}
		if added != nil {
			tailUsed += added.cost()
		} else if k > 0 {
			break
		}
	}

	// 2. Relevance.
	if strings.TrimSpace(p.opts.Query) != "" && p.remaining() >= p.pol.MinItem {
		rows, err := src.Relevant(ctx, p.opts.Query, p.chain.Sessions, p.pol.RelevantLimit)
		if err != nil {
			return fmt.Errorf("resume: rank exchanges for %q: %w", p.opts.Query, err)
		}
		var ranked []int
		for _, r := range rows {
			if ci, ok := p.byRow[r]; ok {
				ranked = append(ranked, ci)
			}
		}
		// Coverage first: the best RelevantMax exchanges at CoverShare
		// each (the best one at TopShare), so that many are represented;
		// then, best first, each grows up to ItemShare.
		var rel []*pick
		for k, ci := range ranked {
			if len(rel) == p.pol.RelevantMax || p.remaining() < p.pol.MinItem {
				break
			}
			room := share(p.pol.CoverShare)
			if len(rel) == 0 {
				room = share(p.pol.TopShare)
			}
			pk, err := p.try(ctx, src, ci, room, ranked[k:])
			if err != nil {
				return err
			}
			if pk != nil {
				rel = append(rel, pk)
			}
		}
		for _, pk := range rel {
			p.grow(pk, share(p.pol.ItemShare))
		}
	}

	// 3. Recency.
	var recent []int
	for i := len(p.cands) - 1; i >= 0; i-- {
		recent = append(recent, i)
	}
	misses := 0
	for k, ci := range recent {
		if p.remaining() < p.pol.MinItem || misses == maxMisses {
			break
		}
		pk, err := p.try(ctx, src, ci, share(p.pol.ItemShare), recent[k:])
		if err != nil {
			return err
		}
		if pk == nil && !p.picked[ci] {
			misses++
		} else {
			misses = 0
		}
	}
	return nil
}

func (p *plan) remaining() int { return p.opts.Budget - p.used }

// try adds candidate ci with at most room tokens for its block, if it is
// not chosen yet, not a duplicate, and a useful part of it fits. next is
// the list being walked from ci on, to read events in batches.
func (p *plan) try(ctx context.Context, src Source, ci, room int, next []int) (*pick, error) {
	if p.picked[ci] {
		return nil, nil
	}
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
	room = min(room, p.remaining()-extra)
	if room < p.pol.MinItem {
		return nil, nil
	}
	st := stamp(ev.Timestamp, p.sess[ev.SessionID].oneDay())
	render := func(u, a string) string { return renderExchange(st, u, a) }
	cx, ok := p.cut.cut(ev.User, ev.AI, room, render)
	if !ok {
		return nil, nil
	}
	pk := &pick{cand: ci, ev: ev, user: cx.user, ai: cx.ai, truncated: cx.truncated, block: cx.block,
		tokens: cx.tokens, extra: extra}
	p.picks = append(p.picks, pk)
	p.picked[ci] = true
	p.keys[key] = true
	p.shown[ev.SessionID]++
	p.files.add(newFiles, filesCost)
	p.used += pk.cost()
	return pk, nil
}

// grow gives a cut exchange up to room tokens, as the budget allows.
func (p *plan) grow(pk *pick, room int) {
	room = min(room, pk.tokens+p.remaining())
	if !pk.truncated || room <= pk.tokens {
		return
	}
	st := stamp(pk.ev.Timestamp, p.sess[pk.ev.SessionID].oneDay())
	render := func(u, a string) string { return renderExchange(st, u, a) }
	cx, ok := p.cut.cut(pk.ev.User, pk.ev.AI, room, render)
	if !ok || cx.tokens <= pk.tokens {
		return
	}
	p.used += cx.tokens - pk.tokens
	pk.user, pk.ai, pk.truncated, pk.block, pk.tokens = cx.user, cx.ai, cx.truncated, cx.block, cx.tokens
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
	}
}

func (p *plan) sessionsWithCandidates() int {
	n := 0
	for _, si := range p.sess {
		if si.total > 0 {
			n++
		}
	}
	return n
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
		if fs.listed[f] || slices.Contains(out, f) {
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
		SessionID: p.session, Chain: p.chain.Sessions, Budget: p.opts.Budget, Encoding: p.counter.Name(),
		Exchanges: []Exchange{}, Omitted: len(p.cands) - len(picks), InContext: p.inCtx, Files: []string{},
	}
	for _, s := range order {
		si := p.sess[s]
		b.WriteString("\n" + renderSessionHeader(s, si.first, si.last, len(groups[s]), si.total))
		for i, pk := range groups[s] {
			if i > 0 {
				if gap := p.gap(groups[s][i-1], pk); gap != "" {
					b.WriteString("\n" + gap)
				}
			}
			b.WriteString("\n" + pk.block)
			pack.Exchanges = append(pack.Exchanges, Exchange{
				ID: pk.ev.EventID, SessionID: s, Timestamp: pk.ev.Timestamp,
				User: pk.user, AI: pk.ai, Truncated: pk.truncated,
			})
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
	for _, pk := range picks {
		fs.add(p.offerFiles(&fs, pk.ev.Files))
		for i, f := range pk.ev.Files {
			if r, seen := refs[f]; !seen || pk.cand > r.cand {
				refs[f] = ref{pk.cand, i}
			}
		}
	}
	listed := fs.order
	slices.SortStableFunc(listed, func(a, b string) int {
		ra, rb := refs[a], refs[b]
		if c := cmp.Compare(rb.cand, ra.cand); c != 0 {
			return c
		}
		return cmp.Compare(ra.idx, rb.idx)
	})
	return listed, len(refs) - len(listed)
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
