package resume

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// byPreview maps a pack's decisions by their preview (the tests' user
// texts are short and distinct).
func byPreview(t *testing.T, x *Explanation) map[string]Decision {
	t.Helper()
	out := map[string]Decision{}
	for _, d := range x.Decisions {
		if prev, dup := out[d.Preview]; dup && prev.Included {
			continue
		}
		out[d.Preview] = d
	}
	return out
}

func TestExplain(t *testing.T) {
	long := strings.Repeat("the build runs the migration step before the tests; ", 60)
	tests := []struct {
		name string
		src  *memSource
		opts Options
		// want: preview -> reason; included says whether it is in.
		want     map[string]string
		included map[string]bool
		cut      []string // previews that must be truncated
		dupOf    map[string]string
		check    func(t *testing.T, p *Pack)
	}{
		{
			name:     "everything fits: the chain",
			src:      (&memSource{}).ex("P", 0, "p1", "a").link("P", "S", 1).ex("S", 2, "s1", "a").reset("S", 3).ex("S", 4, "s2", "a"),
			opts:     Options{Session: "S"},
			want:     map[string]string{"p1": ReasonChain, "s1": ReasonChain, "s2": ReasonInContext},
			included: map[string]bool{"p1": true, "s1": true},
			check: func(t *testing.T, p *Pack) {
				d := byPreview(t, p.Explain)
				if d["p1"].Depth != 1 || d["s1"].Depth != 0 {
					t.Errorf("depths: p1 %d, s1 %d; want 1 and 0", d["p1"].Depth, d["s1"].Depth)
				}
				if !strings.Contains(d["s2"].Why, "context reset") {
					t.Errorf("in context: %q", d["s2"].Why)
				}
			},
		},
		{
			name:     "duplicate texts are shown once",
			src:      (&memSource{}).ex("P", 0, "same", "answer").ex("P", 1, "same", "answer").link("P", "S", 2).ex("S", 3, "s1", "a").reset("S", 4),
			opts:     Options{Session: "S"},
			want:     map[string]string{"s1": ReasonChain},
			included: map[string]bool{"s1": true},
			check: func(t *testing.T, p *Pack) {
				n := 0
				for _, d := range p.Explain.Decisions {
					if d.Reason == ReasonDuplicate {
						n++
						if d.DuplicateOf == "" || d.Included {
							t.Errorf("duplicate %+v", d)
						}
					}
				}
				if n != 1 || p.Explain.Counts[ReasonDuplicate] != 1 {
					t.Errorf("duplicates listed %d, counted %d; want 1", n, p.Explain.Counts[ReasonDuplicate])
				}
			},
		},
		{
			name: "tail, relevant, recent, cut and not reached",
			src: func() *memSource {
				m := &memSource{}
				for i := 0; i < 100; i++ {
					m.ex("P", i, fmt.Sprintf("old%02d", i), "filler about lunch and the weather "+strings.Repeat("x ", 40))
				}
				m.ex("P", 140, "webhook", "the stripe webhook retries three times "+long)
				for i := 0; i < 5; i++ {
					m.ex("P", 150+i, fmt.Sprintf("late%d", i), "more filler "+strings.Repeat("y ", 30))
				}
				return m.link("P", "S", 160).reset("S", 161)
			}(),
			opts:     Options{Session: "S", Query: "stripe webhook retries", Budget: 600},
			want:     map[string]string{"late4": ReasonRecent, "webhook": ReasonRelevant, "old00": ReasonNotReached},
			included: map[string]bool{"late4": true, "webhook": true},
			cut:      []string{"webhook"},
			check: func(t *testing.T, p *Pack) {
				d := byPreview(t, p.Explain)
				if d["webhook"].Rank != 1 || d["webhook"].Whole <= d["webhook"].Tokens {
					t.Errorf("webhook: rank %d, tokens %d of %d", d["webhook"].Rank, d["webhook"].Tokens, d["webhook"].Whole)
				}
				if !strings.Contains(d["late4"].Why, "last exchange before the boundary") {
					t.Errorf("tail: %q", d["late4"].Why)
				}
				if x := p.Explain; x.Counts[ReasonNoRoom] == 0 || x.Counts[ReasonNotReached] == 0 {
					t.Errorf("want some tried without room and some not reached: %v", x.Counts)
				}
				x := p.Explain
				in := 0
				for _, r := range []string{ReasonRecent, ReasonRelevant, ReasonChain} {
					in += x.Counts[r]
				}
				if in != len(p.Exchanges) {
					t.Errorf("counted %d in, the pack holds %d", in, len(p.Exchanges))
				}
				if total := in + x.Counts[ReasonNotReached] + x.Counts[ReasonNoRoom] + x.Counts[ReasonDuplicate] + x.Counts[ReasonDropped]; total != 106 {
					t.Errorf("every candidate counted once: %d, want 106 (%v)", total, x.Counts)
				}
				if x.Truncated != 1 {
					t.Errorf("truncated %d, want 1", x.Truncated)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain, err := Build(ctx, tc.src, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if plain.Explain != nil {
				t.Fatal("an explanation nobody asked for")
			}
			opts := tc.opts
			opts.Explain = true
			p, err := Build(ctx, tc.src, opts)
			if err != nil {
				t.Fatal(err)
			}
			if p.Text != plain.Text {
				t.Fatal("explaining changed the pack")
			}
			if p.Explain == nil {
				t.Fatal("no explanation")
			}
			d := byPreview(t, p.Explain)
			for prev, reason := range tc.want {
				got, ok := d[prev]
				if !ok {
					t.Errorf("%s: not explained", prev)
					continue
				}
				if got.Reason != reason || got.Included != tc.included[prev] || got.Why == "" {
					t.Errorf("%s: %+v; want reason %s, included %v", prev, got, reason, tc.included[prev])
				}
			}
			for _, prev := range tc.cut {
				if !d[prev].Truncated || !strings.Contains(d[prev].Why, "cut to") {
					t.Errorf("%s: want cut: %+v", prev, d[prev])
				}
			}
			for _, e := range p.Exchanges {
				found := false
				for _, dd := range p.Explain.Decisions {
					found = found || dd.ID == e.ID && dd.Included
				}
				if !found {
					t.Errorf("exchange %s in the pack is not explained as included", e.ID)
				}
			}
			if _, err := json.Marshal(p); err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

// TestExplainListsAtMost bounds what an explanation lists of a long chain.
func TestExplainListsAtMost(t *testing.T) {
	m := &memSource{}
	for i := 0; i < 400; i++ {
		m.ex("P", i, fmt.Sprintf("q%03d", i), strings.Repeat("words of an answer ", 20))
	}
	m.link("P", "S", 500)
	for i := 0; i < 150; i++ {
		m.ex("S", 501+i, fmt.Sprintf("now%03d", i), "a")
	}
	p, err := Build(ctx, m, Options{Session: "S", Budget: 500, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	x := p.Explain
	nr, ic := 0, 0
	for _, d := range x.Decisions {
		switch d.Reason {
		case ReasonNotReached:
			nr++
		case ReasonInContext:
			ic++
		}
	}
	if nr != ExplainListMax || ic != ExplainListMax {
		t.Errorf("listed %d not reached and %d in context; want %d each", nr, ic, ExplainListMax)
	}
	if x.Counts[ReasonInContext] != 150 || x.Unlisted != x.Counts[ReasonNotReached]-nr+50 {
		t.Errorf("counts %v, unlisted %d", x.Counts, x.Unlisted)
	}
}
