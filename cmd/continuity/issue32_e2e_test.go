package main

import (
	"encoding/json"
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
