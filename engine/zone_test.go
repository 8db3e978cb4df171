package engine

import (
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
