package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func users(p *Pack) []string {
	var out []string
	for _, e := range p.Exchanges {
		out = append(out, e.User)
	}
	return out
}

func TestResets(t *testing.T) {
	// Session P, then S resuming it with several resets.
	base := func() *memSource {
		return (&memSource{}).
			ex("P", 0, "p1", "a").
			reset("P", 1).
			ex("P", 2, "p2", "a").
			link("P", "S", 3).
			ex("S", 4, "s1", "a").
			reset("S", 5).
			ex("S", 6, "s2", "a").
			ex("S", 7, "s3", "a").
			reset("S", 8).
			ex("S", 9, "s4", "a").
			ex("S", 10, "s5", "a")
	}
	tests := []struct {
		name      string
		src       *memSource
		opts      Options
		want      []string
		inContext int
		text      []string // substrings the text must hold
	}{
		{
			name: "after the latest reset is in context", src: base(), opts: Options{Session: "S"},
			want: []string{"p1", "p2", "s1", "s2", "s3"}, inContext: 2,
			text: []string{"2 exchanges of this session since its latest context reset are still in context"},
		},
		{
			name: "include current", src: base(), opts: Options{Session: "S", IncludeCurrent: true},
			want: []string{"p1", "p2", "s1", "s2", "s3", "s4", "s5"}, inContext: 0,
		},
		{
			name: "no reset: all of S is in context",
			src:  (&memSource{}).ex("P", 0, "p1", "a").link("P", "S", 1).ex("S", 2, "s1", "a"),
			opts: Options{Session: "S"}, want: []string{"p1"}, inContext: 1,
			text: []string{"1 exchange of this session (it has no context reset) is still in context"},
		},
		{
			name: "reset as the last event: all of S is material",
			src:  (&memSource{}).ex("S", 0, "s1", "a").ex("S", 1, "s2", "a").reset("S", 2),
			opts: Options{Session: "S"}, want: []string{"s1", "s2"}, inContext: 0,
		},
		{
			name: "resets between shown exchanges are noted",
			src:  base(), opts: Options{Session: "S", Budget: 20000},
			want: []string{"p1", "p2", "s1", "s2", "s3"}, inContext: 2,
			text: []string{"[1 context reset]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, tt.src, tt.opts)
			if got := users(p); !slices.Equal(got, tt.want) {
				t.Errorf("exchanges %v, want %v\n%s", got, tt.want, p.Text)
			}
			if p.InContext != tt.inContext {
				t.Errorf("in_context = %d, want %d", p.InContext, tt.inContext)
			}
			for _, s := range tt.text {
				if !strings.Contains(p.Text, s) {
					t.Errorf("text lacks %q:\n%s", s, p.Text)
				}
			}
		})
	}
}

// long is a text of about n tokens made of distinct sentences.
func long(prefix string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < 4*n; i++ {
		fmt.Fprintf(&b, "%s sentence number %d talks about nothing in particular. ", prefix, i)
	}
	return b.String()
}

func TestSelection(t *testing.T) {
	// A chain of 3 sessions of 30 long exchanges; one old exchange is
	// about the flaky watcher test.
	m := &memSource{}
	minute := 0
	for si, s := range []string{"A", "B", "C"} {
		if si > 0 {
			m.link([]string{"A", "B", "C"}[si-1], s, minute)
			minute++
		}
		for i := 0; i < 30; i++ {
			user := fmt.Sprintf("%s%d: %s", s, i, long("filler", 150))
			if s == "A" && i == 3 {
				user = "A3: " + long("intro", 100) + "The watcher test is flaky because fsnotify drops events under load. " + long("outro", 100)
			}
			m.ex(s, minute, user, long("answer", 200), fmt.Sprintf("%s/%d.go", s, i))
			minute++
		}
	}
	m.reset("C", minute)
	m.ex("C", minute+1, "after reset", "ok")

	p := build(t, m, Options{Session: "C", Query: "why is the watcher test flaky?"})
	ids := map[string]Exchange{}
	for _, e := range p.Exchanges {
		ids[e.User[:strings.Index(e.User+":", ":")]] = e
	}
	// The tail: the last exchange before the boundary.
	if _, ok := ids["C29"]; !ok {
		t.Errorf("tail C29 missing: %v", users(p))
	}
	// The relevant exchange, whole: it fits in the room for the best.
	rel, ok := ids["A3"]
	if !ok {
		t.Fatalf("relevant A3 missing:\n%s", p.Text)
	}
	if rel.Truncated || !strings.Contains(rel.User, "The watcher test is flaky because fsnotify drops events under load.") {
		t.Errorf("A3 not whole: %q", rel.User)
	}
	// With a budget too small for it whole, it is cut to its relevant
	// sentence, and the marker says how much was left out.
	p = build(t, m, Options{Session: "C", Query: "why is the watcher test flaky?", Budget: 500})
	rel = Exchange{}
	for _, e := range p.Exchanges {
		if strings.Contains(e.User, "watcher test is flaky") {
			rel = e
		}
	}
	if !rel.Truncated || !strings.Contains(rel.User, "The watcher test is flaky because fsnotify drops events under load.") ||
		!MarkerRE().MatchString(rel.User) {
		t.Errorf("A3 not cut to its relevant part at 500 tokens: %q\n%s", rel.User, p.Text)
	}
	p = build(t, m, Options{Session: "C", Query: "why is the watcher test flaky?"})
	// Chronological, grouped by session, with headers and omission notes.
	for i := 1; i < len(p.Exchanges); i++ {
		if p.Exchanges[i].Timestamp.Before(p.Exchanges[i-1].Timestamp) {
			t.Errorf("not chronological: %v", users(p))
		}
	}
	for _, s := range []string{"## Session A · ", " · 1 of 30 exchanges\n", "## Session C · ", "Shown: "} {
		if !strings.Contains(p.Text, s) {
			t.Errorf("text lacks %q:\n%s", s, p.Text)
		}
	}
	if p.Omitted != 90-len(p.Exchanges) || p.InContext != 1 {
		t.Errorf("omitted %d in_context %d, shown %d", p.Omitted, p.InContext, len(p.Exchanges))
	}
	// Files: those of the shown exchanges, newest reference first.
	var want []string
	for i := len(p.Exchanges) - 1; i >= 0; i-- {
		e := p.Exchanges[i]
		want = append(want, fmt.Sprintf("%s/%s.go", e.SessionID, strings.TrimPrefix(e.User[:strings.Index(e.User, ":")], e.SessionID)))
	}
	if !slices.Equal(p.Files, want) {
		t.Errorf("files %v, want %v", p.Files, want)
	}
}

