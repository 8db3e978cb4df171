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
		{text: "What did I say about the concert two weeks ago?", phrase: "two weeks ago",
			from: now.Add(-14*day - 3*day - 12*time.Hour), to: now.Add(-14*day + 3*day + 12*time.Hour + day)},
		{text: "the bug from 3 days ago", phrase: "3 days ago",
			from: now.Add(-4 * day), to: now.Add(-day)},
		{text: "A month ago we chose sqlite", phrase: "a month ago",
			from: now.Add(-30*day - 15*day), to: now.Add(-30*day + 16*day)},
		{text: "a couple of days ago", phrase: "a couple of days ago",
			from: now.Add(-3 * day), to: now},
		{text: "Who did I go with to the music event last Saturday?", phrase: "last saturday",
			from: date(4, 10, 0), to: date(4, 14, 0)},
		{text: "last wednesday's deploy", phrase: "last wednesday", // today is a Wednesday: a week back
			from: date(4, 7, 0), to: date(4, 11, 0)},
		{text: "what broke yesterday", phrase: "yesterday",
			from: date(4, 13, 12), to: date(4, 15, 12)},
		{text: "the day before yesterday", phrase: "the day before yesterday",
			from: date(4, 12, 12), to: date(4, 14, 12)},
		{text: "what did we change today", phrase: "today", from: now.Add(-day), to: now.Add(day)},
		{text: "during the past month", phrase: "past month", from: now.Add(-30 * day), to: now.Add(day)},
		{text: "in the last 3 weeks", phrase: "last 3 weeks", from: now.Add(-21 * day), to: now.Add(day)},
		{text: "over the past few months", phrase: "past few months", from: now.Add(-90 * day), to: now.Add(day)},
		{text: "what we did last week", phrase: "last week", from: now.Add(-14 * day), to: now.Add(day)},
		{text: "this month's releases", phrase: "this month", from: now.Add(-30 * day), to: now.Add(day)},
		{text: "Which did I fix first in February?", phrase: "in february",
			from: date(1, 29, 0), to: date(3, 4, 0)},
		{text: "the trip in June", phrase: "in june", // June has not begun: last year's
			from: time.Date(2025, 5, 29, 0, 0, 0, 0, time.UTC), to: time.Date(2025, 7, 4, 0, 0, 0, 0, time.UTC)},
		{text: "In April", phrase: "in april", from: date(3, 29, 0), to: date(5, 4, 0)},
		{text: "everything since February", phrase: "since february", from: date(1, 29, 0), to: now.Add(day)},

		{text: "How many days ago did I launch my website?"},
		{text: "How many weeks ago was the workshop?"},
		{text: "the last time the build failed"},
		{text: "plans for this weekend"},
		{text: "0 days ago"},
		{text: "the past 999 years"}, // beyond maxBack (and a time.Duration)
		{text: "100 years ago", phrase: "100 years ago",
			from: now.Add(-36500*day - 9125*day), to: now.Add(-36500*day + 9125*day + day)},
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

// FuzzParseTimeRef: any text, any time: no panic, and a span found is a
// non-empty interval named by words of the text.
//
//	go test -tags sqlite_fts5 -fuzz=FuzzParseTimeRef ./search/
func FuzzParseTimeRef(f *testing.F) {
	for _, s := range []string{"two weeks ago", "last Saturday", "İstanbul in March", "the past 999 years", "a couple of days ago", "yesterday\x00today"} {
		f.Add(s, int64(1776254400))
	}
	f.Fuzz(func(t *testing.T, text string, unix int64) {
		now := time.Unix(unix%(1<<40), 0).UTC()
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
	})
}
