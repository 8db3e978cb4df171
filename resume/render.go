package resume

// Presentation of a pack: markdown, chronological, one group per session.
//
//	# Resume context for session S (times UTC)
//	Chain, newest first: S ← A ← B
//	Shown: 5 of 120 earlier exchanges, from 2 of 3 sessions; 4 exchanges of this session since its latest context reset are still in context and not shown.
//
//	## Session A · 2024-05-01 10:00–11:30 · 3 of 40 exchanges
//
//	[10:02]
//	User: ...
//	AI: ... [… 1,234 characters cut] ...
//
//	[… 5 exchanges omitted, 1 context reset …]
//
//	[10:40]
//	...
//
//	## Files referenced
//	- main.go
//
// Every part of the text counts against the budget; select.go reserves room
// for the parts whose size depends on the final selection (counts, notes).

import (
	"fmt"
	"strings"
	"time"

	"github.com/praxis-os/continuity/internal/words"
)

const (
	timeFormat = "2006-01-02 15:04"
	// worstCount stands for any count when reserving room for a line
	// whose numbers are not known yet.
	worstCount = 9999999
)

// renderExchange is one exchange's block: its time (stamp), then the user's
// and the AI's text (a side that is empty is left out). A text that opens
// with a code fence starts on the line after its label, where markdown
// sees the fence.
func renderExchange(stamp, user, ai string) string {
	var b strings.Builder
	b.WriteString("[" + stamp + "]\n")
	side := func(label, text string) {
		if text == "" {
			return
		}
		sep := " "
		if _, ok := fenceOpener(text[:max(0, strings.IndexByte(text+"\n", '\n'))]); ok {
			sep = "\n"
		}
		b.WriteString(label + ":" + sep + text + "\n")
	}
	side("User", user)
	side("AI", ai)
	return b.String()
}

// headerInfo is what the pack's opening lines say.
type headerInfo struct {
	session        string
	chain          Chain
	chainLine      string // precomputed: it may be shortened to fit
	shown, total   int    // exchanges shown, candidate exchanges
	sessionsShown  int
	sessionsTotal  int
	inWindow       int
	includeCurrent bool
	hasReset       bool   // S has a context reset
	gone           string // why S's own exchanges are offered (Pack.AgentGone)
	instead        string // the latest session, which had nothing to resume (Pack.Instead)
}

func (h headerInfo) sinceReset() string {
	if h.hasReset {
		return "since its latest context reset"
	}
	return "(it has no context reset)"
}

func renderHeader(h headerInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Resume context for session %s (times UTC)\n", h.session)
	if h.instead != "" {
		fmt.Fprintf(&b, "The latest session, %s, has nothing to resume yet: this is the latest session that has.\n", h.instead)
	}
	b.WriteString(h.chainLine)
	switch {
	case h.total == 0:
		b.WriteString("Nothing to resume: ")
		if len(h.chain.Sessions) == 1 {
			b.WriteString("the session resumes no other session")
		} else {
			b.WriteString("the sessions it resumes hold no exchanges")
		}
		if h.inWindow > 0 {
			fmt.Fprintf(&b, "; its own %s %s %s still in context", words.Count(h.inWindow, "exchange"), h.sinceReset(), isAre(h.inWindow))
		}
		b.WriteString(".\n")
	default:
		fmt.Fprintf(&b, "Shown: %d of %s, from %d of %s",
			h.shown, words.Count(h.total, "earlier exchange"), h.sessionsShown, words.Count(h.sessionsTotal, "session"))
		if h.inWindow > 0 {
			fmt.Fprintf(&b, "; %s of this session %s %s still in context and not shown",
				words.Count(h.inWindow, "exchange"), h.sinceReset(), isAre(h.inWindow))
		}
		b.WriteString(".\n")
	}
	if h.gone != "" {
		fmt.Fprintf(&b, "Session %s's own exchanges are included: %s, so no agent holds them in context.\n", h.session, h.gone)
	}
	return b.String()
}

// chainLine lists the chain newest first, shortened to "S ← A ← … ← Z (n
// sessions)" when the full list would take more than maxTokens.
func chainLine(c Chain, counter *Counter, maxTokens int) string {
	var notes []string
	if c.Cycle {
		notes = append(notes, "a cycle of links was cut")
	}
	if c.Capped {
		notes = append(notes, "older links beyond the depth cap left out")
	}
	suffix := "\n"
	if len(notes) > 0 {
		suffix = " (" + strings.Join(notes, "; ") + ")\n"
	}
	full := "Chain, newest first: " + strings.Join(c.Sessions, " ← ") + suffix
	if len(c.Sessions) <= 2 || counter.Count(full) <= maxTokens {
		return full
	}
	n := len(c.Sessions)
	short := fmt.Sprintf("Chain, newest first: %s ← %s ← … ← %s (%d sessions)%s",
		c.Sessions[0], c.Sessions[1], c.Sessions[n-1], n, suffix)
	if counter.Count(short) <= maxTokens {
		return short
	}
	return fmt.Sprintf("Chain: %d sessions%s", n, suffix)
}

// stamp is an exchange's time as shown: the time of day when its session
// lies within one day (the session's header gives the date), else date
// and time.
func stamp(ts time.Time, oneDay bool) string {
	if oneDay {
		return ts.UTC().Format("15:04")
	}
	return ts.UTC().Format(timeFormat)
}

// sameDay reports whether two times fall on the same UTC day.
func sameDay(a, b time.Time) bool {
	ya, ma, da := a.UTC().Date()
	yb, mb, db := b.UTC().Date()
	return ya == yb && ma == mb && da == db
}

// renderSessionHeader opens a session's group: its id, its time span and
// how many of its exchanges are shown.
func renderSessionHeader(id string, first, last time.Time, shown, total int) string {
	span := first.UTC().Format(timeFormat)
	switch {
	case last.UTC().Truncate(time.Minute).Equal(first.UTC().Truncate(time.Minute)):
	case sameDay(first, last):
		span += "–" + last.UTC().Format("15:04")
	default:
		span += " → " + last.UTC().Format(timeFormat)
	}
	return fmt.Sprintf("## Session %s · %s · %d of %s\n", id, span, shown, words.Count(total, "exchange"))
}

// renderGap is the note between two shown exchanges of a session.
func renderGap(omitted, resets int) string {
	var parts []string
	if omitted > 0 {
		parts = append(parts, words.Count(omitted, "exchange")+" omitted")
	}
	if resets > 0 {
		parts = append(parts, words.Count(resets, "context reset"))
	}
	if omitted == 0 {
		return "[" + strings.Join(parts, ", ") + "]\n"
	}
	return "[… " + strings.Join(parts, ", ") + " …]\n"
}

const filesHeading = "## Files referenced\n"

func renderFileLine(path string) string { return "- " + path + "\n" }

func renderMoreFiles(n int) string { return fmt.Sprintf("- (and %d more)\n", n) }

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
