package share_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/praxis-os/continuity/share"
	"github.com/praxis-os/continuity/share/sharetest"
)

func TestMain(m *testing.M) { sharetest.Main(m) }

func TestNormalizeRemote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"git@github.com:acme/app.git", "github.com/acme/app"},
		{"https://github.com/acme/app", "github.com/acme/app"},
		{"https://user@GitHub.com/acme/app.git/", "github.com/acme/app"},
		{"ssh://git@github.com:22/acme/app.git", "github.com/acme/app"},
		{"/srv/git/app.git", "/srv/git/app"},
	} {
		if got := share.NormalizeRemote(tc.in); got != tc.want {
			t.Errorf("NormalizeRemote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestAccessRules: the database itself keeps teams apart and a member's
// sessions its own, for every role but the owner (row-level security,
// forced).
func TestAccessRules(t *testing.T) {
	srv := sharetest.Start(t)
	db := srv.Database(t)
	ctx := context.Background()
	if err := share.Init(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := share.Init(ctx, db); err != nil { // idempotent
		t.Fatalf("init again: %v", err)
	}
	alice, bob, carol, admin := sharetest.Name("alice"), sharetest.Name("bob"), sharetest.Name("carol"), sharetest.Name("adm")
	for _, m := range []struct {
		user, team string
		admin      bool
	}{{alice, "t1", false}, {bob, "t1", false}, {carol, "t2", false}, {admin, "t1", true}} {
		if _, err := share.AddMember(ctx, db, share.MemberOptions{Team: m.team, User: m.user, Admin: m.admin, Password: "pw-" + m.user}); err != nil {
			t.Fatal(err)
		}
	}
	as := func(user string) *pgx.Conn {
		c, err := pgx.Connect(ctx, sharetest.UserURL(db, user, "pw-"+user))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		return c
	}
	a, b, c, ad := as(alice), as(bob), as(carol), as(admin)
	mustExec := func(c *pgx.Conn, sql string, args ...any) {
		t.Helper()
		if _, err := c.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	mustExec(a, `INSERT INTO continuity_origins (team, id, scope, machine) VALUES ('t1', 'oa', 'repo', 'laptop')`)
	mustExec(a, `INSERT INTO continuity_events (team, scope, origin, origin_row, id, session, kind, ts, machine)
		VALUES ('t1', 'repo', 'oa', 1, 'e1', 's-a', 'exchange', now(), 'laptop')`)
	count := func(c *pgx.Conn) int64 {
		var n int64
		if err := c.QueryRow(ctx, `SELECT count(*) FROM continuity_events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(b); n != 1 {
		t.Errorf("a teammate sees %d events, want 1", n)
	}
	if n := count(c); n != 0 {
		t.Errorf("another team's member sees %d events, want 0", n)
	}
	denied := func(what string, err error) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("%s: got %v, want a row-level security refusal", what, err)
		}
	}
	// Nobody writes under another's origin or name, nor into a team of
	// which it is not a member.
	_, err := b.Exec(ctx, `INSERT INTO continuity_events (team, scope, origin, origin_row, id, session, kind, ts, machine)
		VALUES ('t1', 'repo', 'oa', 2, 'e2', 's-a', 'exchange', now(), 'x')`)
	denied("bob ships under alice's origin", err)
	_, err = c.Exec(ctx, `INSERT INTO continuity_origins (team, id, scope, machine) VALUES ('t1', 'oc', 'repo', 'x')`)
	denied("carol joins t1's origins", err)
	// A teammate neither deletes another's events nor records a forget of
	// another's session; the team admin does.
	if tag, err := b.Exec(ctx, `DELETE FROM continuity_events WHERE session = 's-a'`); err != nil || tag.RowsAffected() != 0 {
		t.Errorf("bob deletes alice's events: %v, %d rows", err, tag.RowsAffected())
	}
	_, err = b.Exec(ctx, `INSERT INTO continuity_removals (team, scope, session) VALUES ('t1', 'repo', 's-a')`)
	denied("bob forgets alice's session", err)
	mustExec(ad, `INSERT INTO continuity_removals (team, scope, session) VALUES ('t1', 'repo', 's-a')`)
	if tag, err := ad.Exec(ctx, `DELETE FROM continuity_events WHERE session = 's-a'`); err != nil || tag.RowsAffected() != 1 {
		t.Errorf("the admin deletes alice's events: %v, %d rows", err, tag.RowsAffected())
	}
	// The checkpoint is fenced: a stale expected value moves nothing.
	if tag, err := a.Exec(ctx, `UPDATE continuity_origins SET shipped = 5 WHERE id = 'oa' AND shipped = 0`); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("move the checkpoint: %v", err)
	}
	if tag, _ := a.Exec(ctx, `UPDATE continuity_origins SET shipped = 7 WHERE id = 'oa' AND shipped = 0`); tag.RowsAffected() != 0 {
		t.Error("a stale checkpoint moved")
	}
	if tag, _ := b.Exec(ctx, `UPDATE continuity_origins SET shipped = 9 WHERE id = 'oa'`); tag.RowsAffected() != 0 {
		t.Error("bob moved alice's checkpoint")
	}
	// Removed from the team: nothing more to read.
	if ok, err := share.RemoveMember(ctx, db, "t1", bob); err != nil || !ok {
		t.Fatalf("remove-member: %v %v", ok, err)
	}
	mustExec(a, `INSERT INTO continuity_events (team, scope, origin, origin_row, id, session, kind, ts, machine)
		VALUES ('t1', 'repo', 'oa', 3, 'e3', 's-a2', 'exchange', now(), 'laptop')`)
	if n := count(b); n != 0 {
		t.Errorf("a removed member sees %d events", n)
	}
	st, err := share.Status(ctx, sharetest.UserURL(db, alice, "pw-"+alice), "")
	if err != nil {
		t.Fatal(err)
	}
	if s := st.String(); !strings.Contains(s, "team t1: "+alice) || strings.Contains(s, carol) {
		t.Errorf("alice's status:\n%s", s)
	}
}

// TestErrorsNameServer: a server that does not answer is named, without
// the password, with what to do.
func TestErrorsNameServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := share.Init(ctx, "postgres://someone:"+"s3cret-pw"+"@127.0.0.1:1/teamdb?connect_timeout=5")
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cret-pw") || !strings.Contains(msg, "someone@127.0.0.1:1/teamdb") || !strings.Contains(msg, "reachable") {
		t.Errorf("error: %s", msg)
	}
}

func TestScopeOf(t *testing.T) {
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	src := t.TempDir()
	if _, err := share.ScopeOf(src); err == nil || !strings.Contains(err.Error(), "--scope") {
		t.Errorf("no repository: %v", err)
	}
	git(src, "init", "-q")
	git(src, "commit", "-q", "--allow-empty", "-m", "first")
	clone := filepath.Join(t.TempDir(), "clone")
	git(src, "clone", "-q", src, clone)
	s1, err1 := share.ScopeOf(src)
	if err1 != nil || !strings.HasPrefix(s1, "git:") {
		t.Fatalf("a repository without a remote: %q %v", s1, err1)
	}
	s2, err2 := share.ScopeOf(clone)
	if err2 != nil || s2 != share.NormalizeRemote(src) {
		t.Errorf("a clone: %q %v, want its remote", s2, err2)
	}
	git(clone, "remote", "add", "upstream", "x")
	git(clone, "remote", "remove", "origin")
	if s3, _ := share.ScopeOf(clone); s3 != s1 {
		t.Errorf("a clone without its remote: %q, want the first commit's %q", s3, s1)
	}
}
