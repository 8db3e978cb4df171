package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/mcpserver"
	"github.com/praxis-os/continuity/server"
)

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mcpProc is a `continuity mcp` process and the SDK client session talking
// to it over its stdin and stdout.
type mcpProc struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *lockedBuffer
}

// startMCP runs `continuity mcp --root ws` and connects the SDK's client to
// it over a real stdio pipe (initialize included).
func startMCP(t *testing.T, ws *workspace) *mcpProc {
	t.Helper()
	cmd := exec.Command(binPath, "mcp", "--root", ws.root, "--log-level", "debug")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "continuity-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit(10*time.Second))
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to continuity mcp: %v\nstderr:\n%s", err, stderr)
	}
	m := &mcpProc{cs: cs, cmd: cmd, stderr: stderr}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("continuity mcp stderr:\n%s", stderr)
		}
	})
	return m
}

// call calls a tool; a protocol error fails the test.
func (m *mcpProc) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit(15*time.Second))
	defer cancel()
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured output.
func (m *mcpProc) ok(t *testing.T, name string, args, out any) *mcp.CallToolResult {
	t.Helper()
	res := m.call(t, name, args)
	if res.IsError {
		t.Fatalf("call %s(%v): tool error: %s", name, args, resultText(res))
	}
	if out != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("call %s: structured output %s: %v", name, data, err)
		}
	}
	return res
}

