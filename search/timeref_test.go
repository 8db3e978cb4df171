package search

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
)

func TestParseTimeRef(t *testing.T) {
	// A Wednesday afternoon.
	now := time.Date(2026, 4, 15, 15, 30, 0, 0, time.UTC)
	date := func(m time.Month, d, h int) time.Time { return time.Date(2026, m, d, h, 0, 0, 0, time.UTC) }
	tests := []struct {
		text     string
		phrase   string    // "" = no time named
		from, to time.Time // checked when phrase != ""
	}{
		// Loose: two weeks back (April 1), give or take 3 days.
		{text: "What did I say about the concert two weeks ago?", phrase: "two weeks ago", from: date(3, 29, 0), to: date(4, 5, 0)},
		// Calendar days.
		{text: "the bug from 3 days ago", phrase: "3 days ago", from: date(4, 12, 0), to: date(4, 13, 0)},
		{text: "a couple of days ago", phrase: "a couple of days ago", from: date(4, 13, 0), to: date(4, 14, 0)},
		{text: "ten days ago", phrase: "ten days ago", from: date(4, 3, 0), to: date(4, 8, 0)}, // April 5, give or take 2 days
		{text: "A month ago we chose sqlite", phrase: "a month ago", from: date(3, 1, 0), to: date(4, 1, 0)},
		{text: "an hour ago", phrase: "an hour ago", from: now.Add(-90 * time.Minute), to: now.Add(-30 * time.Minute)},
		{text: "Who did I go with to the music event last Saturday?", phrase: "last saturday", from: date(4, 11, 0), to: date(4, 12, 0)},
		{text: "last wednesday's deploy", phrase: "last wednesday", from: date(4, 8, 0), to: date(4, 9, 0)}, // today is a Wednesday: a week back
		{text: "what time did I reach the clinic on Monday?"},                                               // any Monday
		{text: "what broke yesterday", phrase: "yesterday", from: date(4, 14, 0), to: date(4, 15, 0)},
		{text: "yesterday afternoon", phrase: "yesterday afternoon", from: date(4, 14, 12), to: date(4, 14, 18)},
		{text: "the day before yesterday", phrase: "the day before yesterday", from: date(4, 13, 0), to: date(4, 14, 0)},
		{text: "what did we change last night", phrase: "last night", from: date(4, 14, 18), to: date(4, 15, 6)},
		{text: "what did we change today", phrase: "today", from: date(4, 15, 0), to: date(4, 16, 0)},
		{text: "this morning", phrase: "this morning", from: date(4, 15, 0), to: date(4, 15, 12)},
		{text: "this afternoon", phrase: "this afternoon", from: date(4, 15, 12), to: date(4, 15, 18)},
		{text: "tonight", phrase: "tonight", from: date(4, 15, 18), to: date(4, 16, 0)},
		{text: "during the past month", phrase: "past month", from: date(3, 15, 0), to: date(4, 16, 0)},
		{text: "in the last 3 weeks", phrase: "last 3 weeks", from: date(3, 25, 0), to: date(4, 16, 0)},
		{text: "over the past few months", phrase: "past few months", from: date(1, 15, 0), to: date(4, 16, 0)},
		{text: "in the past 2 hours", phrase: "past 2 hours", from: now.Add(-2 * time.Hour), to: now.Add(time.Minute)},
		{text: "what we did last week", phrase: "last week", from: date(4, 6, 0), to: date(4, 13, 0)}, // Monday to Monday
		{text: "last month", phrase: "last month", from: date(3, 1, 0), to: date(4, 1, 0)},
		{text: "last year", phrase: "last year", from: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), to: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{text: "this week", phrase: "this week", from: date(4, 13, 0), to: date(4, 16, 0)},
		{text: "this month's releases", phrase: "this month", from: date(4, 1, 0), to: date(4, 16, 0)},
		{text: "Which did I fix first in February?", phrase: "in february", from: date(2, 1, 0), to: date(3, 1, 0)},
		{text: "the trip in June", phrase: "in june", // June has not begun: last year's
			from: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), to: time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)},
		{text: "In April", phrase: "in april", from: date(4, 1, 0), to: date(5, 1, 0)},
		{text: "everything since February", phrase: "since february", from: date(2, 1, 0), to: date(4, 16, 0)},

		{text: "How many days ago did I launch my website?"},
		{text: "How many weeks ago was the workshop?"},
		{text: "the last time the build failed"},
		{text: "plans for this weekend"},
		{text: "0 days ago"},
		{text: "the past 999 years"}, // beyond maxBackDays
		{text: "100 years ago", phrase: "100 years ago", from: time.Date(1901, 5, 16, 0, 0, 0, 0, time.UTC), to: time.Date(1951, 5, 5, 0, 0, 0, 0, time.UTC)},
		{text: "may I ask about the watcher"},
		{text: "sqlite lock contention"},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			ref, ok := ParseTimeRef(tc.text, now)
			if tc.phrase == "" {
				if ok {
					t.Fatalf("found %+v in a query that names no time", ref)
				}
				return
			}
			if !ok {
				t.Fatalf("no time found, want %q", tc.phrase)
			}
			if ref.Phrase != tc.phrase || !ref.From.Equal(tc.from) || !ref.To.Equal(tc.to) {
				t.Fatalf("got %q %s .. %s, want %q %s .. %s", ref.Phrase, ref.From, ref.To, tc.phrase, tc.from, tc.to)
			}
		})
	}
}

