package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/praxis-os/continuity/mcpserver"
)

// fakeHome is a home folder (HOME points at it) holding a git repository
// without .praxis-os.
func fakeHome(t *testing.T) (home, proj string, env []string) {
	t.Helper()
	home, _ = filepath.EvalSymlinks(t.TempDir())
	proj = filepath.Join(home, "code", "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "HOME="+home)
	return home, proj, env
}

// startMCPIn runs `continuity mcp` (no --root) in dir with env, connected
// to the SDK's client speaking protocol version (the SDK's latest when
// ""), which offers roots when there are any.
func startMCPIn(t *testing.T, dir string, env []string, version string, roots ...string) *mcpProc {
	t.Helper()
	cmd := exec.Command(binPath, "mcp", "--log-level", "debug")
	cmd.Dir, cmd.Env = dir, env
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	var opts *mcp.ClientOptions
	if len(roots) > 0 {
		opts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "continuity-test", Version: "0"}, opts)
	for _, r := range roots {
		client.AddRoots(&mcp.Root{URI: "file://" + r})
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit(10*time.Second))
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("continuity mcp stderr:\n%s", stderr)
		}
	})
	return &mcpProc{cs: cs, cmd: cmd, stderr: stderr}
}

// TestMCPInHomeFolder: `continuity mcp` started from the home folder (a
// global MCP entry) never creates $HOME/.praxis-os: with a client that
// gives its roots it serves the project's workspace; without, its log
// tools refuse, saying why and what to do. `continuity log` run in the
// home folder refuses too, and says where it wrote when it writes. An
// old $HOME/.praxis-os does not capture a git repository below it.
// Before, the first start created $HOME/.praxis-os, and every repository
// below without its own logged into it.
func TestMCPInHomeFolder(t *testing.T) {
	home, proj, env := fakeHome(t)
	exchange := map[string]any{"session_id": "s1", "user": "where does this go?", "ai": "into the project"}

	t.Run("client roots", func(t *testing.T) {
		// Claude Code's protocol version: roots are asked after the
		// initialize handshake.
		m := startMCPIn(t, home, env, "2025-06-18", proj)
		var out mcpserver.LogOut
		m.ok(t, "log_exchange", exchange, &out)
		if out.Workspace != proj || out.File != filepath.Join(".praxis-os", ".conversations", "session-s1~m1.jsonl") {
			t.Errorf("log_exchange wrote to %s in %s, want the project %s", out.File, out.Workspace, proj)
		}
		if _, err := os.Stat(filepath.Join(proj, ".praxis-os", ".conversations", "session-s1~m1.jsonl")); err != nil {
			t.Errorf("the project's log: %v", err)
		}
		eventually(t, 30*time.Second, "the exchange is indexed in the project", func() bool { return m.exchanges(t, "s1") == 1 })
		if !strings.Contains(m.stderr.String(), "client's root") {
			t.Errorf("the server does not say which workspace it serves:\n%s", m.stderr)
		}
	})
	for _, version := range []string{"2025-06-18", ""} {
		t.Run("no roots "+version, func(t *testing.T) {
			m := startMCPIn(t, home, env, version)
			m.fails(t, "log_exchange", exchange, "is your home folder")
			m.fails(t, "log_exchange", exchange, "--root")
			// Reads answer (nothing there), and create nothing either.
			m.call(t, "list_sessions", map[string]any{})
		})
	}
	if _, err := os.Stat(filepath.Join(home, ".praxis-os")); !os.IsNotExist(err) {
		t.Fatalf("$HOME/.praxis-os was created: %v", err)
	}

	// continuity log in the home folder: refused; in the project: says
	// where it wrote.
	run := func(dir string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(binPath, args...)
		cmd.Dir, cmd.Env = dir, env
		return runCmd(t, cmd)
	}
	if _, errs, code := run(home, "log", "--session", "h", "--user", "u", "--ai", "a"); code == 0 || !strings.Contains(errs, "is your home folder") {
		t.Errorf("log in the home folder: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(home, ".praxis-os")); !os.IsNotExist(err) {
		t.Fatalf("log created $HOME/.praxis-os: %v", err)
	}
	sub := filepath.Join(proj, "src")
	os.MkdirAll(sub, 0o700)
	_, errs, code := run(sub, "log", "--session", "p", "--user", "u", "--ai", "a")
	if code != 0 || !strings.Contains(errs, "written to "+filepath.Join(proj, ".praxis-os", ".conversations", "session-p~m1.jsonl")) || !strings.Contains(errs, "(workspace "+proj+")") {
		t.Errorf("log in the project: exit %d: %s", code, errs)
	}
	// --root names the home folder: used as given.
	if _, errs, code := run(home, "--root", home, "log", "--session", "h", "--user", "u", "--ai", "a"); code != 0 {
		t.Errorf("log --root HOME: exit %d: %s", code, errs)
	}
	// Now $HOME/.praxis-os exists (as an older continuity left it): a
	// git repository below still uses its own workspace.
	_, errs, _ = run(sub, "log", "--session", "p", "--user", "u2", "--ai", "a2")
	if !strings.Contains(errs, "(workspace "+proj+")") {
		t.Errorf("log in the project with $HOME/.praxis-os there: %s", errs)
	}
}

// TestStatusInHomeFolder: status, search, resume and doctor run in the
// home folder (no .praxis-os there) advise what works there: a project's
// folder, or --root. Before, they advised "start 'continuity daemon'",
// which then refused the home folder.
func TestStatusInHomeFolder(t *testing.T) {
	home, proj, env := fakeHome(t)
	run := func(dir string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(binPath, args...)
		cmd.Dir, cmd.Env = dir, env
		return runCmd(t, cmd)
	}
	for _, args := range [][]string{{"status"}, {"search", "anything"}, {"resume", "--latest"}} {
		_, errs, code := run(home, args...)
		if code == 0 || !strings.Contains(errs, "is your home folder") || !strings.Contains(errs, "--root "+home) || strings.Contains(errs, "start 'continuity daemon' or") {
			t.Errorf("%v in the home folder: exit %d: %s", args, code, errs)
		}
		// The advice works: the daemon with --root is accepted (checked
		// by TestMCPInHomeFolder's log --root); without, it refuses.
	}
	out, _, _ := run(home, "doctor")
	if !strings.Contains(out, "is your home folder") || strings.Contains(out, "`continuity daemon`") {
		t.Errorf("doctor in the home folder:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".praxis-os")); !os.IsNotExist(err) {
		t.Fatalf("$HOME/.praxis-os was created: %v", err)
	}
	// In a project the advice is unchanged.
	if _, errs, _ := run(proj, "status"); !strings.Contains(errs, "start 'continuity daemon' or run 'continuity ingest'") {
		t.Errorf("status in a project: %s", errs)
	}
}
