package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/logformat"
)

// git runs git in dir with a hermetic configuration.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// gitSync is the recipe's sync: commit what is new, pull (merging with
// merge=union), push.
func gitSync(t *testing.T, m *machine) {
	t.Helper()
	gitIn(t, m.ws.logs, "add", "-A")
	if st := gitIn(t, m.ws.logs, "status", "--porcelain"); st != "" {
		gitIn(t, m.ws.logs, "commit", "-qm", "sync from "+m.name)
	}
	gitIn(t, m.ws.logs, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
	gitIn(t, m.ws.logs, "push", "-q", "origin", "main")
}

// TestSyncRecipeGit follows recipes/sync/README.md's private git
// repository: the logs folder a repository of its own with the recipe's
// .gitattributes (merge=union) and .gitignore, two machines committing,
// pulling and pushing, both appending to one file too (merged by union,
// reordered), a forget on one machine, kill -9 and a rebuild: each line
// once on each, the same ids, the forget held. doctor warns of the remote
// until it is marked private.
func TestSyncRecipeGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Parallel()
	recipe := filepath.Join("..", "..", "recipes", "sync")
	remote := filepath.Join(t.TempDir(), "logs.git")
	gitIn(t, filepath.Dir(remote), "init", "-q", "--bare", "-b", "main", remote)
	a, b := newMachine(t, "a"), newMachine(t, "b")
	for _, f := range []string{"gitattributes", "gitignore"} {
		data, err := os.ReadFile(filepath.Join(recipe, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(a.ws.logs, "."+f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, a.ws.logs, "init", "-q", "-b", "main")
	gitIn(t, a.ws.logs, "add", "-A")
	gitIn(t, a.ws.logs, "commit", "-qm", "conversation logs")
	gitIn(t, a.ws.logs, "remote", "add", "origin", remote)
	gitIn(t, a.ws.logs, "push", "-q", "-u", "origin", "main")
	if err := os.RemoveAll(b.ws.logs); err != nil {
		t.Fatal(err)
	}
	gitIn(t, filepath.Dir(b.ws.logs), "clone", "-q", remote, b.ws.logs)

	l := newLedger()
	write := func(m *machine, round int) {
		for i := range 2 {
			u := fmt.Sprintf("%s git round %d line %d", m.name, round, i)
			m.echo(logformat.MachineLogName("session-g"+fmt.Sprint(round%2), m.name), line(fmt.Sprintf("g%d", round%2), u))
			l.add(fmt.Sprintf("g%d", round%2), u)
		}
		u := fmt.Sprintf("both append here: %s round %d", m.name, round)
		m.echo("notes.jsonl", line("notes", u))
		l.add("notes", u)
		u = fmt.Sprintf("continuity log on %s round %d", m.name, round)
		m.cli("log", "--session", "g2", "--user", u, "--ai", "ok")
		l.add("g2", u)
	}
	a.start()
	b.start()
	for round := range 3 {
		write(a, round)
		write(b, round)
		if round == 1 {
			a.cli("forget", "--session", "g0")
			l.forgotten["g0"] = true
		}
		gitSync(t, a)
		gitSync(t, b)
		gitSync(t, a)
		if round == 1 {
			b.kill9(true)
			b.start()
		}
		checkInvariants(t, l, a, b)
	}
	if merged, _ := os.ReadFile(filepath.Join(a.ws.logs, "notes.jsonl")); strings.Count(string(merged), "\n") != 6 {
		t.Errorf("notes.jsonl after the union merges:\n%s", merged)
	}

	check := func(m *machine) engine.Check {
		for _, c := range m.doctor().Checks {
			if c.Name == "logs in git" {
				return c
			}
		}
		return engine.Check{}
	}
	if c := check(a); c.Status != engine.StatusWarn || !strings.Contains(c.Message, remote) || !strings.Contains(c.Fix, "continuity.private") {
		t.Errorf("doctor on logs tracked by a repository with a remote: %+v", c)
	}
	gitIn(t, a.ws.logs, "config", "continuity.private", "true")
	if c := check(a); c.Status != engine.StatusOK {
		t.Errorf("doctor once the remote is marked private: %+v", c)
	}
}

func (m *machine) doctor() engine.DoctorReport {
	m.t.Helper()
	out, _, _ := m.ws.cliEnv(m.env, "doctor", "--json")
	var r engine.DoctorReport
	if err := jsonUnmarshal(out, &r); err != nil {
		m.t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	return r
}
