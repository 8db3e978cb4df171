package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
)

// TestSearchTimeSpan: a query naming a time ranks that span's exchanges
// first, says which span it read, and --as-of moves "now".
func TestSearchTimeSpan(t *testing.T) {
	root := t.TempDir()
	for _, l := range []string{
		`{"type":"exchange","id":"march","session_id":"s1","timestamp":"2026-03-02T10:00:00Z","user":"The concert with my sister, what a concert, best concert ever","ai":"Glad the concert was good."}`,
		`{"type":"exchange","id":"april","session_id":"s2","timestamp":"2026-04-01T10:00:00Z","user":"We went to a concert downtown","ai":"Sounds fun."}`,
	} {
		if _, errs, code := runCLI(t, l, "--root", root, "log", "-"); code != 0 {
			t.Fatalf("log: %s", errs)
		}
	}
	if _, errs, code := runCLI(t, "", "--root", root, "ingest"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	search := func(args ...string) (resp engine.SearchResponse) {
		t.Helper()
		out, errs, code := runCLI(t, "", append([]string{"--root", root, "search", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("search %v: exit %d: %s", args, code, errs)
		}
		if err := json.Unmarshal([]byte(out), &resp); err != nil {
			t.Fatalf("search %v: %v\n%s", args, err, out)
		}
		return resp
	}
	tests := []struct {
		args   []string
		first  string
		phrase string // "" = no time_span
	}{
		{[]string{"--as-of", "2026-04-15", "the concert two weeks ago"}, "april", "two weeks ago"},
		{[]string{"--as-of", "2026-03-16T12:00:00Z", "the concert two weeks ago"}, "march", "two weeks ago"},
		{[]string{"--as-of", "2026-04-15", "the concert"}, "march", ""},
		{[]string{"--as-of", "2026-04-15", "--mode", "bm25", "the concert two weeks ago"}, "march", ""},
		{[]string{"--as-of", "2026-04-15", "--since", "2026-01-01", "the concert two weeks ago"}, "march", ""},
	}
	for _, tc := range tests {
		resp := search(tc.args...)
		if len(resp.Results) != 2 || resp.Results[0].ID != tc.first {
			t.Errorf("search %v: got %+v, want %s first", tc.args, resp.Results, tc.first)
		}
		switch {
		case tc.phrase == "" && resp.TimeSpan != nil:
			t.Errorf("search %v: time span %+v, want none", tc.args, resp.TimeSpan)
		case tc.phrase != "" && (resp.TimeSpan == nil || resp.TimeSpan.Phrase != tc.phrase || !resp.TimeSpan.From.Before(resp.TimeSpan.To)):
			t.Errorf("search %v: time span %+v, want %q", tc.args, resp.TimeSpan, tc.phrase)
		}
	}

	out, _, code := runCLI(t, "", "--root", root, "search", "--as-of", "2026-04-15", "concert two weeks ago")
	if code != 0 || !strings.Contains(out, `("two weeks ago": exchanges from `) || !strings.Contains(out, "rank higher)") {
		t.Errorf("human output does not say which span it read:\n%s", out)
	}
	if _, errs, code := runCLI(t, "", "--root", root, "search", "--as-of", "last tuesday", "concert"); code != 2 || !strings.Contains(errs, "--as-of") {
		t.Errorf("bad --as-of: exit %d, %s", code, errs)
	}
}

// TestSearchCJKSubstring: text without spaces between words (Chinese,
// Japanese) is found by any substring, through the real binary: appended
// with >>, indexed by ingest, searched in every mode.
func TestSearchCJKSubstring(t *testing.T) {
	w := newWorkspace(t)
	w.shellAppend("a.jsonl", exchangeLine("s1", "ja", "日本語のテストを書きました", "テストは全部通りました")+
		exchangeLine("s1", "zh", "数据库迁移失败了", "请检查索引")+
		exchangeLine("s1", "en", "the Japanese tests", "all green"))
	if _, errs, code := w.cli("ingest"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	for _, tc := range []struct{ query, want string }{
		{"日本語", "ja"}, {"テスト", "ja"}, {"本語のテ", "ja"}, {"通り", "ja"}, {"迁移", "zh"}, {"索引", "zh"}, {"tests", "en"},
	} {
		for _, mode := range []string{"bm25", "hybrid"} {
			out, errs, code := w.cli("search", "--json", "--mode", mode, tc.query)
			if code != 0 {
				t.Fatalf("search %s: exit %d: %s", tc.query, code, errs)
			}
			var resp engine.SearchResponse
			if err := json.Unmarshal([]byte(out), &resp); err != nil {
				t.Fatal(err)
			}
			if len(resp.Results) == 0 || resp.Results[0].ID != tc.want {
				t.Errorf("search --mode %s %q: got %+v, want %s first", mode, tc.query, resp.Results, tc.want)
			}
		}
	}
}

// TestSearchNothingRelevant: through the binary, a query about nothing in
// the history finds nothing and says so; one that matches only weakly
// shows its closest matches marked weak (issue 22, item 11: before,
// "nothing relevant found"); --min-score moves the floor and is checked.
func TestSearchNothingRelevant(t *testing.T) {
	w := newWorkspace(t)
	w.shellAppend("a.jsonl", exchangeLine("s1", "e1", "the sqlite database is locked when two processes write", "enable WAL and a busy timeout")+
		exchangeLine("s1", "e2", "how do I make the docker image smaller", "use a multi-stage build"))
	if _, errs, code := w.cli("ingest"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	out, errs, code := w.cli("search", "quantum entanglement photosynthesis")
	if code != 0 || !strings.Contains(out, "nothing found: no past exchange matches") {
		t.Errorf("nonsense: exit %d, %q %s", code, out, errs)
	}
	// One word in common with one exchange, the rest about nothing: a
	// weak match, shown as such with its score.
	out, errs, code = w.cli("search", "docker zygomorphic bromeliad xerophytic tardigrade cryptobiosis")
	if code != 0 || !strings.Contains(out, "no past exchange scores 0.20 or more; the closest matches, weak") ||
		!strings.Contains(out, "docker image smaller") || !strings.Contains(out, ", weak)") || strings.Contains(out, "sqlite") {
		t.Errorf("weak match: exit %d, %q %s", code, out, errs)
	}
	out, _, _ = w.cli("search", "--json", "docker zygomorphic bromeliad xerophytic tardigrade cryptobiosis")
	var weak engine.SearchResponse
	if err := json.Unmarshal([]byte(out), &weak); err != nil || !weak.Weak || len(weak.Results) != 1 || !weak.Results[0].Weak ||
		weak.Results[0].Score >= 0.2 || weak.Results[0].Score <= 0 {
		t.Errorf("weak match --json: %+v %v", weak, err)
	}
	out, _, _ = w.cli("search", "--json", "quantum entanglement photosynthesis")
	var resp engine.SearchResponse
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Results) != 0 || resp.MinScore != 0.2 {
		t.Errorf("nonsense --json: %+v %v", resp, err)
	}
	out, _, _ = w.cli("search", "--json", "sqlite locked")
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Results) == 0 || resp.Results[0].ID != "e1" ||
		resp.Results[0].Score <= 0.2 || resp.Results[0].Score > 1 {
		t.Errorf("sqlite locked: %+v %v", resp, err)
	}
	// With no floor, an empty answer cannot be about scores.
	if out, _, code := w.cli("search", "--min-score", "0", "--mode", "bm25", "quantum"); code != 0 ||
		!strings.Contains(out, "nothing found: no past exchange matches") {
		t.Errorf("--min-score 0, no match: exit %d, %q", code, out)
	}
	if _, errs, code := w.cli("search", "--min-score", "1.5", "sqlite"); code == 0 || !strings.Contains(errs, "min-score") {
		t.Errorf("--min-score 1.5: exit %d, %s", code, errs)
	}
}

// TestSearchEmptyIndex: a search of a workspace whose index holds no
// exchange says so, without the note that no exchange has a vector yet
// (there is nothing to embed; before, a user who had forgotten every
// session was told to watch the embedding's progress).
func TestSearchEmptyIndex(t *testing.T) {
	w := newWorkspace(t)
	w.shellAppend("a.jsonl", `{"type":"exchange", broken`+"\n")
	if _, errs, code := w.cli("ingest"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	out, errs, code := w.cli("search", "sqlite locked")
	if code != 0 || !strings.Contains(out, "nothing found: the index holds no exchange yet") || strings.Contains(errs, "vector") {
		t.Errorf("empty index: exit %d, %q, %q", code, out, errs)
	}
	out, _, _ = w.cli("search", "--json", "sqlite locked")
	var resp engine.SearchResponse
	if err := json.Unmarshal([]byte(out), &resp); err != nil || !resp.EmptyIndex || resp.VectorsMissing != "" {
		t.Errorf("empty index --json: %+v %v", resp, err)
	}
}

// TestScopeMissText: nothing found within the filters says which, whether
// they admit any exchange, what lies outside them, and which flags to
// widen or drop.
func TestScopeMissText(t *testing.T) {
	since := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	win := engine.Window{Since: since}
	cases := []struct {
		name string
		m    engine.ScopeMiss
		want string
	}{
		{"window, two outside", engine.ScopeMiss{Window: win, Outside: 2},
			"nothing found in the time window from 2026-11-25 00:00 UTC on: none of the exchanges there matches these words or their meaning; 2 exchanges outside match (widen or drop --since to see them)"},
		{"window, nothing outside", engine.ScopeMiss{Window: win},
			"nothing found in the time window from 2026-11-25 00:00 UTC on: none of the exchanges there matches these words or their meaning, and none outside does either"},
		{"session, one outside", engine.ScopeMiss{Session: "s1", Outside: 1},
			"nothing found in session s1: none of the exchanges there matches these words or their meaning; 1 exchange outside matches (drop --session to see them)"},
		{"chain, the limit reached outside", engine.ScopeMiss{Chain: "s2", Outside: 10, OutsideMore: true},
			"nothing found in the chain of session s2: none of the exchanges there matches these words or their meaning; 10 or more exchanges outside match (drop --chain to see them)"},
		{"a session outside the window", engine.ScopeMiss{Session: "s1", Window: engine.Window{Since: since, Until: since.AddDate(0, 0, 1)}, Empty: true, Outside: 3},
			"nothing found: there is no exchange in session s1 and the time window from 2026-11-25 00:00 to 2026-11-26 00:00 UTC; 3 exchanges outside match (widen or drop --session, --since, --until to see them)"},
		{"empty, nothing outside", engine.ScopeMiss{Session: "s1", Window: engine.Window{Until: since}, Empty: true},
			"nothing found: there is no exchange in session s1 and the time window before 2026-11-25 00:00 UTC, and none outside matches these words or their meaning"},
	}
	for _, c := range cases {
		if got := scopeMissText(c.m); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestNothingFoundWithoutVectors: a search that found nothing while the
// vectors took no part says what was not searched, never that nothing
// matches "these words or their meaning".
func TestNothingFoundWithoutVectors(t *testing.T) {
	const why = "the vector space is still loading"
	for _, tc := range []struct {
		missing    string
		vectorOnly bool
		want       string
	}{
		{"", false, "nothing found: no past exchange matches these words or their meaning"},
		{"", true, "nothing found: no past exchange matches these words or their meaning"},
		{why, false, "nothing found by these words; their meaning was not searched (see the note above)"},
		{why, true, "nothing found: the search by meaning could not run (see the note above); --mode bm25 or hybrid searches by words"},
	} {
		var b strings.Builder
		printResults(&b, engine.SearchResponse{VectorsMissing: tc.missing}, false, false, 10, tc.vectorOnly)
		if got := strings.TrimSpace(b.String()); got != tc.want {
			t.Errorf("missing %q, vector only %v: %q, want %q", tc.missing, tc.vectorOnly, got, tc.want)
		}
	}
}
