package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-os/continuity/server"
)

// The recipes in recipes/ are tested here: the Claude Code SessionStart
// hook (fail-open, bounded), the Cursor and Cline rules (their exact
// commands), and the systemd unit.

const recipesDir = "../../recipes"

// hookLimit is the hook's time limit (CONTINUITY_HOOK_TIMEOUT, seconds).
const hookLimit = 1 * time.Second

// generousHookLimit is the limit of the tests of what the hook prints or
// records (not of its limit): a loaded machine must not make it give up.
const generousHookLimit = "CONTINUITY_HOOK_TIMEOUT=120"

// isZombie reports whether pid has exited and waits for its parent (or
// init) to reap it.
func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) STATE ...: the state follows the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

type hookRun struct {
	stdout, stderr string
	code           int
	took           time.Duration
	limit          time.Duration // CONTINUITY_HOOK_TIMEOUT of the run
}

// runHook runs the SessionStart hook with bash, as Claude Code does: in
// the project folder, the hook input on stdin, PATH holding pathDir (the
// continuity binary's folder, or not) and the system tools.
func runHook(t *testing.T, root, pathDir string, env ...string) hookRun {
	t.Helper()
	return runHookWith(t, root, pathDir, `{"session_id":"3f1c2a7e-9b8d-4c1e-a2f3-0123456789ab","transcript_path":"/tmp/x.jsonl","cwd":"`+root+`","hook_event_name":"SessionStart","source":"startup"}`, env...)
}

// runHookWith is runHook with the given hook input.
func runHookWith(t *testing.T, root, pathDir, input string, env ...string) hookRun {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(recipesDir, "claude-code", "session-start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = root
	cmd.Env = append([]string{
		"PATH=" + pathDir + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + os.Getenv("HOME"),
		"CLAUDE_PROJECT_DIR=" + root,
		"CONTINUITY_MACHINE=m1",
		fmt.Sprintf("CONTINUITY_HOOK_TIMEOUT=%g", hookLimit.Seconds()),
	}, env...)
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	limit := hookLimit
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CONTINUITY_HOOK_TIMEOUT="); ok {
			if s, err := strconv.ParseFloat(v, 64); err == nil {
				limit = time.Duration(s * float64(time.Second))
			}
		}
	}
	start := time.Now()
	err = cmd.Run()
	r := hookRun{stdout: out.String(), stderr: errb.String(), took: time.Since(start), limit: limit}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// failOpen checks the hook ended with exit 0 and printed either nothing
// or a whole pack. How long it took is logged, not checked: on a loaded
// machine the binary may outlive the limit, and the hook then prints
// nothing, which is the fail-open this checks (the tests of what hangs
// check that the hook returns while its binary never would).
func (r hookRun) failOpen(t *testing.T, what string) {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Errorf("%s: exit %d, stderr %q; want 0 and nothing", what, r.code, r.stderr)
	}
	if r.stdout != "" && !strings.Contains(r.stdout, "# Resume context") {
		t.Errorf("%s: printed something other than a pack: %q", what, r.stdout)
	}
	t.Logf("%s: exit %d in %s (limit %s), %d bytes printed", what, r.code, r.took.Round(time.Millisecond), r.limit, len(r.stdout))
}

// fillIndex writes sessions×perSession exchanges and indexes them with
// `continuity ingest`.
func fillIndex(t *testing.T, ws *workspace, sessions, perSession int) {
	t.Helper()
	words := strings.Fields("build fails cgo gcc sqlite index daemon resume search token budget watcher fsnotify socket lock chain parser unicode timeout hook")
	for s := 0; s < sessions; s++ {
		var b bytes.Buffer
		for i := 0; i < perSession; i++ {
			var u, a []string
			for k := 0; k < 60; k++ {
				w := words[(s*7+i*13+k*k)%len(words)]
				if k < 15 {
					u = append(u, w)
				}
				a = append(a, w)
			}
			line, _ := json.Marshal(map[string]string{
				"type":       "exchange",
				"session_id": fmt.Sprintf("s%03d", s),
				"id":         fmt.Sprintf("e%d-%d", s, i),
				"timestamp":  time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s*perSession+i) * time.Minute).Format(time.RFC3339),
				"user":       strings.Join(u, " "),
				"ai":         strings.Join(a, " "),
			})
			b.Write(append(line, '\n'))
		}
		ws.appendRaw(fmt.Sprintf("session-s%03d.jsonl", s), b.Bytes())
	}
	if out, errs, code := ws.cli("ingest"); code != 0 {
		t.Fatalf("ingest: exit %d\n%s%s", code, out, errs)
	}
}

