package resume

import (
	"fmt"
	"slices"
	"testing"
)

func TestFollowChain(t *testing.T) {
	linear := func(n int) *memSource {
		m := &memSource{}
		for i := 1; i < n; i++ {
			m.link(fmt.Sprintf("s%02d", i-1), fmt.Sprintf("s%02d", i), i)
		}
		return m
	}
	names := func(from, to int) []string { // s<to> down to s<from>
		var out []string
		for i := to; i >= from; i-- {
			out = append(out, fmt.Sprintf("s%02d", i))
		}
		return out
	}
	tests := []struct {
		name     string
		src      *memSource
		session  string
		maxDepth int
		want     []string
		cycle    bool
		capped   bool
	}{
		{"alone", (&memSource{}).ex("S", 0, "hi", "hello"), "S", 0, []string{"S"}, false, false},
		{"linear", linear(4), "s03", 0, names(0, 3), false, false},
		{"linear from the middle", linear(4), "s02", 0, names(0, 2), false, false},
		{"depth cap default 100", linear(130), "s129", 0, names(29, 129), false, true},
		{"default reaches 100 links", linear(101), "s100", 0, names(0, 100), false, false},
		{"depth cap 3", linear(30), "s29", 3, names(26, 29), false, true},
		{"depth cap exactly the chain", linear(30), "s29", 29, names(0, 29), false, false},
		{"cycle", (&memSource{}).link("A", "B", 1).link("B", "A", 2), "B", 0, []string{"B", "A"}, true, false},
		{"cycle of three", (&memSource{}).link("A", "B", 1).link("B", "C", 2).link("C", "A", 3), "C", 0, []string{"C", "B", "A"}, true, false},
		{"cycle beyond S", (&memSource{}).link("A", "S", 1).link("B", "A", 2).link("A", "B", 3), "S", 0, []string{"S", "A", "B"}, true, false},
		{
			"resumes two sessions, newest link first",
			(&memSource{}).link("A", "S", 5).link("B", "S", 9).link("A0", "A", 1).link("B0", "B", 2),
			"S", 0, []string{"S", "B", "A", "B0", "A0"}, false, false,
		},
		{
			"two links at the same time: later event first",
			(&memSource{}).link("A", "S", 5).link("B", "S", 5),
			"S", 0, []string{"S", "B", "A"}, false, false,
		},
		{
			"diamond is not a cycle",
			(&memSource{}).link("C", "A", 1).link("C", "B", 2).link("A", "S", 3).link("B", "S", 4),
			"S", 0, []string{"S", "B", "A", "C"}, false, false,
		},
		{
			"missing link: a resumed session with no events",
			(&memSource{}).link("ghost", "S", 1).ex("S", 2, "hi", "hello"),
			"S", 0, []string{"S", "ghost"}, false, false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FollowChain(ctx, tt.src, tt.session, tt.maxDepth)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Sessions, tt.want) || c.Cycle != tt.cycle || c.Capped != tt.capped {
				t.Errorf("chain = %v cycle=%v capped=%v, want %v cycle=%v capped=%v",
					c.Sessions, c.Cycle, c.Capped, tt.want, tt.cycle, tt.capped)
			}
			for i, d := range c.Depth {
				if i > 0 && d < c.Depth[i-1] {
					t.Errorf("depths not breadth-first: %v", c.Depth)
				}
			}
		})
	}
}

// The order of links from the source must not change the chain.
func TestFollowChainIgnoresSourceOrder(t *testing.T) {
	m := (&memSource{}).link("A", "S", 5).link("B", "S", 9).link("C", "S", 7)
	want := []string{"S", "B", "C", "A"}
	for i := 0; i < 3; i++ {
		c, err := FollowChain(ctx, m, "S", 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Sessions, want) {
			t.Fatalf("chain = %v, want %v", c.Sessions, want)
		}
		m.links = append(m.links[1:], m.links[0])
	}
}

// A missing link contributes nothing, and the pack says which sessions it
// drew from.
func TestResumeMissingLink(t *testing.T) {
	m := (&memSource{}).
		ex("A", 0, "set up the parser", "done").
		link("ghost", "A", 1).
		link("A", "S", 2).
		ex("S", 3, "continue", "ok")
	p := build(t, m, Options{Session: "S"})
	if !slices.Equal(p.Chain, []string{"S", "A", "ghost"}) {
		t.Fatalf("chain = %v", p.Chain)
	}
	if len(p.Exchanges) != 1 || p.Exchanges[0].User != "set up the parser" {
		t.Fatalf("exchanges = %+v", p.Exchanges)
	}
}
