package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/mcpserver"
	wspace "github.com/praxis-os/continuity/workspace"
)

// TestLogRetrySameID: 'continuity log --id X' and MCP's log_exchange with
// an id, retried (the idempotency key's purpose), give the first line back
// instead of writing a second one, which a fresh timestamp made "an id
// reused with other content" (a producer's bug to status and doctor);
// other content under the id is refused. One line per id in the file.
func TestLogRetrySameID(t *testing.T) {
	t.Setenv(logformat.MachineEnv, "m")
	root := t.TempDir()
	logs := filepath.Join(root, ".praxis-os", ".conversations")
	args := []string{"--root", root, "log", "--session", "r", "--id", "retry-1", "--user", "same", "--ai", "same"}
	first, errs, code := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("log: %d %s", code, errs)
	}
	again, errs, code := runCLI(t, "", args...)
	if code != 0 || again != first || !strings.Contains(errs, "already logged at ") || !strings.Contains(errs, "not written again") {
		t.Errorf("log retried: exit %d\nstdout %s (first %s)\nstderr %s", code, again, first, errs)
	}
	if _, errs, code := runCLI(t, "", "--root", root, "log", "--session", "r", "--id", "retry-1", "--user", "other"); code != 2 || !strings.Contains(errs, `id "retry-1" is already used by another event at session-r~m.jsonl:1`) {
		t.Errorf("log with a used id and other content: exit %d: %s", code, errs)
	}

	p := wspace.At(root)
	for i := range 2 {
		out, err := mcpserver.AppendEvent(p, logformat.Request{Type: logformat.TypeExchange, Session: "r", ID: "mcp-1", User: "q", AI: "a"})
		if err != nil || out.ID != "mcp-1" {
			t.Fatalf("MCP log_exchange #%d: %+v, %v", i+1, out, err)
		}
	}
	if _, err := mcpserver.AppendEvent(p, logformat.Request{Type: logformat.TypeExchange, Session: "r", ID: "mcp-1", User: "other"}); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("MCP log_exchange with a used id and other content: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(logs, "session-r~m.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != 2 {
		t.Errorf("%d lines written, want 2 (one per id):\n%s", n, data)
	}
}
