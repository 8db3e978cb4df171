package importer

import "testing"

// TestSummaryWording: one of a thing is singular ("goose: 1 files, 1
// sessions: 1 exchanges" read as a typo to every user importing one session).
func TestSummaryWording(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Files: 1, Sessions: 1, Exchanges: 1, Resets: 1, Links: 1, Duplicates: 1, Skipped: 1, Errors: 1},
			"goose: 1 file, 1 session: 1 exchange, 1 context reset, 1 resume link written; 1 already there; 1 skipped; 1 unreadable record"},
		{Result{Files: 3, Sessions: 2, Exchanges: 43},
			"goose: 3 files, 2 sessions: 43 exchanges, 0 context resets, 0 resume links written; 0 already there; 0 skipped; 0 unreadable records"},
	} {
		if got := tc.r.Summary("goose"); got != tc.want {
			t.Errorf("Summary:\n got %s\nwant %s", got, tc.want)
		}
	}
}
