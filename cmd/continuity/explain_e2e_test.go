package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/resume"
)

// TestResumeExplain: `resume --explain` prints the pack, then why each
// exchange of the chain is in it, cut or left out; with --json, the pack's
// "explain" field says the same.
func TestResumeExplain(t *testing.T) {
	w := newWorkspace(t)
	w.shellAppend("old.jsonl", exchangeLine("old", "o1", "why does the build fail on CI?", "cgo needs gcc; install it with apt-get install gcc")+
		exchangeLine("old", "o2", "how do stripe webhooks retry?", "Stripe retries failed webhooks for 3 days with exponential backoff; "+strings.Repeat("make the handler idempotent and log each delivery. ", 40))+
		exchangeLine("old", "o3", "what is for lunch", "pizza"))
	w.shellAppend("new.jsonl", `{"type":"session_resume","previous_session":"old","new_session":"new","timestamp":"2026-11-01T11:00:00Z"}`+"\n"+
		exchangeLine("new", "n1", "continue the webhook work", "ok"))
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	plain, _, _ := w.cli("resume", "--session", "new", "--budget", "300", "--query", "webhook retries")
	out, errs, code := w.cli("resume", "--session", "new", "--budget", "300", "--query", "webhook retries", "--explain")
	if code != 0 {
		t.Fatalf("resume --explain: %d %s", code, errs)
	}
	if !strings.HasPrefix(out, plain) {
		t.Fatalf("--explain changed the pack:\n%s\n---\n%s", plain, out)
	}
	why := out[len(plain):]
	for _, want := range []string{"--- why (resume --explain; not part of the pack) ---", "Budget 300 tokens", "relevant: ranked 1 for the query",
		"cut to", "in context:", "(1 link back) · o2", "- ", "+ "} {
		if !strings.Contains(why, want) {
			t.Errorf("explanation lacks %q:\n%s", want, why)
		}
	}
	js, errs, code := w.cli("resume", "--session", "new", "--budget", "300", "--query", "webhook retries", "--explain", "--json")
	if code != 0 {
		t.Fatalf("resume --explain --json: %d %s", code, errs)
	}
	var pack resume.Pack
	if err := json.Unmarshal([]byte(js), &pack); err != nil || pack.Explain == nil {
		t.Fatalf("--json: %v, explain %v\n%s", err, pack.Explain, js)
	}
	byID := map[string]resume.Decision{}
	for _, d := range pack.Explain.Decisions {
		byID[d.ID] = d
	}
	if d := byID["o2"]; !d.Included || d.Reason != resume.ReasonRelevant || d.Rank != 1 || !d.Truncated || d.Depth != 1 {
		t.Errorf("o2: %+v", d)
	}
	if d := byID["n1"]; d.Included || d.Reason != resume.ReasonInContext {
		t.Errorf("n1: %+v", d)
	}
	js, _, _ = w.cli("resume", "--session", "new", "--json")
	if strings.Contains(js, `"explain"`) {
		t.Error("an explanation nobody asked for")
	}
}
