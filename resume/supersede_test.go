package resume

import (
	"strings"
	"testing"
)

// TestSupersedesNote (issue 22, item 1): when a later exchange asks the
// same question again and answers it differently, the pack says under each
// which supersedes which, within the budget. Before: both answers shown,
// nothing said.
func TestSupersedesNote(t *testing.T) {
	m := (&memSource{}).
		ex("A", 0, "which node version do we use for the frontend build?", "Node 16").
		ex("A", 5, "set up the cache", "done").
		ex("B", 60*24*30, "which node version do we use for the frontend build?", "Node 22 since the upgrade").
		link("A", "B", 60*24*30+1).
		link("B", "S", 60*24*30+2)
	for _, budget := range []int{2000, 120} {
		p := build(t, m, Options{Session: "S", Query: "node version frontend", Budget: budget})
		if p.Tokens > budget {
			t.Fatalf("budget %d: %d tokens", budget, p.Tokens)
		}
		var old, now *Exchange
		for i := range p.Exchanges {
			switch p.Exchanges[i].AI {
			case "Node 16":
				old = &p.Exchanges[i]
			case "Node 22 since the upgrade":
				now = &p.Exchanges[i]
			}
		}
		if old == nil || now == nil {
			if budget == 2000 {
				t.Fatalf("budget %d: both answers not shown:\n%s", budget, p.Text)
			}
			continue
		}
		if old.SupersededBy != now.ID || len(now.Supersedes) != 1 || now.Supersedes[0] != old.ID {
			t.Errorf("budget %d: superseded_by %q, supersedes %v", budget, old.SupersededBy, now.Supersedes)
		}
		if !strings.Contains(p.Text, "Node 16\n[superseded by the answer of 2024-05-31 10:00, below]") ||
			!strings.Contains(p.Text, "Node 22 since the upgrade\n[supersedes the answer of 2024-05-01 10:00, above]") {
			t.Errorf("budget %d: no supersession notes:\n%s", budget, p.Text)
		}
		if strings.Contains(p.Text, "set up the cache\n[") {
			t.Errorf("budget %d: a note under an exchange that supersedes nothing:\n%s", budget, p.Text)
		}
	}
}
