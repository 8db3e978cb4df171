package resume

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// fixtures are chains meant to strain the budget.
func budgetFixtures() map[string]*memSource {
	longID := strings.Repeat("x", 120) + "-sess1"
	longID2 := strings.Repeat("y", 120) + "-sess2"
	var manyFiles []string
	for i := 0; i < 300; i++ {
		manyFiles = append(manyFiles, fmt.Sprintf("very/long/path/to/some/deeply/nested/package/number%03d/file_with_a_long_name.go", i))
	}
	fx := map[string]*memSource{}

	// Exchanges far larger than any budget: prose, one unbroken word,
	// multi-byte text, special-token look-alikes.
	fx["huge exchanges"] = (&memSource{}).
		ex("A", 0, long("prose about the parser", 40000), long("answer about the parser", 40000)).
		ex("A", 1, strings.Repeat("QUJD", 30000), strings.Repeat("ZGVm", 30000)).
		ex("A", 2, strings.Repeat("解析器の不具合を直した。", 5000), strings.Repeat("🙂 parser ", 8000)).
		ex("A", 3, strings.Repeat("<|endoftext|> parser ", 3000), "ok").
		link("A", "S", 4).
		ex("S", 5, "now", "ok")

	// Long session ids everywhere, and exchanges referencing many files.
	m := &memSource{}
	m.ex(longID, 0, "set up the parser "+long("p", 300), long("a", 300), manyFiles...)
	m.ex(longID, 1, "second "+long("q", 50), long("b", 50), manyFiles[:10]...)
	m.reset(longID, 2)
	m.link(longID, longID2, 3)
	m.ex(longID2, 4, "parser again", long("c", 200), manyFiles[100:]...)
	m.reset(longID2, 5)
	fx["long ids and many files"] = m

	// A long chain (its line gets shortened) of many small exchanges.
	m = &memSource{}
	for s := 0; s < 25; s++ {
		id := fmt.Sprintf("session-%02d-%s", s, strings.Repeat("z", 40))
		if s > 0 {
			m.link(fmt.Sprintf("session-%02d-%s", s-1, strings.Repeat("z", 40)), id, s*100)
		}
		for i := 0; i < 20; i++ {
			m.ex(id, s*100+i+1, fmt.Sprintf("step %d of session %d: parser work", i, s), "done")
		}
		m.reset(id, s*100+50)
	}
	fx["long chain"] = m
	return fx
}

func fixtureSession(name string, m *memSource) string {
	return m.events[len(m.events)-1].SessionID
}

// The acceptance: never a pack over budget, for budgets from 50 to 20,000
// tokens (and below), with exchanges larger than the whole budget.
func TestNeverOverBudget(t *testing.T) {
	budgets := []int{1, 10, 30, 50, 64, 100, 150, 200, 300, 500, 1000, 2000, 5000, 10000, 20000}
	for name, m := range budgetFixtures() {
		for _, budget := range budgets {
			for _, query := range []string{"", "parser"} {
				for _, cur := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%d/%q/current=%v", name, budget, query, cur), func(t *testing.T) {
						p := build(t, m, Options{Session: fixtureSession(name, m), Budget: budget, Query: query, IncludeCurrent: cur, MaxDepth: 100})
						if budget >= 300 && len(p.Exchanges) == 0 {
							t.Errorf("nothing shown with %d tokens:\n%s", budget, p.Text)
						}
						if !utf8.ValidString(p.Text) {
							t.Errorf("text is not valid UTF-8")
						}
					})
				}
			}
		}
	}
}

