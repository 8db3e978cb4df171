package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// mcpRaw runs `continuity mcp` on the workspace with stdin the given
// lines, then closed (as `printf ... | continuity mcp`), and returns the
// messages it wrote, its stderr and exit code.
func mcpRaw(t *testing.T, w *workspace, lines []string) ([]map[string]any, string, int) {
	t.Helper()
	cmd := exec.Command(binPath, "mcp", "--root", w.root)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("continuity mcp did not exit once its stdin ended; stderr:\n%s", errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %s", err, sc.Text())
		}
		msgs = append(msgs, m)
	}
	return msgs, errb.String(), code
}

const mcpInit = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestMCPMalformedInput: lines on the MCP server's stdin that are not
// JSON-RPC messages (plain text, a truncated request, JSON of another
// kind) are each answered with an error (-32700 parse error, -32600
// invalid request) and the server goes on serving; a client that writes
// its requests and closes stdin gets every answer. Before, `not json`
// ended the server (exit 1) without an answer, and of 18 requests with
// one bad line 2 answers came back.
func TestMCPMalformedInput(t *testing.T) {
	w := newWorkspace(t)
	w.shellAppend("s1.jsonl", exchangeLine("s1", "e1", "Sessions or JWT for the login flow?", "sessions, with a cookie"))
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	call := func(id int, tool string, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	}
	t.Run("errors answered, serving goes on", func(t *testing.T) {
		lines := []string{
			mcpInit,
			`not json`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_ses`, // truncated
			`{"id":3,"hello":"world"}`,                                                 // JSON, not JSON-RPC
			`[1,2]`,
			``,
			`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
			call(5, "search_conversations", `{"query":"JWT login"}`),
		}
		msgs, errs, code := mcpRaw(t, w, lines)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, errs)
		}
		byID := map[string]map[string]any{}
		var nullIDs []map[string]any
		for _, m := range msgs {
			if m["id"] == nil {
				nullIDs = append(nullIDs, m)
				continue
			}
			byID[fmt.Sprint(m["id"])] = m
		}
		if len(nullIDs) != 3 {
			t.Errorf("%d answers with id null, want 3 (not json, truncated, batch): %v", len(nullIDs), nullIDs)
		}
		codes := map[float64]int{}
		for _, m := range nullIDs {
			e, _ := m["error"].(map[string]any)
			c, _ := e["code"].(float64)
			codes[c]++
		}
		if codes[-32700] != 2 || codes[-32600] != 1 {
			t.Errorf("error codes of the null-id answers: %v, want two -32700 and one -32600", codes)
		}
		if e, _ := byID["3"]["error"].(map[string]any); e == nil || e["code"] != float64(-32600) {
			t.Errorf("the JSON that is not JSON-RPC (id 3): %v", byID["3"])
		}
		for _, id := range []string{"init", "4", "5"} {
			if byID[id]["result"] == nil {
				t.Errorf("no result for request %s: %v", id, byID[id])
			}
		}
		if res, _ := json.Marshal(byID["5"]); !strings.Contains(string(res), "Sessions or JWT") {
			t.Errorf("the search after the bad lines: %s", res)
		}
		if !strings.Contains(errs, "not a JSON-RPC message") || strings.Contains(errs, "daemon does not answer") {
			t.Errorf("stderr:\n%s", errs)
		}
	})
	t.Run("18 requests, one bad line", func(t *testing.T) {
		lines := []string{mcpInit, `{"jsonrpc":"2.0","method":"notifications/initialized"}`}
		for i := 1; i <= 17; i++ {
			if i == 9 {
				lines = append(lines, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search_conv`)
				continue
			}
			switch i % 3 {
			case 0:
				lines = append(lines, call(i, "list_sessions", `{}`))
			case 1:
				lines = append(lines, call(i, "search_conversations", `{"query":"login flow"}`))
			default:
				lines = append(lines, call(i, "resume_context", `{"session_id":"s1","budget":500}`))
			}
		}
		msgs, errs, code := mcpRaw(t, w, lines)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, errs)
		}
		results, parseErrors := 0, 0
		for _, m := range msgs {
			switch {
			case m["result"] != nil:
				results++
			case m["id"] == nil:
				parseErrors++
			}
		}
		if results != 17 || parseErrors != 1 {
			t.Errorf("%d results (want 17: the initialize and 16 tool calls) and %d parse errors (want 1); stderr:\n%s", results, parseErrors, errs)
		}
	})
}