// fails calls a tool that must answer with a tool error mentioning want.
func (m *mcpProc) fails(t *testing.T, name string, args any, want string) {
	t.Helper()
	res := m.call(t, name, args)
	if !res.IsError {
		t.Fatalf("call %s(%v): want a tool error, got %s", name, args, resultText(res))
	}
	if !strings.Contains(resultText(res), want) {
		t.Errorf("call %s(%v): error %q does not mention %q", name, args, resultText(res), want)
	}
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func (m *mcpProc) sessions(t *testing.T) engine.SessionsResponse {
	t.Helper()
	var resp engine.SessionsResponse
	m.ok(t, "list_sessions", map[string]any{}, &resp)
	return resp
}

func (m *mcpProc) exchanges(t *testing.T, session string) int64 {
	t.Helper()
	for _, s := range m.sessions(t).Sessions {
		if s.ID == session {
			return s.Exchanges
		}
	}
	return 0
}

// TestMCPServer drives `continuity mcp` with the SDK's client over stdio:
// the tools and their schemas, each call, malformed calls (tool errors,
// the server goes on), and in-process indexing when no daemon runs.
func TestMCPServer(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	// An earlier session, already on disk: indexed when the server starts.
	ws.appendRaw("session-old.jsonl", []byte(exchangeLine("old", "o1", "how do we build the parser?", "with the zebrafish grammar")))
	m := startMCP(t, ws)

	init := m.cs.InitializeResult()
	if init.ServerInfo.Name != "continuity" || init.ServerInfo.Version != engine.Version {
		t.Errorf("server info %+v, want continuity %s", init.ServerInfo, engine.Version)
	}
	if init.Instructions == "" {
		t.Error("no instructions for the agent")
	}

	// The tools: each with a description saying when to call it, and an
	// object input schema with its required arguments.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit(10*time.Second))
	defer cancel()
	lt, err := m.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"log_exchange":       {"session_id", "user", "ai"},
		"log_context_reset":  {"session_id"},
		"log_session_resume": {"previous_session", "new_session"},
		"resume_context":     nil,
		"list_sessions":      nil,
	}
	want["search_conversations"] = []string{"query"}
	got := map[string]bool{}
	for _, tool := range lt.Tools {
		got[tool.Name] = true
		req, known := want[tool.Name]
		if !known {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		if len(tool.Description) < 80 || !strings.Contains(tool.Description, "Call it") {
			t.Errorf("tool %s: description does not say when to call it: %q", tool.Name, tool.Description)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" {
			t.Errorf("tool %s: input schema %s", tool.Name, schema)
		}
		for _, r := range req {
			if !strings.Contains(strings.Join(s.Required, ","), r) {
				t.Errorf("tool %s: %q not required in %s", tool.Name, r, schema)
			}
		}
		for name, prop := range s.Properties {
			if !strings.Contains(string(prop), `"description"`) {
				t.Errorf("tool %s: argument %s has no description", tool.Name, name)
			}
		}
		if tool.OutputSchema == nil {
			t.Errorf("tool %s: no output schema", tool.Name)
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("tool %s missing", name)
		}
	}

	// log_exchange: the same writer as `continuity log`; text that breaks
	// naive JSON writers survives byte for byte.
	user := "why does \"go build\" fail?\n\tC:\\path\\x — 日本語 🚀 $(echo no) `x`"
	ai := "cgo needs gcc: apt install gcc\nthen rerun.\\n is not a newline"
	var logged mcpserver.LogOut
	m.ok(t, "log_exchange", map[string]any{
		"session_id": "s1", "user": user, "ai": ai,
		"files": []string{"go.mod"}, "metadata": map[string]any{"model": "test", "n": 1},
	}, &logged)
	if logged.ID == "" || logged.SessionID != "s1" || logged.File != filepath.Join(".praxis-os", ".conversations", "session-s1~m1.jsonl") {
		t.Fatalf("log_exchange answered %+v", logged)
	}
	data, err := os.ReadFile(filepath.Join(ws.root, logged.File))
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Type, ID, User, AI string
		SessionID          string          `json:"session_id"`
		Files              []string        `json:"files"`
		Metadata           json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(data, &line); err != nil || strings.Count(string(data), "\n") != 1 {
		t.Fatalf("log line %q: %v", data, err)
	}
	if line.Type != "exchange" || line.ID != logged.ID || line.User != user || line.AI != ai || line.SessionID != "s1" ||
		len(line.Files) != 1 || string(line.Metadata) != `{"model":"test","n":1}` {
		t.Errorf("log line %s does not hold what was logged", data)
	}

	// The in-process daemon indexes it.
	eventually(t, 10*time.Second, "s1 indexed by the MCP server's in-process daemon", func() bool { return m.exchanges(t, "s1") == 1 })
	if !strings.Contains(m.stderr.String(), "indexing in-process") {
		t.Errorf("the MCP server did not index in-process; stderr:\n%s", m.stderr)
	}
	ss := m.sessions(t)
	if len(ss.Sessions) != 2 || ss.Sessions[0].ID != "old" {
		t.Errorf("list_sessions: %+v", ss)
	}

	// Never two writers: a daemon started now finds the lock taken.
	if _, errs, code := ws.cli("daemon"); code == 0 || !strings.Contains(errs, "lock") {
		t.Errorf("a daemon started while the MCP server indexes: exit %d, %s", code, errs)
	}

	// resume_context: the latest session in full (a new session has none
	// of it in its window), and an explicit session with a query.
	var pack struct {
		SessionID string `json:"session_id"`
		Text      string `json:"text"`
		Exchanges []struct {
			User string `json:"user"`
		} `json:"exchanges"`
	}
	res := m.ok(t, "resume_context", map[string]any{"latest": true}, &pack)
	if pack.SessionID != "s1" || len(pack.Exchanges) != 1 || !strings.Contains(resultText(res), "日本語") {
		t.Errorf("resume_context latest: %+v\n%s", pack, resultText(res))
	}
	// The command line's --latest means the same: the same pack.
	if out, errs, code := ws.cli("resume", "--latest"); code != 0 || out != resultText(res) {
		t.Errorf("resume --latest on the command line differs from MCP's (exit %d, %s):\n%s\nMCP:\n%s", code, errs, out, resultText(res))
	}
	ws.appendRaw("session-s2.jsonl", []byte(`{"type":"session_resume","previous_session":"old","new_session":"s2"}`+"\n"))
	eventually(t, 10*time.Second, "the resume link indexed", func() bool {
		for _, s := range m.sessions(t).Sessions {
			if s.ID == "s2" {
				return true
			}
		}
		return false
	})
	res = m.ok(t, "resume_context", map[string]any{"session_id": "s2", "query": "parser", "budget": 500}, &pack)
	if !strings.Contains(resultText(res), "zebrafish") || pack.Text != "" {
		t.Errorf("resume_context s2 does not bring back the resumed session:\n%s", resultText(res))
	}

	checkMCPSearch(t, m)

	// Malformed calls are tool errors; the server answers the next call.
	m.fails(t, "log_exchange", map[string]any{"session_id": "s1", "user": "no answer"}, "ai")
	m.fails(t, "log_exchange", map[string]any{"session_id": "s1", "user": 42, "ai": "x"}, "user")
	m.fails(t, "log_exchange", map[string]any{"session_id": "bad id/..", "user": "u", "ai": "a"}, "session")
	m.fails(t, "log_exchange", map[string]any{"session_id": "", "user": "u", "ai": "a"}, "session")
	m.fails(t, "log_exchange", map[string]any{"session_id": "s1", "user": "u", "ai": "a", "bogus": true}, "bogus")
	m.fails(t, "resume_context", map[string]any{"session_id": "nope"}, "unknown session")
	m.fails(t, "search_conversations", map[string]any{"query": "parser", "session": "nope"}, `unknown session "nope"`)
	m.fails(t, "resume_context", map[string]any{}, "session_id")
	m.fails(t, "resume_context", map[string]any{"session_id": "s1", "latest": true}, "not both")
	m.fails(t, "resume_context", map[string]any{"session_id": "s1", "budget": -3}, "budget")
	m.fails(t, "resume_context", map[string]any{"latest": "yes"}, "latest")
	if _, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err == nil {
		t.Error("calling an unknown tool: no error")
	}
	if n := m.exchanges(t, "s1"); n != 1 {
		t.Errorf("after the malformed calls: s1 has %d exchanges, want 1 (nothing logged by a failed call)", n)
	}
	if m.cmd.ProcessState != nil {
		t.Fatal("the MCP server exited")
	}

	// stdout carried the protocol only: the SDK client would have failed on
	// anything else. Closing stdin ends the server cleanly, lock released.
	if err := m.cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if m.cmd.ProcessState == nil || !m.cmd.ProcessState.Success() {
		t.Errorf("the MCP server did not exit cleanly: %v", m.cmd.ProcessState)
	}
	if _, err := os.Stat(server.SocketPath(filepath.Join(ws.root, ".praxis-os", ".cache", "continuity"))); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// TestMCPDefersToDaemon: with a daemon already serving the workspace, the
// MCP server does not take the lock, answers through the daemon's socket,
// and takes over the indexing when the daemon exits.
func TestMCPDefersToDaemon(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	d := ws.startDaemon()
	sock := server.SocketPath(filepath.Join(ws.root, ".praxis-os", ".cache", "continuity"))
	eventually(t, 10*time.Second, "the daemon's socket", func() bool { _, err := os.Stat(sock); return err == nil })

	m := startMCP(t, ws)
	var logged mcpserver.LogOut
	m.ok(t, "log_exchange", map[string]any{"session_id": "d1", "user": "first", "ai": "indexed by the daemon"}, &logged)
	eventually(t, 10*time.Second, "d1 indexed by the daemon", func() bool { return m.exchanges(t, "d1") == 1 })
	d.alive(t)
	if s := m.stderr.String(); strings.Contains(s, "indexing in-process") || !strings.Contains(s, "another process indexes") {
		t.Errorf("the MCP server did not defer to the daemon; stderr:\n%s", s)
	}
	// The daemon's log reaches the test through a pipe, copied by another
	// goroutine: the line can come after the answer. Wait for it.
	deadline := time.Now().Add(waitLimit(5 * time.Second))
	for !strings.Contains(d.stderr.String(), "name=sessions") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(d.stderr.String(), "name=sessions") {
		t.Errorf("list_sessions was not answered through the daemon; daemon stderr:\n%s", d.stderr)
	}

	// The daemon goes away: the MCP server takes over within mcpserver.Takeover.
	d.stop(t)
	m.ok(t, "log_exchange", map[string]any{"session_id": "d1", "user": "second", "ai": "indexed by the MCP server"}, nil)
	eventually(t, 3*mcpserver.Takeover+5*time.Second, "the MCP server takes over indexing", func() bool { return m.exchanges(t, "d1") == 2 })
	if !strings.Contains(m.stderr.String(), "indexing in-process") {
		t.Errorf("no takeover in the MCP server's log:\n%s", m.stderr)
	}
}

// TestMCPConfigSnippet starts the server exactly as the .mcp.json recipe
// says, from the project folder (no --root): the workspace is found from
// the current directory.
func TestMCPConfigSnippet(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(recipesDir, "claude-code", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	entry, ok := cfg.MCPServers["continuity"]
	if !ok || entry.Command != "continuity" {
		t.Fatalf("mcp.json: %+v", cfg)
	}
	ws := newWorkspace(t)
	sub := filepath.Join(ws.root, "src", "pkg")
	os.MkdirAll(sub, 0o755)
	cmd := exec.Command(filepath.Join(filepath.Dir(binPath), entry.Command), entry.Args...)
	cmd.Dir = sub
	client := mcp.NewClient(&mcp.Implementation{Name: "continuity-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit(10*time.Second))
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "log_exchange", Arguments: map[string]any{"session_id": "cfg", "user": "u", "ai": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("log_exchange: %s", resultText(res))
	}
	if _, err := os.Stat(filepath.Join(ws.logs, "session-cfg~m1.jsonl")); err != nil {
		t.Errorf("not logged in the workspace found from the current directory: %v", err)
	}
}

// checkMCPSearch: search_conversations finds what was logged, with its
// filters; bad filters are tool errors.
func checkMCPSearch(t *testing.T, m *mcpProc) {
	t.Helper()
	type result struct {
		ID        string  `json:"id"`
		SessionID string  `json:"session_id"`
		User      string  `json:"user"`
		AI        string  `json:"ai"`
		Score     float64 `json:"score"`
		File      string  `json:"file"`
		Line      int64   `json:"line"`
	}
	var resp struct {
		Query   string   `json:"query"`
		Results []result `json:"results"`
	}
	m.ok(t, "search_conversations", map[string]any{"query": "zebrafish grammar"}, &resp)
	if len(resp.Results) == 0 || resp.Results[0].SessionID != "old" || resp.Results[0].ID != "o1" ||
		!strings.Contains(resp.Results[0].AI, "zebrafish") || resp.Results[0].File != "session-old.jsonl" || resp.Results[0].Line != 1 {
		t.Errorf("search zebrafish: %+v", resp)
	}
	m.ok(t, "search_conversations", map[string]any{"query": "gcc build", "session": "s1", "limit": 5}, &resp)
	if len(resp.Results) != 1 || resp.Results[0].SessionID != "s1" {
		t.Errorf("search gcc in s1: %+v", resp)
	}
	// Filters: hybrid search may return weak matches, but only from the
	// sessions asked for.
	m.ok(t, "search_conversations", map[string]any{"query": "zebrafish", "chain": "s2"}, &resp)
	if len(resp.Results) != 1 || resp.Results[0].SessionID != "old" {
		t.Errorf("search zebrafish in the chain of s2: %+v", resp)
	}
	m.ok(t, "search_conversations", map[string]any{"query": "zebrafish", "session": "s1"}, &resp)
	for _, r := range resp.Results {
		if r.SessionID != "s1" {
			t.Errorf("search zebrafish in s1 found %+v", r)
		}
	}
	m.ok(t, "search_conversations", map[string]any{"query": "zebrafish", "since": "2099-01-01"}, &resp)
	if len(resp.Results) != 0 || resp.Results == nil {
		t.Errorf("search zebrafish since 2099: %+v", resp)
	}
	// Nothing found: said in words, with an empty list.
	res := m.ok(t, "search_conversations", map[string]any{"query": "quantum entanglement photosynthesis"}, &resp)
	if len(resp.Results) != 0 || !strings.Contains(resultText(res), "Nothing found") || !strings.Contains(resultText(res), "do not assume it was discussed") {
		t.Errorf("search nonsense: %+v, text %q", resp, resultText(res))
	}
	// Weak matches: shown, and said to be weak (issue 22, item 11).
	var weak struct {
		Weak    bool `json:"weak"`
		Results []struct {
			ID    string  `json:"id"`
			Score float64 `json:"score"`
			Weak  bool    `json:"weak"`
		} `json:"results"`
	}
	res = m.ok(t, "search_conversations", map[string]any{"query": "zebrafish quantum entanglement photosynthesis tardigrade cryptobiosis bromeliad"}, &weak)
	if !weak.Weak || len(weak.Results) == 0 || !weak.Results[0].Weak || weak.Results[0].ID != "o1" ||
		!strings.Contains(resultText(res), "Weak matches only") {
		t.Errorf("search weak: %+v, text %q", weak, resultText(res))
	}
	m.ok(t, "search_conversations", map[string]any{"query": "zebrafish", "min_score": 0}, &resp)
	if len(resp.Results) == 0 {
		t.Errorf("search zebrafish, min_score 0: %+v", resp)
	}
	m.fails(t, "search_conversations", map[string]any{"query": "x", "min_score": 1.5}, "min score")
	// A span in words bounds a search as a date does.
	m.ok(t, "search_conversations", map[string]any{"query": "zebrafish", "since": "last week", "min_score": 0}, &resp)
	if len(resp.Results) == 0 {
		t.Errorf("search zebrafish since last week: %+v", resp)
	}
	m.fails(t, "search_conversations", map[string]any{"query": "x", "since": "soonish"}, "since")
	m.fails(t, "search_conversations", map[string]any{"query": "x", "limit": 100000}, "limit")
	m.fails(t, "search_conversations", map[string]any{"query": "  "}, "query")
	m.fails(t, "search_conversations", map[string]any{"limit": 3}, "query")
}

// TestMCPChainLinks: through MCP alone, exchanges in A, a context reset in
// A and a resume link A -> B make resume_context for B bring back A's
// decision.
func TestMCPChainLinks(t *testing.T) {
	ws := newWorkspace(t)
	m := startMCP(t, ws)
	m.ok(t, "log_exchange", map[string]any{"session_id": "A", "user": "which queue library?",
		"ai": "Decision: we use the durable queue in SQLite (table jobs), not Redis, to keep one dependency."}, nil)
	m.ok(t, "log_exchange", map[string]any{"session_id": "A", "user": "add retries", "ai": "Retries added with backoff."}, nil)
	var out mcpserver.LogOut
	m.ok(t, "log_context_reset", map[string]any{"session_id": "A", "reason": "compacted"}, &out)
	if out.ID == "" || out.SessionID != "A" || len(out.Timestamp) != len("2026-01-02T15:04:05Z") {
		t.Errorf("log_context_reset answered %+v", out)
	}
	m.ok(t, "log_session_resume", map[string]any{"previous_session": "A", "new_session": "B"}, &out)
	m.ok(t, "log_session_resume", map[string]any{"previous_session": "A", "new_session": "B"}, nil) // idempotent
	m.ok(t, "log_exchange", map[string]any{"session_id": "B", "user": "continue", "ai": "ok"}, nil)
	m.fails(t, "log_session_resume", map[string]any{"previous_session": "A", "new_session": "A"}, "same")
	m.fails(t, "log_session_resume", map[string]any{"previous_session": "A"}, "new_session")
	m.fails(t, "log_context_reset", map[string]any{"session_id": ""}, "session_id")
	eventually(t, 10*time.Second, "B indexed with its link", func() bool {
		for _, s := range m.sessions(t).Sessions {
			if s.ID == "B" && len(s.Resumes) == 1 && s.Resumes[0] == "A" {
				return true
			}
		}
		return false
	})
	var pack struct {
		Chain []string `json:"chain"`
	}
	res := m.ok(t, "resume_context", map[string]any{"session_id": "B", "query": "queue library"}, &pack)
	if !strings.Contains(resultText(res), "durable queue in SQLite") {
		t.Errorf("resume_context B lacks A's decision:\n%s", resultText(res))
	}
	if len(pack.Chain) != 2 || pack.Chain[1] != "A" {
		t.Errorf("chain %v, want [B A]", pack.Chain)
	}
	data, _ := os.ReadFile(filepath.Join(ws.logs, "session-B~m1.jsonl"))
	if n := strings.Count(string(data), `"type":"session_resume"`); n != 1 {
		t.Errorf("%d session_resume lines written, want 1 (the repeat, same id, is not written again: its new timestamp made it an id reused with other content)", n)
	}
	for _, s := range m.sessions(t).Sessions {
		if s.ID == "A" && s.Resets != 1 {
			t.Errorf("A has %d resets, want 1", s.Resets)
		}
	}
}

// TestMCPLightAnswers: payloads are not repeated between content and
// structured content beyond the JSON text the MCP specification asks for,
// times are to the second, and errors name tool arguments, never flags.
func TestMCPLightAnswers(t *testing.T) {
	ws := newWorkspace(t)
	m := startMCP(t, ws)
	long := strings.Repeat("the parser keeps offsets in one transaction. ", 40)
	m.ok(t, "log_exchange", map[string]any{"session_id": "L", "user": "how do offsets work?", "ai": long}, nil)
	eventually(t, 10*time.Second, "L indexed", func() bool { return m.exchanges(t, "L") == 1 })
	res := m.ok(t, "resume_context", map[string]any{"latest": true}, nil)
	structured, _ := json.Marshal(res.StructuredContent)
	if strings.Contains(string(structured), "offsets in one transaction") {
		t.Errorf("resume_context repeats the pack's text in structured content: %s", structured)
	}
	if !strings.Contains(resultText(res), "offsets in one transaction") {
		t.Errorf("resume_context text lacks the exchange")
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{{"list_sessions", map[string]any{}}, {"search_conversations", map[string]any{"query": "offsets"}}} {
		res := m.ok(t, call.name, call.args, nil)
		structured, _ := json.Marshal(res.StructuredContent)
		text := resultText(res)
		if len(res.Content) != 1 || len(text) > len(structured)+16 {
			t.Errorf("%s: %d content blocks, %d bytes of text for %d of structured content", call.name, len(res.Content), len(text), len(structured))
		}
		if regexp.MustCompile(`T\d\d:\d\d:\d\d\.\d`).Match(structured) {
			t.Errorf("%s: times finer than the second: %s", call.name, structured)
		}
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"search_conversations", map[string]any{"query": "x", "since": "soonish"}},
		{"resume_context", map[string]any{"session_id": "nope"}},
		{"log_exchange", map[string]any{"session_id": "L", "user": "u"}},
	} {
		res := m.call(t, c.name, c.args)
		if !res.IsError || strings.Contains(resultText(res), "--") || strings.Contains(resultText(res), "continuity ") {
			t.Errorf("%s: error %q should speak of tool arguments and tools", c.name, resultText(res))
		}
	}
}
