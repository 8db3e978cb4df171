package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/embed"
)

// Issue 32 through the binary: answers from the conversation.

// logDecision logs, with `continuity log`, a short session in which a
// database is asked about in one exchange and chosen in the next, among
// unrelated work, and indexes it with the default model.
func logDecision(t *testing.T, w *workspace, env []string) {
	t.Helper()
	for _, x := range [][3]string{
		{"s1", "the tests are flaky on CI, can you look at the retry logic", "I looked at internal/retry: the backoff has no jitter, so parallel jobs collide. I added jitter."},
		{"s1", "we need somewhere to store user accounts and sessions. Options: Postgres, MySQL or SQLite?", "For a single-server deployment SQLite is simplest; Postgres if you expect several app servers and concurrent writes."},
		{"s1", "go with it, the multi server one", "Done: we use Postgres 16. I added the pgx driver, a docker-compose service and migrations under db/migrations."},
		{"s1", "now fix the lint warnings", "Fixed 12 golangci-lint warnings, mostly unused parameters and shadowed err."},
		{"s2", "what color should the login button be", "We settled on the brand blue #1a73e8 for primary buttons."},
	} {
		if _, errs, code := w.cliEnv(env, "log", "--session", x[0], "--user", x[1], "--ai", x[2]); code != 0 {
			t.Fatalf("log: exit %d: %s", code, errs)
		}
	}
	if _, errs, code := w.cliEnv(env, "ingest"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
}

// TestNoFalseNothingCLI (item 3): "which database did we pick", in words
// none of the history holds, shows the closest exchanges marked weak, the
// one asking about the database among them; "nothing found" only for a
// query nothing relates to. Before: "nothing found: no past exchange
// matches these words or their meaning".
func TestNoFalseNothingCLI(t *testing.T) {
	w := newWorkspace(t)
	env := []string{embed.EnvProvider + "=" + embed.ProviderUSELite}
	logDecision(t, w, env)

	out, errs, code := w.cliEnv(env, "search", "which database did we pick")
	if code != 0 || strings.Contains(out, "nothing found") || !strings.Contains(out, "the closest matches, weak") ||
		!strings.Contains(out, "Postgres, MySQL or SQLite") || !strings.Contains(out, "(0.00, weak)") {
		t.Errorf("search: exit %d, stdout:\n%s\nstderr: %s\nwant the closest matches, weak, with the database question", code, out, errs)
	}
	out, _, _ = w.cliEnv(env, "search", "--json", "which database did we pick")
	var resp struct {
		Results []struct {
			User  string  `json:"user"`
			Score float64 `json:"score"`
			Weak  bool    `json:"weak"`
		} `json:"results"`
		Weak bool `json:"weak"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil || !resp.Weak || len(resp.Results) == 0 || !resp.Results[0].Weak {
		t.Errorf("search --json: %v %s; want weak results", err, out)
	}
	out, _, code = w.cliEnv(env, "search", "medieval falconry jesses and hoods")
	if code != 0 || !strings.Contains(out, "nothing found") {
		t.Errorf("a query about nothing in the history: exit %d, %s; want nothing found", code, out)
	}
}

// TestSpanCountCLI (item 5): a question about nothing but a time that
// shows fewer exchanges than its span holds says how many it holds and how
// to see them all, in the text, the JSON and over MCP. Before: the newest
// 10, without a word of the others.
func TestSpanCountCLI(t *testing.T) {
	w := newWorkspace(t)
	for i := range 5 {
		w.shellAppend("a.jsonl", fmt.Sprintf(`{"type":"exchange","id":"e%d","session_id":"s","timestamp":"2026-11-25T1%d:00:00Z","user":"step %d of the release","ai":"ok"}`+"\n", i, i, i))
	}
	w.shellAppend("a.jsonl", `{"type":"exchange","id":"old","session_id":"s","timestamp":"2026-11-20T10:00:00Z","user":"an older step","ai":"ok"}`+"\n")
	if _, errs, code := w.cli("ingest"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	env := []string{"TZ=UTC"}
	out, errs, code := w.cliEnv(env, "search", "--as-of", "2026-11-26T09:00:00Z", "--limit", "2", "what did we do yesterday")
	if code != 0 || !strings.Contains(out, `("yesterday": the exchanges from 2026-11-25 00:00 to 2026-11-26 00:00, newest first: 2 of 5; --limit 5 shows all)`) ||
		strings.Count(out, "step ") != 2 {
		t.Errorf("--limit 2: exit %d\n%s%s", code, out, errs)
	}
	out, _, _ = w.cliEnv(env, "search", "--as-of", "2026-11-26T09:00:00Z", "what did we do yesterday")
	if !strings.Contains(out, "newest first)") || strings.Contains(out, " of 5") || strings.Count(out, "step ") != 5 {
		t.Errorf("all shown, nothing more to say:\n%s", out)
	}
	out, _, _ = w.cliEnv(env, "search", "--json", "--as-of", "2026-11-26T09:00:00Z", "--limit", "2", "what did we do yesterday")
	var resp struct {
		Results       []any `json:"results"`
		SpanExchanges int64 `json:"span_exchanges"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Results) != 2 || resp.SpanExchanges != 5 {
		t.Errorf("--json: %v %s; want 2 results and span_exchanges 5", err, out)
	}
}

// TestSpanCountMCP (item 5): the same over MCP, in words.
func TestSpanCountMCP(t *testing.T) {
	ws := newWorkspace(t)
	m := startMCP(t, ws)
	for i := range 3 {
		var logged map[string]any
		m.ok(t, "log_exchange", map[string]any{"session_id": "s1", "user": fmt.Sprintf("step %d of the release", i), "ai": "done"}, &logged)
	}
	var resp struct {
		Results       []any `json:"results"`
		SpanExchanges int64 `json:"span_exchanges"`
	}
	text := resultText(m.ok(t, "search_conversations", map[string]any{"query": "what did we do over the past 2 days", "limit": 2}, &resp))
	if len(resp.Results) != 2 || resp.SpanExchanges != 3 || !strings.Contains(text, "These are the newest 2 of the 3 exchanges dated in") ||
		!strings.Contains(text, "Call again with limit 3 to see all of them.") {
		t.Errorf("limit 2: %+v, %q", resp, text)
	}
}

// TestSearchContextCLI (item 1): `search --context 1` shows the exchange
// that answers the question found, marked as context, in the text and the
// JSON; over MCP, the context argument does the same. Before: --context was
// an unknown flag.
func TestSearchContextCLI(t *testing.T) {
	w := newWorkspace(t)
	logDecision(t, w, nil)
	out, errs, code := w.cli("search", "--context", "1", "Postgres MySQL SQLite")
	iQ, iCtx, iA := strings.Index(out, "Options: Postgres, MySQL or SQLite?"), strings.Index(out, "- context, 1 after"), strings.Index(out, "go with it, the multi server one")
	if code != 0 || iQ < 0 || iCtx < iQ || iA < iCtx || !strings.Contains(out, "- context, 1 before") {
		t.Errorf("--context 1: exit %d\n%s%s", code, out, errs)
	}
	out, _, _ = w.cli("search", "--json", "--context", "1", "--limit", "1", "Postgres MySQL SQLite")
	var resp struct {
		Results []struct {
			User    string `json:"user"`
			Context []struct {
				Offset int    `json:"offset"`
				User   string `json:"user"`
				Line   int64  `json:"line"`
			} `json:"context"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Results) != 1 || len(resp.Results[0].Context) != 2 ||
		resp.Results[0].Context[1].Offset != 1 || resp.Results[0].Context[1].User != "go with it, the multi server one" || resp.Results[0].Context[1].Line != 3 {
		t.Errorf("--json --context 1: %v\n%s", err, out)
	}
	if _, errs, code := w.cli("search", "--context", "11", "Postgres"); code != 2 || !strings.Contains(errs, "--context 11: want 0 to 10") {
		t.Errorf("--context 11: exit %d, %s", code, errs)
	}

	m := startMCP(t, w)
	var mresp struct {
		Results []struct {
			Context []struct {
				Offset int    `json:"offset"`
				User   string `json:"user"`
			} `json:"context"`
		} `json:"results"`
	}
	m.ok(t, "search_conversations", map[string]any{"query": "Postgres MySQL SQLite", "limit": 1, "context": 1}, &mresp)
	if len(mresp.Results) != 1 || len(mresp.Results[0].Context) != 2 || mresp.Results[0].Context[1].User != "go with it, the multi server one" {
		t.Errorf("MCP context 1: %+v", mresp)
	}
}