// TestHookSessionStart: on a 10,000-exchange index the hook prints the
// latest session's pack (and the session id to log under) well within its
// limit; without a binary or an index it prints nothing and exits 0 at once.
func TestHookSessionStart(t *testing.T) {
	t.Parallel()
	binDir := filepath.Dir(binPath)
	ws := newWorkspace(t)
	fillIndex(t, ws, 100, 100)
	if st := ws.status(); st.Exchanges != 10000 {
		t.Fatalf("index holds %d exchanges, want 10000", st.Exchanges)
	}
	// How fast the pack comes is a benchmark's business
	// (resume.BenchmarkResume, continuity-bench query); here the limit is generous so that a loaded
	// CI machine does not make the hook fail open and the test flaky.
	var worst time.Duration
	for range 3 {
		r := runHook(t, ws.root, binDir, generousHookLimit)
		r.failOpen(t, "10k exchanges")
		if !strings.Contains(r.stdout, "# Resume context for session s099") || !strings.Contains(r.stdout, "\nUser: ") {
			t.Fatalf("no pack for the latest session:\n%s", r.stdout)
		}
		if !strings.Contains(r.stdout, "session id: 3f1c2a7e-9b8d-4c1e-a2f3-0123456789ab") {
			t.Errorf("the hook does not name the session to log under:\n%s", r.stdout)
		}
		worst = max(worst, r.took)
	}
	t.Logf("hook latency at 10k exchanges: worst of 3 = %s", worst.Round(time.Millisecond))

	// With the daemon serving the workspace: the same.
	d := ws.startDaemon()
	sock := server.SocketPath(filepath.Join(ws.root, ".praxis-os", ".cache", "continuity"))
	eventually(t, 10*time.Second, "the daemon's socket", func() bool { _, err := os.Stat(sock); return err == nil })
	if _, errs, code := ws.cli("sessions"); code != 0 {
		t.Fatalf("sessions through the daemon: %s", errs)
	}
	r := runHook(t, ws.root, binDir, generousHookLimit)
	r.failOpen(t, "10k exchanges, daemon running")
	if !strings.Contains(r.stdout, "# Resume context") {
		t.Errorf("no pack with the daemon running:\n%s", r.stdout)
	}
	d.stop(t)

	// The settings.json snippet, run as Claude Code runs a hook command (a
	// shell, CLAUDE_PROJECT_DIR set), with the script where it says.
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	data, err := os.ReadFile(filepath.Join(recipesDir, "claude-code", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		t.Fatalf("settings.json: %v", err)
	}
	ss := settings.Hooks["SessionStart"]
	if len(ss) != 1 || len(ss[0].Hooks) != 1 || ss[0].Hooks[0].Type != "command" || ss[0].Hooks[0].Timeout < 2 ||
		!strings.Contains(ss[0].Matcher, "startup") {
		t.Fatalf("settings.json: %+v", settings)
	}
	script, _ := os.ReadFile(filepath.Join(recipesDir, "claude-code", "session-start.sh"))
	hooks := filepath.Join(ws.root, ".claude", "hooks")
	os.MkdirAll(hooks, 0o755)
	if err := os.WriteFile(filepath.Join(hooks, "continuity-session-start.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", ss[0].Hooks[0].Command)
	cmd.Dir = ws.root
	cmd.Env = []string{"PATH=" + binDir + ":/usr/bin:/bin", "CLAUDE_PROJECT_DIR=" + ws.root, generousHookLimit}
	cmd.Stdin = strings.NewReader(`{"session_id":"from-settings","source":"startup"}`)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "# Resume context") || !strings.Contains(string(out), "session id: from-settings") {
		t.Errorf("the settings.json hook command: %v\n%s", err, out)
	}

	// What the hook prints when there is nothing to print, with a
	// generous limit: under load (or the race detector) the binary may
	// outlive the 1 s limit, and the test is of what is printed.
	// No index yet: nothing, exit 0.
	empty := newWorkspace(t)
	r = runHook(t, empty.root, binDir, generousHookLimit)
	r.failOpen(t, "no index")
	if r.stdout != "" {
		t.Errorf("no index: printed %q", r.stdout)
	}
	// Not even a workspace.
	r = runHook(t, t.TempDir(), binDir, generousHookLimit)
	r.failOpen(t, "no workspace")
	if r.stdout != "" {
		t.Errorf("no workspace: printed %q", r.stdout)
	}
	// No continuity binary on PATH.
	r = runHook(t, ws.root, t.TempDir(), generousHookLimit)
	r.failOpen(t, "no binary")
	if r.stdout != "" {
		t.Errorf("no binary: printed %q", r.stdout)
	}
	// A nothing-to-resume pack is not printed.
	one := newWorkspace(t)
	one.appendRaw("session-x.jsonl", []byte(`{"type":"context_reset","session_id":"x","reason":"r"}`+"\n"))
	one.cli("ingest")
	r = runHook(t, one.root, binDir, generousHookLimit)
	r.failOpen(t, "nothing to resume")
	if r.stdout != "" {
		t.Errorf("nothing to resume: printed %q", r.stdout)
	}
}

// TestHookStuck: whatever hangs (a daemon that accepts and never answers,
// a stopped daemon, the binary itself), the hook exits 0 within its limit.
func TestHookStuck(t *testing.T) {
	t.Parallel()
	binDir := filepath.Dir(binPath)

	t.Run("listener-never-answers", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t)
		fillIndex(t, ws, 2, 5)
		sock := server.SocketPath(filepath.Join(ws.root, ".praxis-os", ".cache", "continuity"))
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		held := make(chan net.Conn, 100)
		defer func() {
			for len(held) > 0 {
				(<-held).Close()
			}
		}()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				held <- c // read nothing, answer nothing
			}
		}()
		runHook(t, ws.root, binDir).failOpen(t, "socket that never answers")
	})

	t.Run("daemon-stopped", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t)
		fillIndex(t, ws, 2, 5)
		d := ws.startDaemon()
		sock := server.SocketPath(filepath.Join(ws.root, ".praxis-os", ".cache", "continuity"))
		eventually(t, 10*time.Second, "the daemon's socket", func() bool { _, err := os.Stat(sock); return err == nil })
		if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer d.cmd.Process.Signal(syscall.SIGCONT)
		runHook(t, ws.root, binDir).failOpen(t, "daemon stopped (SIGSTOP)")
	})

	t.Run("binary-hangs", func(t *testing.T) {
		t.Parallel()
		ws := newWorkspace(t)
		fake := t.TempDir()
		pidFile := filepath.Join(fake, "pid")
		// It never ends by itself: the hook returning at all is its
		// limit at work, and the watchdog kills it.
		script := "#!/bin/sh\necho $$ > " + pidFile + "\necho partial\nexec sleep 100000\n"
		if err := os.WriteFile(filepath.Join(fake, "continuity"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		r := runHook(t, ws.root, fake)
		r.failOpen(t, "binary hangs")
		if r.stdout != "" {
			t.Errorf("binary hangs: printed %q", r.stdout)
		}
		data, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatalf("binary hangs: the fake did not run: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the hanging binary killed", func() bool {
			return syscall.Kill(pid, 0) == syscall.ESRCH || isZombie(pid)
		})
	})
}

// ruleBlocks returns the ```sh blocks of a rule file.
func ruleBlocks(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestRules runs the exact logging commands of the Cursor and Cline rules,
// with texts full of what breaks naive JSON writers pasted where the rules
// say: every line is valid, indexed, nothing rejected, texts byte for byte.
func TestRules(t *testing.T) {
	t.Parallel()
	user := `She said "don't" — it's $(echo pwned) and ${HOME} and ` + "`uname`" + ` \n \t \\ C:\new\table
second line: 'single' ; && || | > < * ? [ ] { } ~ # ! %s %%
  indented	with a tab
unicode: é ü 中文 日本語 🚀 👩‍💻 ∑ ≠
CONTINUITY_EOF is only the delimiter alone on its line
EOF`
	ai := "Answer with a trailing backslash \\\n\"quoted\"\n\n" + strings.Repeat("long line of the answer, past jq's 4096-byte buffer. ", 120) + "end"
	const session = "cursor-20260501-1432"
	hasJQ := exec.Command("jq", "--version").Run() == nil
	if !hasJQ {
		t.Log("jq is not installed: the jq commands of the rules are not run (CI installs jq)")
	}

	for _, rule := range []string{"cursor/continuity.mdc", "cline/continuity.md"} {
		t.Run(filepath.Dir(rule), func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t)
			blocks := ruleBlocks(t, filepath.Join(recipesDir, rule))
			var ran, logs int
			for _, b := range blocks {
				if strings.HasPrefix(b, "jq ") && !hasJQ {
					continue
				}
				cmd := b
				cmd = strings.ReplaceAll(cmd, "<the user's message, verbatim>", user)
				cmd = strings.ReplaceAll(cmd, "<your answer, verbatim>", ai)
				cmd = strings.ReplaceAll(cmd, "<earlier-session-id>", "older-session")
				cmd = strings.ReplaceAll(cmd, "<session-id>", session)
				if strings.Contains(cmd, "<") && strings.Contains(cmd, ">") && regexp.MustCompile(`<[a-z' -]+>`).MatchString(cmd) {
					t.Fatalf("a placeholder the test does not know in:\n%s", b)
				}
				sh := exec.Command("bash", "-c", cmd)
				sh.Dir = ws.root
				sh.Env = append(os.Environ(), "PATH="+filepath.Dir(binPath)+":"+os.Getenv("PATH"))
				out, err := sh.CombinedOutput()
				if err != nil && !strings.HasPrefix(b, "continuity resume") {
					t.Fatalf("rule command failed: %v\n%s\ncommand:\n%s", err, out, b)
				}
				ran++
				if strings.Contains(b, "continuity log") {
					logs++
				}
			}
			want := 4
			if !hasJQ {
				want = 3
			}
			if ran < want || logs < want-1 {
				t.Fatalf("ran %d commands (%d logging) from %s, want %d: the rule's code blocks changed?", ran, logs, rule, want)
			}

			// The lines: valid JSON, texts byte for byte ($(...) drops the
			// trailing newlines only; none here).
			f, err := os.Open(filepath.Join(ws.logs, "session-"+session+"~m1.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<20)
			var exchanges, resumes int
			for sc.Scan() {
				var ev struct {
					Type, User, AI string
					SessionID      string `json:"session_id"`
				}
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("invalid line %q: %v", sc.Text(), err)
				}
				switch ev.Type {
				case "exchange":
					exchanges++
					if ev.User != user || ev.AI != ai || ev.SessionID != session {
						t.Errorf("the texts changed on the way:\nuser %q\nwant %q\nai %q", ev.User, user, ev.AI)
					}
				case "session_resume":
					resumes++
				}
			}
			if exchanges != logs-1 || resumes != 1 {
				t.Errorf("%d exchanges and %d resume links logged, want %d and 1", exchanges, resumes, logs-1)
			}
			// Indexed, nothing rejected; the resume command of the rule
			// brings the texts back.
			if _, errs, code := ws.cli("ingest"); code != 0 {
				t.Fatal(errs)
			}
			if rs := ws.rejects(); len(rs) != 0 {
				t.Errorf("rejects: %+v", rs)
			}
			if st := ws.status(); st.Exchanges != int64(exchanges) {
				t.Errorf("indexed %d exchanges, want %d", st.Exchanges, exchanges)
			}
			if out, errs, code := ws.cli("search", "--limit", "1", "pwned 日本語"); code != 0 || !strings.Contains(out, session) {
				t.Errorf("search after the rule's logging: exit %d %s\n%s", code, errs, out)
			}
			out, errs, code := ws.cli("resume", "--session", session, "--include-current", "--budget", "4000")
			if code != 0 || !strings.Contains(out, "日本語 🚀") {
				t.Errorf("resume after the rule's logging: exit %d %s\n%s", code, errs, out)
			}
		})
	}
}

// TestSystemdUnit checks the user unit: ExecStart runs the daemon on the
// instance's workspace, restarts on failure, logs to the journal; and
// systemd-analyze verify accepts it when systemd is there.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	unit := filepath.Join(recipesDir, "systemd", "continuity@.service")
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("not a key=value line: %q", line)
			}
			keys[section+"."+k] = v
		}
	}
	for k, want := range map[string]string{
		"Service.ExecStart":        "%h/.local/bin/continuity daemon --wait-lock --root %f",
		"Service.WorkingDirectory": "%f",
		"Service.Restart":          "on-failure",
		"Service.StandardError":    "journal",
		"Service.Type":             "simple",
		"Install.WantedBy":         "default.target",
	} {
		if keys[k] != want {
			t.Errorf("%s = %q, want %q", k, keys[k], want)
		}
	}
	if _, ok := keys["Service.PrivateTmp"]; ok {
		t.Error("PrivateTmp hides the socket fallback folder (/tmp) from the CLI and MCP servers")
	}

	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze not installed: unit checked by its keys only")
		return
	}
	// Verify an instance for a real workspace, with the binary where
	// ExecStart expects it (%h is $HOME for the verifying user).
	home, ws := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".local", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binPath, filepath.Join(home, ".local", "bin", "continuity")); err != nil {
		t.Fatal(err)
	}
	esc, err := exec.Command("systemd-escape", "--path", ws).Output()
	if err != nil {
		t.Fatalf("systemd-escape: %v", err)
	}
	dir := t.TempDir()
	inst := filepath.Join(dir, "continuity@"+strings.TrimSpace(string(esc))+".service")
	if err := os.WriteFile(inst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("systemd-analyze", "verify", inst)
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		if os.Getuid() != 0 && strings.Contains(string(out), "RuntimeDirectory") {
			t.Skipf("systemd-analyze cannot run here: %s", out)
		}
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestHookRecordsChain: the SessionStart hook records a context_reset on
// compact (with the id the importer gives the same compaction) and a
// session_resume from the previous transcript on clear and resume; a
// later import of the transcripts adds neither again.
func TestHookRecordsChain(t *testing.T) {
	t.Parallel()
	binDir := filepath.Dir(binPath)
	ws := newWorkspace(t)
	projects := filepath.Join(t.TempDir(), "projects", "-w")
	os.MkdirAll(projects, 0o700)
	prev, cur := "aaaaaaaa-1111-2222-3333-444444444444", "bbbbbbbb-1111-2222-3333-444444444444"
	prevPath := filepath.Join(projects, prev+".jsonl")
	os.WriteFile(prevPath, []byte(`{"type":"user","sessionId":"`+prev+`","uuid":"u1","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"pick the storage"}}
{"type":"assistant","sessionId":"`+prev+`","uuid":"a1","timestamp":"2026-03-01T10:00:05Z","message":{"role":"assistant","content":[{"type":"text","text":"Decision: SQLite in WAL mode."}]}}
`), 0o600)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(prevPath, past, past)
	curPath := filepath.Join(projects, cur+".jsonl")
	os.WriteFile(curPath, []byte(`{"type":"user","sessionId":"`+cur+`","uuid":"u2","timestamp":"2026-03-02T10:00:00Z","message":{"role":"user","content":"go on"}}
{"type":"system","subtype":"compact_boundary","sessionId":"`+cur+`","uuid":"cb-1","timestamp":"2026-03-02T11:00:00Z","compactMetadata":{"trigger":"auto","preTokens":150000}}
`), 0o600)
	input := func(source string) string {
		return `{"session_id":"` + cur + `","transcript_path":"` + curPath + `","cwd":"` + ws.root + `","hook_event_name":"SessionStart","source":"` + source + `"}`
	}
	// What the hook records is checked, not how fast: a generous limit,
	// so that a loaded machine does not make it give up before it logs.
	r := runHookWith(t, ws.root, binDir, input("compact"), generousHookLimit)
	r.failOpen(t, "compact")
	r = runHookWith(t, ws.root, binDir, input("resume"), generousHookLimit)
	r.failOpen(t, "resume")
	if r.stdout != "" {
		t.Errorf("resume printed %q; Claude Code restores the conversation itself", r.stdout)
	}
	r = runHookWith(t, ws.root, binDir, input("clear"), generousHookLimit)
	r.failOpen(t, "clear")
	data, err := os.ReadFile(filepath.Join(ws.logs, "claude-code-"+cur+"~m1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if !strings.Contains(text, `"type":"context_reset"`) || !strings.Contains(text, `"id":"claude-code:reset:`+cur+`:cb-1"`) {
		t.Errorf("no context_reset with the compact_boundary's id:\n%s", text)
	}
	// Recorded on resume, and on clear the same link (the same id) is not
	// written again: a second line under the id would be an id reused
	// with other content (its timestamp) to the index.
	if strings.Count(text, `"type":"session_resume"`) != 1 || !strings.Contains(text, `"previous_session":"`+prev+`"`) {
		t.Errorf("want the link %s -> %s recorded once, on resume (clear repeats it):\n%s", prev, cur, text)
	}
	// Importing the transcripts adds the exchanges, not the reset or link again.
	out, errs, code := ws.cli("import", "--from", "claude-code", "--json", projects)
	if code != 0 {
		t.Fatalf("import: %s", errs)
	}
	var res struct{ Exchanges, Resets, Links int }
	json.Unmarshal([]byte(out), &res)
	if res.Resets != 0 || res.Exchanges != 2 {
		t.Errorf("import after the hook: %s", out)
	}
	ws.cli("ingest", "--no-embed")
	out, _, _ = ws.cli("resume", "--session", cur, "--query", "storage")
	if !strings.Contains(out, "SQLite in WAL mode") {
		t.Errorf("resume of the new session lacks the previous one's decision:\n%s", out)
	}
	// No input at all, or a session without transcript: still fail-open.
	r = runHookWith(t, ws.root, binDir, `{"session_id":"`+cur+`","source":"clear"}`)
	r.failOpen(t, "clear without transcript")
}