// TestCalendarWords: calendar words name calendar spans in the asker's
// time zone (now's location), whatever the hour they are asked at, across
// daylight-saving changes; "last <weekday>" is never today or later, and
// no span of a past day reaches past the end of today.
func TestCalendarWords(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	day := func(loc *time.Location, y int, m time.Month, d int) time.Time {
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	}
	type span struct{ from, to time.Time }
	tests := []struct {
		name string
		now  time.Time
		text string
		want span
	}{
		// The cases: yesterday is midnight to midnight, local.
		{"yesterday, just after midnight", time.Date(2026, 11, 26, 0, 5, 0, 0, ny), "what did we do yesterday", span{day(ny, 2026, 11, 25), day(ny, 2026, 11, 26)}},
		{"yesterday, late evening", time.Date(2026, 11, 26, 23, 55, 0, 0, ny), "yesterday", span{day(ny, 2026, 11, 25), day(ny, 2026, 11, 26)}},
		{"yesterday in UTC+1", time.Date(2026, 11, 26, 0, 30, 0, 0, paris), "yesterday", span{day(paris, 2026, 11, 25), day(paris, 2026, 11, 26)}},
		// Thursday 2026-11-26: last Wednesday is the day before, never tomorrow.
		{"last wednesday on a Thursday", time.Date(2026, 11, 26, 10, 0, 0, 0, ny), "last wednesday", span{day(ny, 2026, 11, 25), day(ny, 2026, 11, 26)}},
		{"last tuesday on a Thursday", time.Date(2026, 11, 26, 10, 0, 0, 0, ny), "last tuesday", span{day(ny, 2026, 11, 24), day(ny, 2026, 11, 25)}},
		{"last thursday on a Thursday", time.Date(2026, 11, 26, 10, 0, 0, 0, ny), "last thursday", span{day(ny, 2026, 11, 19), day(ny, 2026, 11, 20)}},
		{"last friday on a Thursday", time.Date(2026, 11, 26, 10, 0, 0, 0, ny), "last friday", span{day(ny, 2026, 11, 20), day(ny, 2026, 11, 21)}},
		{"3 days ago", time.Date(2026, 11, 26, 10, 0, 0, 0, ny), "what did we work on 3 days ago", span{day(ny, 2026, 11, 23), day(ny, 2026, 11, 24)}},
		{"this morning", time.Date(2026, 11, 26, 10, 0, 0, 0, ny), "this morning", span{day(ny, 2026, 11, 26), time.Date(2026, 11, 26, 12, 0, 0, 0, ny)}},
		// DST ends in New York on 2026-11-01 (a 25-hour day), begins on
		// 2026-03-08 (23 hours); Paris on 2026-03-29 and 2026-10-25.
		{"yesterday over the fall-back day", time.Date(2026, 11, 2, 9, 0, 0, 0, ny), "yesterday", span{day(ny, 2026, 11, 1), day(ny, 2026, 11, 2)}},
		{"yesterday over the spring-forward day", time.Date(2026, 3, 9, 0, 30, 0, 0, ny), "yesterday", span{day(ny, 2026, 3, 8), day(ny, 2026, 3, 9)}},
		{"the day before yesterday across DST", time.Date(2026, 3, 30, 8, 0, 0, 0, paris), "the day before yesterday", span{day(paris, 2026, 3, 28), day(paris, 2026, 3, 29)}},
		{"last sunday was the change", time.Date(2026, 10, 27, 8, 0, 0, 0, paris), "last sunday", span{day(paris, 2026, 10, 25), day(paris, 2026, 10, 26)}},
		{"last week across DST", time.Date(2026, 11, 4, 8, 0, 0, 0, ny), "last week", span{day(ny, 2026, 10, 26), day(ny, 2026, 11, 2)}},
		{"today on the fall-back day", time.Date(2026, 11, 1, 23, 30, 0, 0, ny), "today", span{day(ny, 2026, 11, 1), day(ny, 2026, 11, 2)}},
		{"a week ago, loosely", time.Date(2026, 11, 26, 10, 0, 0, 0, ny), "a week ago", span{day(ny, 2026, 11, 16), day(ny, 2026, 11, 23)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, ok := ParseTimeRef(tc.text, tc.now)
			if !ok {
				t.Fatalf("%q at %s: no time found", tc.text, tc.now)
			}
			if !ref.From.Equal(tc.want.from) || !ref.To.Equal(tc.want.to) {
				t.Fatalf("%q at %s: %s .. %s, want %s .. %s", tc.text, tc.now, ref.From, ref.To, tc.want.from, tc.want.to)
			}
		})
	}
	// Every weekday asked on every day of a fortnight, at every hour: the
	// day named is before today, within the week before, and a whole day.
	for _, loc := range []*time.Location{time.UTC, ny, paris} {
		for d := 0; d < 14*24; d++ {
			now := time.Date(2026, 10, 20, 0, 30, 0, 0, loc).Add(time.Duration(d) * time.Hour)
			today := startOfDay(now)
			for name, wd := range weekdays {
				ref, ok := ParseTimeRef("last "+name, now)
				if !ok || ref.From.Weekday() != wd || !ref.From.Before(today) || ref.From.Before(today.AddDate(0, 0, -7)) ||
					!ref.To.Equal(startOfDay(ref.From.Add(36*time.Hour))) || ref.From.Hour() != 0 {
					t.Fatalf("last %s at %s: %+v", name, now, ref)
				}
			}
			for _, w := range []string{"yesterday", "the day before yesterday", "last night", "2 days ago", "last week", "last month"} {
				ref, ok := ParseTimeRef(w, now)
				if !ok || ref.To.After(today.AddDate(0, 0, 1).Add(6*time.Hour)) || ref.From.After(today) {
					t.Fatalf("%s at %s: %+v reaches past today", w, now, ref)
				}
			}
		}
	}
}

