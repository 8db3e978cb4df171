package mcpserver

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
)

// The engine's errors name the tools' arguments and list_sessions; other
// errors pass as they are (a hint naming the server's own --root stays).
func TestError(t *testing.T) {
	_, err := engine.ParseTime("since", "yday")
	for _, c := range []struct {
		err  error
		want string
	}{
		{err, `argument since "yday": want an RFC 3339 time`},
		{fmt.Errorf("search: %w", engine.UnknownSession("nope")), `search: unknown session "nope" (see list_sessions)`},
		{&engine.Error{Code: engine.CodeEmptyWindow, Field: "since", Value: "b", Other: "until", OtherValue: "a"}, "argument since b is not before argument until a"},
		{&engine.Error{Code: engine.CodeBadValue, Field: "limit", Value: "500", Hint: "want 1 to 200"}, "limit 500: want 1 to 200"},
		{errors.New("give --root PROJECT"), "give --root PROJECT"},
	} {
		if got := Error(c.err); got == nil || !strings.HasPrefix(got.Error(), c.want) {
			t.Errorf("Error(%v) = %v, want %q...", c.err, got, c.want)
		}
	}
	if Error(nil) != nil {
		t.Errorf("Error(nil) is not nil")
	}
}

// No regexp reads error text here any more: the engine's errors are
// structured (issue 29).
func TestNoRegexp(t *testing.T) {
	files, _ := os.ReadDir(".")
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".go") && !strings.HasSuffix(f.Name(), "_test.go") {
			data, err := os.ReadFile(f.Name())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), `"regexp"`) {
				t.Errorf("%s imports regexp", f.Name())
			}
		}
	}
}

// TestSearchTextEmptyIndex: an agent told that nothing was found because
// the memory holds nothing, not that its words matched nothing.
func TestSearchTextEmptyIndex(t *testing.T) {
	got := SearchText("sqlite locked", &engine.SearchResponse{EmptyIndex: true})
	if !strings.Contains(got, "holds no exchange yet") || strings.Contains(got, "matches \"sqlite locked\", by its words") {
		t.Errorf("SearchText of an empty index: %q", got)
	}
}

// Nothing within the filters matches: the answer says what the same
// search finds without them, never plainly that no exchange matches.
func TestSearchTextNoMatchInScope(t *testing.T) {
	win := engine.Window{Since: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	cases := []struct {
		miss      engine.ScopeMiss
		want, not string
	}{
		{engine.ScopeMiss{Window: win, Outside: 2}, "Without these filters the same search finds 2 matching exchanges", "do not assume"},
		{engine.ScopeMiss{Window: win, Outside: 10, OutsideMore: true}, "finds 10 or more matching exchanges", "do not assume"},
		{engine.ScopeMiss{Window: win}, "within the filters given (the time window from 2026-11-25 00:00 UTC on): none of those exchanges matches \"signing keys\". No exchange outside them matches", "Without these filters"},
		{engine.ScopeMiss{Session: "s1", Window: win, Empty: true, Outside: 3}, "the filters given (session s1 and the time window from 2026-11-25 00:00 UTC on) admit no exchange at all. Without these filters the same search finds 3", "none of those"},
		{engine.ScopeMiss{Session: "s1", Window: win, Outside: 1}, "within the filters given (session s1 and the time window from 2026-11-25 00:00 UTC on)", "do not assume"},
		{engine.ScopeMiss{Chain: "s2"}, "(the chain of session s2): none of those exchanges matches \"signing keys\". No exchange outside them matches", "Without these filters"},
	}
	for _, c := range cases {
		got := SearchText("signing keys", &engine.SearchResponse{NoMatchInScope: &c.miss})
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%+v: %q; want %q, not %q", c.miss, got, c.want, c.not)
		}
	}
}

// Nothing found while the vectors took no part: the words were searched,
// the meaning was not, and the answer says so once; it never says that
// nothing matches "by its words or its meaning".
func TestSearchTextVectorsMissing(t *testing.T) {
	const why = "the vector space is still loading (the daemon just started): lexical (BM25) ranking only for now"
	got := SearchText("ingress", &engine.SearchResponse{VectorsMissing: why})
	if !strings.Contains(got, `Nothing found by the words of "ingress"; its meaning could not be searched (`+why+")") ||
		strings.Contains(got, "by its words or its meaning") || strings.Contains(got, "do not assume") || strings.Count(got, why) != 1 {
		t.Errorf("nothing found, vectors missing: %q", got)
	}
	got = SearchText("ingress", &engine.SearchResponse{})
	if !strings.Contains(got, "by its words or its meaning") {
		t.Errorf("nothing found, vectors searched: %q", got)
	}
}