// Random chains, texts and budgets: the invariants hold.
func TestRandomPacks(t *testing.T) {
	words := []string{"parser", "watcher", "index", "the", "a", "résumé", "日本語", "🙂", "fix", "bug", "\n", "\n\n", ". ", "[…]", "```", "<|endoftext|>", "x", "    "}
	text := func(r *rand.Rand, n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	for seed := uint64(1); seed <= 60; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		m := &memSource{}
		nsess := 1 + r.IntN(6)
		minute := 0
		for s := 0; s < nsess; s++ {
			id := fmt.Sprintf("s%d", s)
			for k := 0; k < r.IntN(3) && s > 0; k++ {
				m.link(fmt.Sprintf("s%d", r.IntN(s)), id, minute)
			}
			for i := 0; i < r.IntN(30); i++ {
				minute += r.IntN(3)
				if r.IntN(8) == 0 {
					m.reset(id, minute)
					continue
				}
				size := r.IntN(40)
				if r.IntN(10) == 0 {
					size = 2000 + r.IntN(20000)
				}
				var files []string
				for f := 0; f < r.IntN(4); f++ {
					files = append(files, fmt.Sprintf("f%d.go", r.IntN(10)))
				}
				// The protocol wants some text that is not white space.
				m.ex(id, minute, "w"+text(r, size), text(r, r.IntN(60)), files...)
			}
		}
		if len(m.events) == 0 {
			continue
		}
		budget := 50 + r.IntN(20000)
		if r.IntN(2) == 0 {
			budget = 50 + r.IntN(500)
		}
		opts := Options{Session: fmt.Sprintf("s%d", nsess-1), Budget: budget, IncludeCurrent: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			opts.Query = text(r, 3)
		}
		if ok, _ := m.SessionExists(ctx, opts.Session); !ok {
			continue
		}
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			p := build(t, m, opts)
			seen := map[string]bool{}
			for _, e := range p.Exchanges {
				if seen[e.User+"\x00"+e.AI] && !e.Truncated {
					t.Errorf("identical texts twice: %q", e.User)
				}
				seen[e.User+"\x00"+e.AI] = true
			}
		})
	}
}

func TestCut(t *testing.T) {
	c := &cutter{counter: counter(t), query: analyse("why does the watcher lose events")}
	render := func(u, a string) string { return renderExchange("10:00", u, a) }
	relevant := "The watcher loses events when fsnotify overflows its queue."
	user := long("setup", 400) + "\n" + relevant + "\n" + long("more", 400)
	ai := long("reply", 600)
	tests := []struct {
		name        string
		user, ai    string
		limit       int
		ok, cut     bool
		mustContain string
	}{
		{"fits whole", "short question", "short answer", 100, true, false, "short question"},
		{"relevant line kept", user, ai, 120, true, true, relevant},
		{"tight", user, ai, 60, true, true, "watcher"},
		{"too tight", user, ai, 30, false, false, ""},
		{"one huge word", strings.Repeat("Zm9v", 20000), "", 60, true, true, "Zm9v"},
		{"empty user side", "", ai, 60, true, true, "reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cx, ok := c.cut(exRef{stamp: "10:00", user: tt.user, ai: tt.ai}, tt.limit)
			u, a, cut := cx.user, cx.ai, cx.truncated
			if ok && (cx.block != render(u, a) || cx.tokens != c.counter.Count(cx.block)) {
				t.Errorf("block %q with %d tokens, want render(user, ai) and its count", cx.block, cx.tokens)
			}
			if ok != tt.ok || cut != tt.cut {
				t.Fatalf("ok=%v cut=%v, want %v %v", ok, cut, tt.ok, tt.cut)
			}
			if !ok {
				return
			}
			if n := c.counter.Count(render(u, a)); n > tt.limit {
				t.Errorf("%d tokens, limit %d", n, tt.limit)
			}
			if !strings.Contains(u+a, tt.mustContain) {
				t.Errorf("lost %q: user %q ai %q", tt.mustContain, u, a)
			}
			if tt.cut && !MarkerRE().MatchString(u+a) {
				t.Errorf("cut without a marker: %q %q", u, a)
			}
			if tt.user == "" && u != "" {
				t.Errorf("empty side became %q", u)
			}
		})
	}
}

func TestCounter(t *testing.T) {
	c := counter(t)
	if n := c.Count("hello world"); n != 2 {
		t.Errorf("Count(hello world) = %d, want 2 (cl100k_base)", n)
	}
	for _, s := range []string{"", "abc", strings.Repeat("日本語🙂", 100), long("x", 500)} {
		for _, n := range []int{0, 1, 5, 50, 10000} {
			p := c.Truncate(s, n)
			if !strings.HasPrefix(s, p) || !utf8.ValidString(p) || c.Count(p) > n {
				t.Errorf("Truncate(%.20q, %d) = %.20q (%d tokens)", s, n, p, c.Count(p))
			}
			if c.Count(s) <= n && p != s {
				t.Errorf("Truncate cut a text that fits")
			}
		}
	}
	if _, err := NewCounter("o200k_base"); err != nil {
		t.Error(err)
	}
	if _, err := NewCounter("gpt-4o"); err != nil {
		t.Error(err)
	}
	if _, err := NewCounter("nope"); err == nil {
		t.Error("unknown encoding accepted")
	}
}