// TestTimeOnly: a query that names a time and nothing else (filler and
// words of activity aside) is a time-only query; one with a subject is not.
func TestTimeOnly(t *testing.T) {
	s := &Searcher{opts: DefaultOptions}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"what did we do yesterday", true},
		{"What did we work on 3 days ago?", true},
		{"yesterday", true},
		{"this morning", true},
		{"what happened last wednesday", true},
		{"anything from last week?", true},
		{"what did we discuss earlier today", true},
		{"what were we doing this afternoon", true},
		{"the sqlite lock yesterday", false},
		{"what did we decide about the cache last week", false},
		{"deploy yesterday", false},
		{"what did we do", false}, // no time
	} {
		_, got := s.TimeOnly(Query{Text: tc.text, Now: now})
		if got != tc.want {
			t.Errorf("TimeOnly(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestSearchTimeAnchoring: a query that names a time ranks the exchanges
// of that span higher in hybrid mode, and only there.
func TestSearchTimeAnchoring(t *testing.T) {
	now := time.Date(2026, 4, 15, 12, 0, 0, 0, time.UTC)
	f := newFixture(t)
	f.commit(
		exchange("old", "s1", now.Add(-40*day), "The concert with my sister was loud, what a concert, best concert of the year", "Glad you liked the concert."),
		exchange("then", "s2", now.Add(-15*day), "We went to a concert downtown", "Sounds fun."),
		exchange("other", "s3", now.Add(-14*day), "How do I fix the sqlite lock?", "Use a busy timeout."),
	)
	e := builtin(t, 0)
	w := drain(t, f.db, e)
	anchored := searcher(t, f.db, e, w)
	plain, err := New(Config{DB: f.db, Embedder: e, Vectors: w.Space, Options: Options{TimeWeight: -1, MinScore: -1}})
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingEmbedder{Embedder: e}
	counted, err := New(Config{DB: f.db, Embedder: counting, Vectors: w.Space, Options: noFloor})
	if err != nil {
		t.Fatal(err)
	}
	const text = "the concert two weeks ago"
	tests := []struct {
		name  string
		s     *Searcher
		q     Query
		first string
		span  bool
	}{
		{"hybrid, anchored", anchored, Query{Text: text, Now: now}, "then", true},
		{"query embedded once", counted, Query{Text: text, Now: now}, "then", true},
		{"anchoring off", plain, Query{Text: text, Now: now}, "old", false},
		{"bm25 is plain", anchored, Query{Text: text, Now: now, Mode: ModeLexical}, "old", false},
		{"no time named", anchored, Query{Text: "the concert", Now: now}, "old", false},
		{"since and until are the user's bounds", anchored, Query{Text: text, Now: now, Since: now.Add(-60 * day)}, "old", false},
		{"read as of another time", anchored, Query{Text: text, Now: now.Add(26 * day)}, "old", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.s.Search(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) < 2 || res[0].ID != tc.first {
				t.Fatalf("got %v, want %s first", ids(res), tc.first)
			}
			if _, span := tc.s.TimeSpan(tc.q); span != tc.span {
				t.Errorf("TimeSpan found %v, want %v", span, tc.span)
			}
		})
	}
	// A remote embedder is asked once per search, in-span list or not.
	if counting.calls.Load() != 1 {
		t.Errorf("the query was embedded %d times, want 1", counting.calls.Load())
	}
}

// countingEmbedder counts Embed calls.
type countingEmbedder struct {
	embed.Embedder
	calls atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	return c.Embedder.Embed(ctx, texts)
}

// FuzzParseTimeRef: any text, any time, any time zone: no panic, and a
// span found is a non-empty interval named by words of the text that ends
// by the end of today (no phrase names the future).
//
//	go test -tags sqlite_fts5 -fuzz=FuzzParseTimeRef ./search/
func FuzzParseTimeRef(f *testing.F) {
	for _, s := range []string{"two weeks ago", "last Saturday", "İstanbul in March", "the past 999 years", "a couple of days ago", "yesterday\x00today",
		"what did we do yesterday", "last wednesday", "this morning", "last night", "3 hours ago", "tonight", "the past 2 hours", "last week"} {
		f.Add(s, int64(1776254400), int32(-5*3600))
	}
	f.Fuzz(func(t *testing.T, text string, unix int64, offset int32) {
		loc := time.FixedZone("", int(offset%(15*3600)))
		now := time.Unix(unix%(1<<40), 0).In(loc)
		ref, ok := ParseTimeRef(text, now)
		if !ok {
			return
		}
		if !ref.From.Before(ref.To) {
			t.Fatalf("%q at %s: empty span %s .. %s", text, now, ref.From, ref.To)
		}
		if ref.Phrase == "" || !strings.Contains(strings.ToLower(text), ref.Phrase) {
			t.Fatalf("%q: phrase %q is not in the text", text, ref.Phrase)
		}
		if end := startOfDay(now).AddDate(0, 0, 1).Add(time.Minute); ref.To.After(end) {
			t.Fatalf("%q at %s: the span %s .. %s reaches past the end of today", text, now, ref.From, ref.To)
		}
	})
}