func TestIdenticalTextsOnce(t *testing.T) {
	m := (&memSource{}).
		ex("A", 0, "run the tests", "all pass").
		ex("A", 1, "run the tests", "all pass").
		ex("A", 2, "something else", "ok").
		ex("A", 3, "run the tests", "all pass").
		link("A", "S", 4)
	p := build(t, m, Options{Session: "S", Query: "run tests"})
	if got := users(p); !slices.Equal(got, []string{"something else", "run the tests"}) {
		t.Errorf("exchanges %v", got)
	}
	if p.Omitted != 2 || strings.Count(p.Text, "run the tests") != 1 {
		t.Errorf("omitted %d, text:\n%s", p.Omitted, p.Text)
	}
}

func TestFilesListedOnce(t *testing.T) {
	m := (&memSource{}).
		ex("A", 0, "one", "a", "x.go", "y.go").
		ex("A", 1, "two", "b", "z.go", "x.go").
		link("A", "S", 2)
	p := build(t, m, Options{Session: "S"})
	if want := []string{"z.go", "x.go", "y.go"}; !slices.Equal(p.Files, want) {
		t.Errorf("files %v, want %v", p.Files, want)
	}
	if strings.Count(p.Text, "- x.go\n") != 1 {
		t.Errorf("x.go not listed once:\n%s", p.Text)
	}
}

func TestEmptyAndErrors(t *testing.T) {
	m := (&memSource{}).ex("S", 0, "hi", "hello").link("E", "T", 1)
	tests := []struct {
		name    string
		opts    Options
		wantErr error
		text    string
	}{
		{"unknown session", Options{Session: "nope"}, ErrUnknownSession, ""},
		{"nothing to resume", Options{Session: "S"}, nil, "Nothing to resume: the session resumes no other session; its own 1 exchange (it has no context reset) is still in context."},
		{"resumed sessions empty", Options{Session: "T"}, nil, "Nothing to resume: the sessions it resumes hold no exchanges."},
		{"latest", Options{Latest: true}, nil, "Nothing to resume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Build(ctx, m, tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				// The error names the session, for callers that did
				// not (Latest).
				var unknown *UnknownSessionError
				if errors.Is(tt.wantErr, ErrUnknownSession) && (!errors.As(err, &unknown) || unknown.Session != tt.opts.Session || err.Error() != `resume: unknown session "nope"`) {
					t.Errorf("err = %v (%#v), want an UnknownSessionError naming %q", err, unknown, tt.opts.Session)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkPack(t, p)
			if len(p.Exchanges) != 0 || !strings.Contains(p.Text, tt.text) {
				t.Errorf("pack %+v", p)
			}
		})
	}
	if _, err := Build(ctx, &memSource{}, Options{Latest: true}); !errors.Is(err, ErrNoSessions) {
		t.Errorf("latest of an empty index: %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	m := &memSource{}
	for i := 0; i < 40; i++ {
		s := fmt.Sprintf("s%d", i/10)
		if i%10 == 0 && i > 0 {
			m.link(fmt.Sprintf("s%d", i/10-1), s, i*10)
		}
		// Equal timestamps everywhere: ties must break the same way.
		m.ex(s, (i/10)*10, fmt.Sprintf("q%d parser %s", i, long("x", 40)), long("y", 80), fmt.Sprintf("f%d", i%3))
	}
	var first []byte
	for i := 0; i < 5; i++ {
		p := build(t, m, Options{Session: "s3", Query: "parser", Budget: 700, IncludeCurrent: true})
		b, _ := json.Marshal(p)
		if i == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, b)
		}
		m.links = append(m.links[1:], m.links[0]) // the source's order must not matter
	}
}

func TestRankerError(t *testing.T) {
	// (Material that fits whole needs no ranking: make it too long.)
	m := (&memSource{rankErr: errors.New("boom")}).ex("A", 0, long("a", 300), "b").link("A", "S", 1)
	if _, err := Build(ctx, m, Options{Session: "S", Query: "x", Budget: 200}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
}

// vanishedLatest is a source whose latest session is gone by the time it
// is looked up (forgotten meanwhile).
type vanishedLatest struct{ *memSource }

func (vanishedLatest) LatestSession(context.Context) (string, error) { return "gone", nil }

// The unknown-session error names the session, also the latest one, which
// the caller did not name.
func TestUnknownLatestNamed(t *testing.T) {
	m := (&memSource{}).ex("S", 0, "hi", "hello")
	_, err := Build(ctx, vanishedLatest{m}, Options{Latest: true})
	var unknown *UnknownSessionError
	if !errors.Is(err, ErrUnknownSession) || !errors.As(err, &unknown) || unknown.Session != "gone" {
		t.Fatalf("err = %v, want an UnknownSessionError naming %q", err, "gone")
	}
}
