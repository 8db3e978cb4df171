package resume

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 22, item 6: a resume cuts what is long, never what is short.

// bigAnswerChain is a session whose middle exchange has a short prompt and
// an answer of ~90 KB, mostly near-identical log lines with one that
// matters; its files name one file twice (absolute and relative).
func bigAnswerChain() (*memSource, map[string][2]string) {
	var lines []string
	for k := range 900 {
		lines = append(lines, fmt.Sprintf("- checked ledger batch %d: reconciliation ok, no partial refunds pending, idempotency key present", k))
	}
	key := "The real fix: partial refunds must carry the original charge's idempotency key plus a refund counter, otherwise reconciliation double-counts them."
	lines = append(lines[:450], append([]string{key}, lines[450:]...)...)
	long := strings.Repeat("We looked at the export path and the VAT rounding rules of each country. ", 4) // ~290 characters
	m := &memSource{}
	m.ex("S", 0, long[:len(long)-2]+"?", "Round per line item, then sum. Ok. Fine. The tax authority wants per-line rounding, and the totals must match the invoice PDF to the cent.", "/home/u/proj/billing/vat.py")
	m.ex("S", 60, "Look into the refund reconciliation mismatch.", strings.Join(lines, "\n"),
		"billing/refunds.py", "/home/u/proj/billing/refunds.py", "billing/refunds.py", "./billing/vat.py")
	m.ex("S", 120, "ok thanks", "You're welcome.")
	m.reset("S", 130)
	texts := map[string][2]string{}
	for _, e := range m.events {
		texts[e.EventID] = [2]string{e.User, e.AI}
	}
	return m, texts
}

// markerGaps returns, for each marker of a cut text, the original text it
// stands for (the text between the kept pieces around it), or false when
// the kept pieces are not found in order in the original.
func markerGaps(orig, shown string) ([]string, bool) {
	pieces := MarkerRE().Split(shown, -1)
	var gaps []string
	pos := 0
	for i, piece := range pieces {
		piece = strings.TrimSpace(piece)
		at := len(orig)
		if piece != "" {
			j := strings.Index(orig[pos:], piece)
			if j < 0 {
				return nil, false
			}
			at = pos + j
		}
		if i > 0 {
			gaps = append(gaps, orig[pos:at])
		}
		if piece != "" {
			pos = at + len(piece)
		}
	}
	return gaps, true
}

func TestResumeCuts(t *testing.T) {
	m, texts := bigAnswerChain()
	c := counter(t)
	for _, query := range []string{"", "partial refunds idempotency reconciliation"} {
		for _, budget := range []int{150, 200, 250, 400, 600, 1000, 1500, 3000} {
			t.Run(fmt.Sprintf("%d/%q", budget, query), func(t *testing.T) {
				p := build(t, m, Options{Session: "S", Budget: budget, Query: query})
				for _, e := range p.Exchanges {
					orig := texts[e.ID]
					// A prompt under ~300 characters is never cut.
					if utf8.RuneCountInString(orig[0]) <= shortPrompt && e.User != orig[0] {
						t.Errorf("%s: prompt of %d characters cut to %q", e.ID, utf8.RuneCountInString(orig[0]), e.User)
					}
					// An exchange shows more than markers.
					if strings.TrimSpace(StripMarkers(e.User)+StripMarkers(e.AI)) == "" {
						t.Errorf("%s: nothing but markers: %q / %q", e.ID, e.User, e.AI)
					}
					// A marker never costs more than the text it stands for.
					for side, shown := range [2]string{e.User, e.AI} {
						gaps, ok := markerGaps(orig[side], shown)
						if !ok {
							t.Errorf("%s: the kept text is not the original's, in order: %q", e.ID, shown)
							continue
						}
						for _, g := range gaps {
							m := marker(utf8.RuneCountInString(g))
							if c.Count(strings.TrimSpace(g)) <= c.Count(m) {
								t.Errorf("%s: %q stands for %q, which costs no more", e.ID, m, g)
							}
						}
					}
					// The line that matters is among what a query keeps.
					if query != "" && budget >= 400 && strings.HasPrefix(e.User, "Look into") &&
						!strings.Contains(e.AI, "The real fix") {
						t.Errorf("the answer's relevant line is cut:\n%s", p.Text)
					}
				}
				// Each file once, by its shortest name.
				seen := map[string]bool{}
				for _, f := range p.Files {
					base := f[strings.LastIndexByte(f, '/')+1:]
					if seen[base] || strings.HasPrefix(f, "/") || strings.HasPrefix(f, "./") {
						t.Errorf("files %q: %s listed twice or not by its short name", p.Files, f)
					}
					seen[base] = true
				}
				if budget >= 1000 && len(p.Exchanges) < 3 {
					t.Errorf("%d exchanges shown at a budget of %d:\n%s", len(p.Exchanges), budget, p.Text)
				}
			})
		}
	}
}

// TestCheapGapsKept: a marker never stands for text that costs no more
// than itself; between kept pieces, and at the ends, such text stays.
func TestCheapGapsKept(t *testing.T) {
	c := counter(t)
	long := strings.Repeat("Unrelated notes about the deployment schedule and the staging database.\n", 8)
	const a, b = "Rounding goes per line item.\n", "The invoice PDF must match.\n"
	for _, tc := range []struct {
		name string
		text string
		want string // the kept lines a, b, and what lies between, as shown
	}{
		{"short line between", a + "ok, fine\n" + b + long, a + "ok, fine\n" + b + marker(len(long))},
		{"short line before", "ok\n" + a + b + long, "ok\n" + a + b + marker(len(long))},
		{"short line after", long + a + b + "thanks!", marker(len(long)) + "\n" + a + b + "thanks!"},
		{"long text between", a + long + b, a + marker(len(long)) + "\n" + strings.TrimSpace(b)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := split(tc.text)
			var kept []segment
			for i, sp := range st.segs {
				if line := tc.text[sp[0]:sp[1]]; line == a || line == b {
					kept = append(kept, segment{side: 1, idx: i, start: sp[0], end: sp[1]})
				}
			}
			_, got := assemble([2]sideText{split(""), st}, kept, nil, c)
			if want := strings.TrimSpace(tc.want); got != want {
				t.Errorf("\ngot  %q\nwant %q", got, want)
			}
		})
	}
}

// TestRepeatsLast: near-identical lines come after the others (a query
// naming what sets one apart brings it back).
func TestRepeatsLast(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "worker %d: heartbeat received, queue depth normal, no retries needed\n", i)
	}
	b.WriteString("Root cause: the scheduler skipped the retry queue after a leader election.\n")
	for i := 200; i < 400; i++ {
		fmt.Fprintf(&b, "worker %d: heartbeat received, queue depth normal, no retries needed\n", i)
	}
	for _, tc := range []struct{ query, want string }{
		{"", "Root cause: the scheduler skipped"},
		{"retry queue", "Root cause: the scheduler skipped"},
		{"worker 317 heartbeat", "worker 317: heartbeat"},
	} {
		c := &cutter{counter: counter(t), query: analyse(tc.query)}
		cx, ok := c.cut(exRef{stamp: "10:00", user: "why did the jobs stall?", ai: b.String()}, 150)
		if !ok || !strings.Contains(cx.ai, tc.want) {
			t.Errorf("%q: %q missing:\n%s", tc.query, tc.want, cx.ai)
		}
		if n := strings.Count(cx.ai, "heartbeat received"); n > 3 && tc.query != "worker 317 heartbeat" {
			t.Errorf("%q: %d near-identical lines kept before the one that differs:\n%s", tc.query, n, cx.ai)
		}
	}
}
