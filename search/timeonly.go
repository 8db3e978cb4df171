package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/praxis-os/continuity/internal/lazyre"
	"github.com/praxis-os/continuity/logformat"
)

// A query about nothing but a time ("what did we do yesterday", "what did
// we work on 3 days ago", "this morning", "last wednesday") asks for the
// exchanges of that span: it gets them, newest first, whatever their
// words, and whatever the floor (each scores 1: it is all the query asks).
// A query that names a subject too ("the sqlite lock yesterday") is ranked
// as any other, the span's exchanges higher (TimeSpan).

// activityWords say that something happened without saying what: with
// stopwords, filler (fillerWords) and a time phrase, a query made of them
// only is about the time only.
var activityWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`do did done doing does work worked working works happen happened happening
		go going went gone get got getting talk talked talking discuss discussing chat chats chatted
		cover covered look looked change changed changes fix fixed decide decided build built make made
		ship shipped accomplish accomplished finish finished achieve achieved handle handled
		anything everything something stuff thing things summary summarize summarise recap list show
		exchange exchanges conversations sessions session log logged ask asked asking
		s whats hey please again exactly all about up on`) {
		m[w] = true
	}
	return m
})

// TimeOnly returns the span a query names when the query names nothing
// else (see above), in any mode, within its own Since and Until when it
// has them; ok is false when it is not a time-only query.
func (s *Searcher) TimeOnly(q Query) (TimeRef, bool) {
	if s.opts.TimeWeight < 0 {
		return TimeRef{}, false
	}
	q = ReadTime(q)
	if !q.text.timeOnly() {
		return TimeRef{}, false
	}
	ref := q.Named.Ref
	if !q.Named.OK {
		ref = *q.Named.Weekday
	}
	if !q.Since.IsZero() && q.Since.After(ref.From) {
		ref.From = q.Since
	}
	if !q.Until.IsZero() && q.Until.Before(ref.To) {
		ref.To = q.Until
	}
	return ref, true
}

// onWeekdayRE finds a weekday named alone ("on saturday", "saturday").
var onWeekdayRE = lazyre.New(`\b(on )?` + weekdayRE + `\b`)

// SpanExchanges returns, for a query about nothing but a time (TimeOnly),
// how many exchanges its span holds under q's other constraints
// (sessions, chain, types): its results list the newest of them, at most
// q.Limit, so a caller can say "10 of 22". ok is false for other queries.
func (s *Searcher) SpanExchanges(ctx context.Context, q Query) (n int64, ok bool, err error) {
	ref, ok := s.TimeOnly(q)
	if !ok {
		return 0, false, nil
	}
	if len(q.Types) > 0 && !slices.Contains(q.Types, logformat.TypeExchange) {
		return 0, true, nil
	}
	f, none, err := s.filter(ctx, q)
	if err != nil || none || !ref.From.Before(ref.To) {
		return 0, true, err
	}
	f.Since, f.Until = ref.From, ref.To
	n, err = s.db.CountExchanges(ctx, f)
	if err != nil {
		return 0, true, fmt.Errorf("search: exchanges from %s to %s: %w", ref.From, ref.To, err)
	}
	return n, true, nil
}
