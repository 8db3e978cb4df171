package resume

// Explanation: why each exchange of the chain is in a pack, cut, or left
// out (`resume --explain`, the viewer's resume preview).
//
// The selection (select.go) records only what it cannot tell afterwards:
// how many picks each of its steps had made (plan.mark), and which
// candidates it tried (plan.seen). Everything else is read from the plan
// once the pack is rendered, and only when asked (Options.Explain): a pack
// without it costs nothing more.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/praxis-os/continuity/logformat"
)

// The reasons of a Decision.
const (
	// In the pack.
	ReasonRecent   = "recent"   // the tail before the boundary, or the recency fill
	ReasonRelevant = "relevant" // chosen for the query
	ReasonChain    = "chain"    // every exchange of the chain fits whole
	// Left out.
	ReasonDuplicate  = "duplicate"   // its texts are those of an exchange shown
	ReasonNoRoom     = "no_room"     // tried, and no useful part of it fitted
	ReasonNotReached = "not_reached" // the budget was spent before it was looked at
	ReasonDropped    = "dropped"     // chosen, then dropped when the text was counted exactly
	ReasonInContext  = "in_context"  // after the boundary: still in the agent's window
)

// ExplainListMax is how many exchanges not reached, and how many still in
// context, an Explanation lists by name (newest first); the rest are
// counted.
const ExplainListMax = 100

// Explanation says why each exchange of the chain is in the pack or not.
type Explanation struct {
	// Decisions are chronological (by timestamp, then order of indexing):
	// every exchange in the pack, every one tried or left out as a
	// duplicate, and up to ExplainListMax of those not reached and of
	// those still in context.
	Decisions []Decision `json:"decisions"`
	// Counts are the chain's exchanges by reason, all of them (listed or
	// not).
	Counts map[string]int `json:"counts"`
	// Truncated counts the exchanges in the pack that were cut.
	Truncated int `json:"truncated"`
	// Unlisted counts the exchanges not reached or in context that
	// Decisions does not list.
	Unlisted int `json:"unlisted"`
	// Free is the budget's tokens the pack left unused.
	Free int `json:"free"`
}

