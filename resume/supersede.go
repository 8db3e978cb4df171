package resume

import (
	"fmt"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/search"
)

// Supersession in a pack: when two shown exchanges ask the same question
// and the later one answers it differently (search.Supersedes: the rule
// search ranks by), the pack says so under each, so that an agent does not
// act on the earlier answer:
//
//	[superseded by the answer of 2026-11-19 15:00, below]
//	[supersedes the answer of 2026-01-12 10:00, above]
//
// The notes count against the budget like any text (pack drops or cuts
// the last chosen exchange while the pack is over).

// supersessions finds, among picks (in chronological order), which
// supersedes which: by pick, the newest pick superseding it, and the
// picks it supersedes.
func supersessions(picks []*pick) (by map[*pick]*pick, of map[*pick][]*pick) {
	if len(picks) < 2 {
		return nil, nil
	}
	terms := make([]map[string]bool, len(picks))
	for i, pk := range picks {
		terms[i] = search.QuestionTerms(pk.ev.User)
	}
	for i, a := range picks {
		for j, b := range picks {
			if i == j || !search.Supersedes(a.ev, b.ev, terms[i], terms[j]) {
				continue
			}
			if by == nil {
				by, of = map[*pick]*pick{}, map[*pick][]*pick{}
			}
			if cur := by[b]; cur == nil || later(a.ev, cur.ev) {
				by[b] = a
			}
			of[a] = append(of[a], b)
		}
	}
	return by, of
}

// later reports whether a comes after b (timestamp, then row).
func later(a, b index.Event) bool {
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.After(b.Timestamp)
	}
	return a.Row > b.Row
}

// supersessionNote is the line under a shown exchange that a later one
// supersedes ("below"), or that supersedes earlier ones ("above").
func supersessionNote(by *pick, of []*pick) string {
	note := ""
	if by != nil {
		note += "[superseded by the answer of " + by.ev.Timestamp.UTC().Format(timeFormat) + ", below]\n"
	}
	switch len(of) {
	case 0:
	case 1:
		note += "[supersedes the answer of " + of[0].ev.Timestamp.UTC().Format(timeFormat) + ", above]\n"
	default:
		latest := of[0]
		for _, o := range of[1:] {
			if later(o.ev, latest.ev) {
				latest = o
			}
		}
		note += fmt.Sprintf("[supersedes %d earlier answers above, the latest of %s]\n", len(of), latest.ev.Timestamp.UTC().Format(timeFormat))
	}
	return note
}
