package resume

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/analyze"
)

// TestShapeTerms: the query terms a shape finds in each segment are those
// of analyze.Terms over the segment, in the order they first appear there,
// once each, for any query: what scoring summed before shapes were kept.
func TestShapeTerms(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields("the watcher loses events when fsnotify overflows its queue running runs ran parser parsing CamelCase snake_case x1 2024 é Ünïcode 日本語 don't user's a I")
	var texts []string
	for range 300 {
		var b strings.Builder
		for range 1 + r.IntN(400) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString([]string{" ", " ", ". ", "\n", ", ", "\n\n", "! "}[r.IntN(7)])
		}
		texts = append(texts, b.String())
	}
	// One long line: a segment of many terms (past 512 bytes of them).
	var many []string
	for i := range 600 {
		many = append(many, words[r.IntN(len(words))]+strings.Repeat("z", i%7), "watcher")
	}
	texts = append(texts, trickyText(r, 200), "", "```go\nfunc watcher() {}\n```\nthe watcher", strings.Join(many, " "))
	c := counter(t)
	for _, text := range texts {
		d := newShapeDeep(c, text, "", 0)
		for _, joined := range d.terms[0] {
			ts := strings.Split(joined, " ")
			if joined != "" && len(ts) != len(slices.Compact(slices.Sorted(slices.Values(ts)))) {
				t.Fatalf("terms listed twice: %q", joined)
			}
		}
		for range 5 {
			var qw []string
			for range 1 + r.IntN(6) {
				qw = append(qw, words[r.IntN(len(words))])
			}
			q := analyse(strings.Join(qw, " "))
			for i, sp := range d.segs[0] {
				var want []string
				for _, term := range analyze.Terms(text[sp[0]:sp[1]]) {
					if q[term] && !slices.Contains(want, term) {
						want = append(want, term)
					}
				}
				if got := q.in(d.terms[0][i]); !slices.Equal(got, want) {
					t.Fatalf("segment %q, query %v: terms %v, want %v", text[sp[0]:sp[1]], qw, got, want)
				}
			}
		}
	}
}

// FuzzOpenFence: openFence reads fences as split does (the fence split
// leaves open at the end of the text).
func FuzzOpenFence(f *testing.F) {
	for _, s := range []string{"a\n```go\nx := 1", "```\n```", "~~~\n```\n~~~\n", "  ```\n\n\n", "````\n```\n", "x\r\n```\r\n", "```a`b\n", "    ```\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st := split(s)
		var wantClose string
		wantOpen := false
		if n := len(st.segs); n > 0 && st.fenceEnds[n-1].block >= 0 {
			wantClose, wantOpen = st.fenceEnds[n-1].close, true
		}
		if close, open := openFence(s); open != wantOpen || close != wantClose {
			t.Fatalf("%q: openFence %q %v, split %q %v", s, close, open, wantClose, wantOpen)
		}
	})
}