// Decision is what the pack did with one exchange, and why.
type Decision struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	Timestamp time.Time `json:"timestamp"`
	// Depth is how many session_resume links its session is from S (0:
	// S itself).
	Depth    int    `json:"depth"`
	Included bool   `json:"included"`
	Reason   string `json:"reason"`
	// Rank is its place in the query's ranking (1: best) when the
	// selection walked that far; 0 otherwise.
	Rank      int  `json:"rank,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
	// Tokens is what its block takes in the pack; Whole what it takes
	// shown whole (counted for those in the pack and those tried).
	Tokens int `json:"tokens,omitempty"`
	Whole  int `json:"whole,omitempty"`
	// DuplicateOf is the id of the exchange shown with the same texts.
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// Why says it in a sentence.
	Why string `json:"why"`
	// Preview is the opening of the user's text (else the answer's).
	Preview string `json:"preview"`
}

// explainer is what the selection records for an Explanation.
type explainer struct {
	marks []int        // len(plan.picks) after the tail, after the relevance step
	tried map[int]bool // candidates try looked at
}

// mark records that a step of the selection is over.
func (p *plan) mark() {
	if p.x != nil {
		p.x.marks = append(p.x.marks, len(p.picks))
	}
}

// seen records that try looked at candidate ci.
func (p *plan) seen(ci int) {
	if p.x != nil {
		p.x.tried[ci] = true
	}
}

// previewRunes is how much of an exchange a Decision's Preview shows.
const previewRunes = 100

// explain says why each exchange is in pack or not.
func (p *plan) explain(ctx context.Context, src Source, pack *Pack) (*Explanation, error) {
	x := &Explanation{Counts: map[string]int{}, Free: max(0, p.opts.Budget-pack.Tokens)}
	depth := map[string]int{}
	for i, s := range p.chain.Sessions {
		if i < len(p.chain.Depth) {
			depth[s] = p.chain.Depth[i]
		}
	}
	final := map[string]Exchange{}
	for _, e := range pack.Exchanges {
		final[e.ID] = e
	}
	shownKey := map[string]string{} // texts -> id of the exchange shown with them
	for _, pk := range p.picks {
		if _, ok := final[pk.ev.EventID]; ok {
			shownKey[pk.ev.User+"\x00"+pk.ev.AI] = pk.ev.EventID
		}
	}
	var ds []Decision
	listed := map[int]bool{}
	for k, pk := range p.picks {
		listed[pk.cand] = true
		ds = append(ds, p.explainPick(k, pk, final))
	}
	// Tried, or read and a duplicate, yet not chosen.
	var rest []int
	for ci := range p.cands {
		if !listed[ci] {
			rest = append(rest, ci)
		}
	}
	var unread []int64
	notReached := 0
	for k := len(rest) - 1; k >= 0; k-- {
		ci := rest[k]
		ev, read := p.events[p.tl[p.cands[ci].pos].Row]
		dup := read && shownKey[ev.User+"\x00"+ev.AI] != ""
		if p.x.tried[ci] || dup {
			continue
		}
		if notReached < ExplainListMax {
			listed[ci] = true
			if !read {
				unread = append(unread, p.tl[p.cands[ci].pos].Row)
			}
		}
		notReached++
	}
	if err := p.readForExplain(ctx, src, unread); err != nil {
		return nil, err
	}
	for _, ci := range rest {
		d, ok := p.explainLeftOut(ci, listed[ci], shownKey)
		if !ok {
			continue
		}
		x.Counts[d.Reason]++
		if d.ID != "" {
			ds = append(ds, d)
		}
	}
	inCtx, err := p.explainInContext(ctx, src)
	if err != nil {
		return nil, err
	}
	ds = append(ds, inCtx...)
	if p.inCtx > 0 {
		x.Counts[ReasonInContext] += p.inCtx
	}
	for i := range ds {
		ds[i].Depth = depth[ds[i].SessionID]
		if ds[i].Included {
			x.Counts[ds[i].Reason]++
			if ds[i].Truncated {
				x.Truncated++
			}
		} else if ds[i].Reason == ReasonDropped {
			x.Counts[ReasonDropped]++
		}
	}
	x.Unlisted = x.Counts[ReasonNotReached] + x.Counts[ReasonInContext] - countReasons(ds, ReasonNotReached, ReasonInContext)
	slices.SortStableFunc(ds, func(a, b Decision) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	x.Decisions = ds
	if x.Decisions == nil {
		x.Decisions = []Decision{}
	}
	return x, nil
}

func countReasons(ds []Decision, reasons ...string) int {
	n := 0
	for _, d := range ds {
		if slices.Contains(reasons, d.Reason) {
			n++
		}
	}
	return n
}

// readForExplain reads the events of rows the selection did not read.
func (p *plan) readForExplain(ctx context.Context, src Source, rows []int64) error {
	for len(rows) > 0 {
		n := min(len(rows), 256)
		evs, err := src.Events(ctx, rows[:n])
		if err != nil {
			return fmt.Errorf("resume: explain: read exchanges: %w", err)
		}
		for _, ev := range evs {
			p.events[ev.ID] = ev
		}
		rows = rows[n:]
	}
	return nil
}

// explainPick explains the k-th pick: in the pack (maybe cut), or dropped
// at the exact count.
func (p *plan) explainPick(k int, pk *pick, final map[string]Exchange) Decision {
	d := p.decision(pk.ev.EventID, pk.ev.SessionID, pk.ev.Timestamp, pk.ev.User, pk.ev.AI)
	d.Rank = max(0, p.rank[pk.cand])
	x := p.ref(pk.cand, pk.ev.User, pk.ev.AI)
	d.Whole = p.cut.full(p.cut.analyse(x, false))
	e, in := final[pk.ev.EventID]
	if !in {
		d.Reason = ReasonDropped
		d.Why = "chosen, then dropped: the rendered pack, counted exactly, was over the budget"
		return d
	}
	d.Included = true
	d.Truncated = e.Truncated
	d.Tokens = p.counter.Count(x.render(e.User, e.AI))
	d.Reason, d.Why = p.stageOf(k, pk)
	if p.cands[pk.cand].window {
		if p.reset {
			d.Why += "; it is after the session's latest context reset, included as asked (--include-current, or --latest)"
		} else {
			d.Why += "; it is of the session itself (which has no context reset), included as asked (--include-current, or --latest)"
		}
	}
	if e.Truncated {
		d.Why += fmt.Sprintf("; cut to %d of its %d tokens", d.Tokens, d.Whole)
		if strings.TrimSpace(p.opts.Query) != "" {
			d.Why += " (the parts sharing the most query terms kept)"
		}
	}
	return d
}

// stageOf names the step of the selection that chose the k-th pick.
func (p *plan) stageOf(k int, pk *pick) (reason, why string) {
	marks := p.x.marks
	rank := p.rank[pk.cand]
	switch {
	case len(marks) == 0:
		return ReasonChain, "every exchange of the chain fits the budget whole"
	case k < marks[0]:
		if k == 0 {
			return ReasonRecent, "the last exchange before the boundary: what the agent was doing when it lost its context"
		}
		return ReasonRecent, "just before the boundary: the tail of what the agent was doing"
	case len(marks) > 1 && k < marks[1]:
		return ReasonRelevant, fmt.Sprintf("ranked %d for the query among the chain's exchanges", rank)
	}
	why = "among the most recent, chosen newest first with the room left"
	if rank > 0 {
		why += fmt.Sprintf(" (it also ranks %d for the query)", rank)
	}
	return ReasonRecent, why
}

// explainLeftOut explains candidate ci, not in the pack; ok is false for
// one not worth a line (not reached and beyond the listed ones: counted
// by the caller through its Reason, with no ID).
func (p *plan) explainLeftOut(ci int, list bool, shownKey map[string]string) (Decision, bool) {
	ev, read := p.events[p.tl[p.cands[ci].pos].Row]
	if read {
		if id := shownKey[ev.User+"\x00"+ev.AI]; id != "" {
			d := p.decision(ev.EventID, ev.SessionID, ev.Timestamp, ev.User, ev.AI)
			d.Reason, d.DuplicateOf = ReasonDuplicate, id
			d.Why = "its texts are those of " + id + ", shown once"
			return d, true
		}
	}
	if p.x.tried[ci] && read {
		d := p.decision(ev.EventID, ev.SessionID, ev.Timestamp, ev.User, ev.AI)
		d.Reason = ReasonNoRoom
		d.Whole = p.cut.full(p.cut.analyse(p.ref(ci, ev.User, ev.AI), false))
		d.Rank = max(0, p.rank[ci])
		d.Why = fmt.Sprintf("it takes %d tokens whole, and no useful part of it fitted the room left", d.Whole)
		if d.Rank > 0 {
			d.Why += fmt.Sprintf(" (it ranks %d for the query)", d.Rank)
		}
		return d, true
	}
	if !list || !read {
		return Decision{Reason: ReasonNotReached}, true
	}
	d := p.decision(ev.EventID, ev.SessionID, ev.Timestamp, ev.User, ev.AI)
	d.Reason = ReasonNotReached
	d.Rank = max(0, p.rank[ci])
	d.Why = "the budget was spent on newer or more relevant exchanges before this one was looked at"
	return d, true
}

// explainInContext lists (up to ExplainListMax, newest first) the
// exchanges after the boundary that were left out as still in the
// agent's window.
func (p *plan) explainInContext(ctx context.Context, src Source) ([]Decision, error) {
	if p.inCtx == 0 {
		return nil, nil
	}
	var rows []int64
	for i := len(p.tl) - 1; i >= 0 && len(rows) < ExplainListMax; i-- {
		e := p.tl[i]
		if e.Type != logformat.TypeExchange || e.SessionID != p.session {
			continue
		}
		if _, cand := p.byRow[e.Row]; cand {
			break // before the boundary: candidates from here on
		}
		rows = append(rows, e.Row)
	}
	var missing []int64
	for _, r := range rows {
		if _, ok := p.events[r]; !ok {
			missing = append(missing, r)
		}
	}
	if err := p.readForExplain(ctx, src, missing); err != nil {
		return nil, err
	}
	var ds []Decision
	why := "after the session's latest context reset: still in the agent's window (--include-current offers it)"
	if !p.reset {
		why = "of the session itself, which has no context reset: still in the agent's window (--include-current offers it)"
	}
	for _, r := range rows {
		ev, ok := p.events[r]
		if !ok {
			continue
		}
		d := p.decision(ev.EventID, ev.SessionID, ev.Timestamp, ev.User, ev.AI)
		d.Reason, d.Why = ReasonInContext, why
		ds = append(ds, d)
	}
	return ds, nil
}

// ref is candidate ci's exchange as the selection measures it.
func (p *plan) ref(ci int, user, ai string) exRef {
	e := p.tl[p.cands[ci].pos]
	return exRef{row: e.Row, stamp: stamp(e.Timestamp, p.sess[e.SessionID].oneDay()), user: user, ai: ai}
}

func (p *plan) decision(id, session string, ts time.Time, user, ai string) Decision {
	text := user
	if strings.TrimSpace(text) == "" {
		text = ai
	}
	return Decision{ID: id, SessionID: session, Timestamp: ts, Preview: preview(text, previewRunes)}
}

// preview is the opening of text on one line, at most n runes.
func preview(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	return text[:i] + "…"
}
