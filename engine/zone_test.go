package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/search"
)

// TestSearchRequestZone: a search request is read in the asker's time
// zone: --as-of without an offset is local to it, and "yesterday" is its
// calendar day, whatever the answering process's zone.
func TestSearchRequestZone(t *testing.T) {
	if _, err := time.LoadLocation("America/New_York"); err != nil {
		t.Skip("no time zone database:", err)
	}
	off := -5 * 3600
	for _, tc := range []struct {
		req      SearchRequest
		wantNow  string // RFC 3339
		wantFrom string // of "yesterday"
	}{
		{SearchRequest{Query: "yesterday", AsOf: "2026-11-26T00:30", TimeZone: "America/New_York"}, "2026-11-26T00:30:00-05:00", "2026-11-25T00:00:00-05:00"},
		{SearchRequest{Query: "yesterday", AsOf: "2026-11-26", TimeZone: "America/New_York"}, "2026-11-26T00:00:00-05:00", "2026-11-25T00:00:00-05:00"},
		{SearchRequest{Query: "yesterday", AsOf: "2026-11-26T03:00:00Z", TimeZone: "America/New_York"}, "2026-11-25T22:00:00-05:00", "2026-11-24T00:00:00-05:00"},
		{SearchRequest{Query: "yesterday", AsOf: "2026-11-26T00:30", TimeZone: "Nowhere/Unknown", UTCOffset: &off}, "2026-11-26T00:30:00-05:00", "2026-11-25T00:00:00-05:00"},
		{SearchRequest{Query: "yesterday", AsOf: "2026-11-26T00:30", TimeZone: "UTC"}, "2026-11-26T00:30:00Z", "2026-11-25T00:00:00Z"},
	} {
		q, err := searchQuery(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Now.Format(time.RFC3339); got != tc.wantNow {
			t.Errorf("%+v: now %s, want %s", tc.req, got, tc.wantNow)
		}
		if ref, ok := search.ParseTimeRef(q.Text, q.Now); !ok || ref.From.Format(time.RFC3339) != tc.wantFrom {
			t.Errorf("%+v: yesterday from %s, want %s", tc.req, ref.From.Format(time.RFC3339), tc.wantFrom)
		}
	}
	if _, err := searchQuery(SearchRequest{Query: "x", AsOf: "yesterday"}); err == nil {
		t.Error("--as-of yesterday: no error")
	}
}

// TestSearchBoundsInWords: --since and --until take a day or span in
// words as a query names one, read in the asker's zone against --as-of:
// since is its start, until its end (the span included); words that name
// no span, or more than a span, are refused as before.
func TestSearchBoundsInWords(t *testing.T) {
	if _, err := time.LoadLocation("America/New_York"); err != nil {
		t.Skip("no time zone database:", err)
	}
	const asOf = "2026-11-26T10:00" // a Thursday
	for _, tc := range []struct {
		since, until, zone   string
		wantSince, wantUntil string // RFC 3339 UTC; "" for no bound
		err                  bool
	}{
		{since: "yesterday", zone: "UTC", wantSince: "2026-11-25T00:00:00Z"},
		{since: "Yesterday ", zone: "America/New_York", wantSince: "2026-11-25T05:00:00Z"},
		{until: "yesterday", zone: "UTC", wantUntil: "2026-11-26T00:00:00Z"},
		{since: "last week", until: "yesterday", zone: "UTC", wantSince: "2026-11-16T00:00:00Z", wantUntil: "2026-11-26T00:00:00Z"},
		{since: "3 days ago", zone: "UTC", wantSince: "2026-11-23T00:00:00Z"},
		{since: "2026-11-20", until: "2026-11-20", zone: "UTC", wantSince: "2026-11-20T00:00:00Z", wantUntil: "2026-11-21T00:00:00Z"},
		{since: "yesterday", until: "last week", zone: "UTC", err: true}, // an empty window
		{since: "bogus words", zone: "UTC", err: true},
		{since: "yesterday morning please", zone: "UTC", err: true}, // more than a span
	} {
		q, err := searchQuery(SearchRequest{Query: "x", AsOf: asOf, TimeZone: tc.zone, Since: tc.since, Until: tc.until})
		if tc.err {
			if err == nil {
				t.Errorf("since %q until %q: no error (since %v, until %v)", tc.since, tc.until, q.Since, q.Until)
			}
			continue
		}
		if err != nil {
			t.Errorf("since %q until %q: %v", tc.since, tc.until, err)
			continue
		}
		format := func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format(time.RFC3339)
		}
		if format(q.Since) != tc.wantSince || format(q.Until) != tc.wantUntil {
			t.Errorf("since %q until %q: [%s, %s), want [%s, %s)", tc.since, tc.until, format(q.Since), format(q.Until), tc.wantSince, tc.wantUntil)
		}
	}
}

// TestSearchBoundRefused: a bound read as neither a time nor a span in
// words is refused with every form a search takes; the viewer's
// ParseTime, which takes no words, does not offer them.
func TestSearchBoundRefused(t *testing.T) {
	_, err := searchQuery(SearchRequest{Query: "x", Until: "bogus words"})
	if err == nil || !strings.Contains(err.Error(), `until "bogus words"`) || !strings.Contains(err.Error(), "a day or span in words (yesterday") {
		t.Errorf("search --until bogus words: %v", err)
	}
	if _, err := ParseTime("since", "yesterday"); err == nil || strings.Contains(err.Error(), "in words") {
		t.Errorf("ParseTime(yesterday): %v; want an error that offers no words", err)
	}
}
