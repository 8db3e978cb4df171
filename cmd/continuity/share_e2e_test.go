package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/redact"
	"github.com/praxis-os/continuity/share/sharetest"
)

// The team memory tests: real daemons (the built binary) in workspaces
// standing for teammates' clones of one repository, sharing through a
// real PostgreSQL (share/sharetest: CI's, or one started here).

// mate is a teammate's machine: a workspace whose git remote names the
// repository, a login role of the team, a daemon with --share (its
// environment: CONTINUITY_SHARE, CONTINUITY_TEAM, PGPASSWORD).
type mate struct {
	*machine
	user string
}

const teamRemote = "git@example.com:acme/app.git"

// newTeamDB starts (or reaches) PostgreSQL, creates a database and its
// schema with 'continuity share init'.
func newTeamDB(t *testing.T) (*sharetest.Server, string) {
	t.Helper()
	return newTeamDBOn(t, sharetest.Start(t))
}

// newTeamDBOn is newTeamDB on srv (a test's own server, for a test that
// restarts it: sharetest.StartOwn).
func newTeamDBOn(t *testing.T, srv *sharetest.Server) (*sharetest.Server, string) {
	t.Helper()
	db := srv.Database(t)
	for range 2 { // idempotent
		out, errs, code := runCmd(t, exec.Command(binPath, "share", "init", "--db", db))
		if code != 0 || !strings.Contains(out, "schema version") {
			t.Fatalf("share init: exit %d: %s %s", code, out, errs)
		}
	}
	return srv, db
}

func newMate(t *testing.T, db, team, prefix, machineName string, admin bool) *mate {
	t.Helper()
	user := sharetest.Name(prefix)
	m := &mate{machine: newMachine(t, machineName), user: user}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", teamRemote}} {
		if out, err := exec.Command("git", append([]string{"-C", m.ws.root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	pw := "pw-" + user
	args := []string{"share", "add-member", "--db", db, "--team", team, "--user", user}
	if admin {
		args = append(args, "--admin")
	}
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(cmd.Environ(), "CONTINUITY_MEMBER_PASSWORD="+pw)
	if out, errs, code := runCmd(t, cmd); code != 0 || strings.Contains(out+errs, pw) {
		t.Fatalf("add-member: exit %d: %s %s", code, out, errs)
	}
	m.env = append(m.env, "CONTINUITY_SHARE="+sharetest.UserURL(db, user, ""), "CONTINUITY_TEAM="+team, "PGPASSWORD="+pw)
	return m
}

// echoJSON appends an exchange with a shell's >>.
func (m *mate) echoJSON(file, session, user, ai string) {
	m.t.Helper()
	b, _ := json.Marshal(map[string]string{"type": "exchange", "session_id": session, "user": user, "ai": ai})
	m.echo(file, string(b))
}

type shareHit struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	File      string `json:"file"`
	AI        string `json:"ai"`
}

func (m *mate) search(q string) []shareHit {
	m.t.Helper()
	var r struct {
		Results []shareHit `json:"results"`
	}
	if err := json.Unmarshal([]byte(m.cli("search", "--json", q)), &r); err != nil {
		m.t.Fatal(err)
	}
	return r.Results
}

// pulled is how many events of the machine's index came from teammates
// (their generations' paths start with ~share/), and how many distinct
// ids they have.
func (m *mate) pulled() (n, ids int) {
	m.t.Helper()
	path := filepath.Join(m.ws.root, ".praxis-os", ".cache", "continuity", "index.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		m.t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT event_id) FROM events
		WHERE generation IN (SELECT id FROM generations WHERE path LIKE '~share/%')`).Scan(&n, &ids); err != nil {
		return -1, -1 // being created
	}
	return n, ids
}

func poll(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	timeout = waitLimit(timeout)
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestShareTeamMemory: three clones of one repository; alice and bob in
// team t1, carol in t2. A decision alice's agent logs is found by bob's
// search within seconds, named as alice's from her machine, never by
// carol; the redaction examples reach the database redacted, a private
// session never, no column holds a raw line; bob cannot forget alice's
// session; alice's forget reaches the database and bob's index, also
// after bob's index is rebuilt; an edit in place travels; a team admin's
// forget of alice's session reaches everyone.
func TestShareTeamMemory(t *testing.T) {
	_, db := newTeamDB(t)
	a := newMate(t, db, "t1", "alice", "laptop", false)
	b := newMate(t, db, "t1", "bob", "desk", false)
	c := newMate(t, db, "t2", "carol", "box", false)
	d := newMate(t, db, "t1", "dana", "lead", true) // a team admin
	a.cli("share", "private", "s-private")
	a.start()
	b.start()
	c.start()
	d.start()

	examples := redact.Examples()
	names := make([]string, 0, len(examples))
	for n := range examples {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a.echoJSON("notes~laptop.jsonl", "s-red", examples[n], "noted the "+n+" example")
	}
	a.echoJSON("notes~laptop.jsonl", "s-private", "the zebra-canary plan", "kept on this machine")
	start := time.Now()
	a.echoJSON("notes~laptop.jsonl", "s-dec", "which job queue?", "Postgres with SKIP LOCKED for the job queue")

	poll(t, 30*time.Second, "bob's search finds alice's decision", func() bool {
		for _, h := range b.search("SKIP LOCKED job queue") {
			if h.SessionID == "s-dec" && strings.Contains(h.AI, "SKIP LOCKED") {
				if !strings.HasPrefix(h.File, "~share/"+a.user+"@laptop/") {
					t.Fatalf("the result does not say whose it is: file %q", h.File)
				}
				return true
			}
		}
		return false
	})
	t.Logf("append on alice's machine to bob's search: %v", time.Since(start).Round(time.Millisecond))
	want := len(examples) + 1
	poll(t, 30*time.Second, "bob holds every event alice may share", func() bool { n, _ := b.pulled(); return n == want })
	if n, ids := b.pulled(); n != want || ids != want {
		t.Fatalf("bob pulled %d events (%d ids), want %d", n, ids, want)
	}
	if b.knows("s-private") {
		t.Error("alice's private session reached bob")
	}
	// bob's sessions name alice's as hers, from her machine.
	var ss struct {
		Sessions []struct{ ID, Teammate string } `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(b.cli("sessions", "--json")), &ss); err != nil {
		t.Fatal(err)
	}
	for _, s := range ss.Sessions {
		if s.ID == "s-dec" && s.Teammate != a.user+"@laptop" {
			t.Errorf("bob's sessions: s-dec's teammate %q, want %q", s.Teammate, a.user+"@laptop")
		}
	}
	if out := b.cli("sessions"); !strings.Contains(out, "TEAMMATE") || !strings.Contains(out, a.user+"@laptop") {
		t.Errorf("bob's sessions do not say whose s-dec is:\n%s", out)
	}

	// carol's daemon works (ships its own), and sees nothing of t1.
	c.echoJSON("box~box.jsonl", "s-carol", "carol's question", "carol's answer")
	poll(t, 30*time.Second, "carol's event shipped", func() bool {
		sh := c.ws.statusEnv(c.env).Share
		return sh != nil && sh.Shipped > 0 && sh.Backlog == 0
	})
	// Two whole pull rounds of carol's begun after alice's rows were
	// committed (bob holds them): had her role read them, she would hold
	// them now.
	rounds := func() int64 {
		if sh := c.ws.statusEnv(c.env).Share; sh != nil {
			return sh.PullRounds
		}
		return 0
	}
	r0 := rounds()
	poll(t, 30*time.Second, "two pull rounds of carol's", func() bool { return rounds() >= r0+2 })
	if n, _ := c.pulled(); n != 0 || len(c.search("SKIP LOCKED job queue")) != 0 {
		t.Errorf("carol (another team) holds %d of t1's events", n)
	}
	if n := sharetest.QueryInt(t, sharetest.UserURL(db, c.user, "pw-"+c.user), `SELECT count(*) FROM continuity_events WHERE team = 't1'`); n != 0 {
		t.Errorf("carol's role reads %d of t1's rows", n)
	}

	// Every shipped column: redacted texts, no raw line, no private session.
	cols := sharetest.Strings(t, db, `SELECT * FROM continuity_events`)
	all := strings.Join(cols, "\n")
	for _, n := range names {
		red, k := redact.Redact(examples[n])
		if k == 0 {
			t.Fatalf("example %s not redacted by the rules", n)
		}
		if !strings.Contains(all, red) {
			t.Errorf("example %s: its redacted text is not in the database", n)
		}
	}
	for _, col := range cols {
		for _, n := range names {
			if col == examples[n] || strings.Contains(col, examples[n]) {
				t.Errorf("a shipped column holds the %s example unredacted", n)
			}
		}
		if strings.Contains(col, "zebra-canary") || col == "s-private" {
			t.Errorf("the private session was shipped: %q", col)
		}
		if strings.Contains(col, `"session_id"`) || strings.Contains(col, `"type"`) {
			t.Errorf("a raw line was shipped: %q", col)
		}
	}

	// An edit in place ships as such: a removed line leaves bob's index,
	// a changed one is replaced.
	editLine := func(ts, user, ai string) string {
		b, _ := json.Marshal(map[string]string{"type": "exchange", "session_id": "s-edit", "timestamp": ts, "user": user, "ai": ai})
		return string(b) + "\n"
	}
	l1 := editLine("2026-11-01T10:00:00Z", "edit one", "kept line")
	l2 := editLine("2026-11-01T10:01:00Z", "edit two", "removed line")
	a.ws.appendRaw("edit~laptop.jsonl", []byte(l1+l2+editLine("2026-11-01T10:02:00Z", "edit three", "the old answer about caching")))
	editUsers := func() string {
		var us []string
		for _, e := range b.events() {
			if e.Session == "s-edit" {
				us = append(us, e.User)
			}
		}
		sort.Strings(us)
		return strings.Join(us, "|")
	}
	poll(t, 30*time.Second, "bob pulls the lines to edit", func() bool { return editUsers() == "edit one|edit three|edit two" })
	writeViaTemp(t, a.ws.logs, "edit~laptop.jsonl", []byte(l1+editLine("2026-11-01T10:02:00Z", "edit three, revised", "the new answer about caching")), false)
	poll(t, 30*time.Second, "the edit reaches bob", func() bool { return editUsers() == "edit one|edit three, revised" })
	want += 2
	if n := sharetest.QueryInt(t, db, `SELECT count(*) FROM continuity_events WHERE session = 's-edit'`); n != 2 {
		t.Errorf("PostgreSQL holds %d rows of the edited session, want 2", n)
	}

	// bob cannot forget alice's session.
	out, errs, code := b.ws.cliEnv(b.env, "forget", "--session", "s-dec", "--yes")
	if code == 0 || !strings.Contains(errs, "only its owner or a team admin") || !strings.Contains(errs, a.user) {
		t.Fatalf("bob's forget of alice's session: exit %d: %s %s", code, out, errs)
	}
	if !b.knows("s-dec") {
		t.Fatal("the refused forget removed the session from bob's index")
	}
	// Nor without his daemon (the forget then opens the index itself).
	b.kill9(false)
	out, errs, code = b.ws.cliEnv(b.env, "forget", "--session", "s-dec", "--yes")
	if code == 0 || !strings.Contains(errs, "only its owner or a team admin") || !strings.Contains(errs, a.user+"@laptop") {
		t.Fatalf("bob's forget of alice's session without a daemon: exit %d: %s %s", code, out, errs)
	}
	b.start()
	if !b.knows("s-dec") {
		t.Fatal("the refused forget removed the session from bob's index")
	}

	// alice's forget travels: the database, bob's index, bob's rebuild.
	a.cli("forget", "--session", "s-dec", "--yes")
	poll(t, 30*time.Second, "alice's forget reaches bob", func() bool { return !b.knows("s-dec") })
	if n := sharetest.QueryInt(t, db, `SELECT count(*) FROM continuity_events WHERE session = 's-dec'`); n != 0 {
		t.Errorf("%d rows of the forgotten session left in PostgreSQL", n)
	}
	if len(b.search("SKIP LOCKED job queue")) != 0 {
		t.Error("bob's search still finds the forgotten decision")
	}
	b.kill9(true)
	b.start()
	poll(t, 30*time.Second, "bob's rebuilt index pulls alice's events again", func() bool { n, _ := b.pulled(); return n == want-1 })
	if n, ids := b.pulled(); n != want-1 || ids != want-1 || b.knows("s-dec") {
		t.Errorf("after bob's rebuild: %d events (%d ids), s-dec known: %v; want %d", n, ids, b.knows("s-dec"), want-1)
	}

	// A team admin may forget a teammate's session: for the whole team.
	a.echoJSON("notes~laptop.jsonl", "s-adm", "a decision to withdraw", "withdrawn by the lead")
	poll(t, 30*time.Second, "bob and dana pull s-adm", func() bool { return b.knows("s-adm") && d.knows("s-adm") })
	d.cli("forget", "--session", "s-adm", "--yes")
	poll(t, 30*time.Second, "the admin's forget reaches alice and bob", func() bool { return !a.knows("s-adm") && !b.knows("s-adm") })
	if n := sharetest.QueryInt(t, db, `SELECT count(*) FROM continuity_events WHERE session = 's-adm'`); n != 0 {
		t.Errorf("%d rows of the session the admin forgot left in PostgreSQL", n)
	}

}

// TestShareFailures: alice ships while her daemon is killed -9 mid-batch
// (twice), while PostgreSQL restarts (pg_ctl restart), while the server
// kills her connections, and while it is down (the backlog shown by
// status and doctor, the error naming the server, a forget made then):
// every event reaches the database and bob's index exactly once, the
// forgotten session nowhere.
func TestShareFailures(t *testing.T) {
	srv, db := newTeamDBOn(t, sharetest.StartOwn(t))
	if !srv.CanRestart() {
		t.Skip("this PostgreSQL cannot be restarted by the tests (set CONTINUITY_TEST_PGDATA and CONTINUITY_TEST_PGBIN)")
	}
	a := newMate(t, db, "t1", "alice", "laptop", false)
	b := newMate(t, db, "t1", "bob", "desk", false)
	a.start()
	b.start()
	total := 0
	batch := func(round, n int) {
		var sb strings.Builder
		for i := range n {
			line, _ := json.Marshal(map[string]string{"type": "exchange", "session_id": fmt.Sprintf("s-%d", round),
				"user": fmt.Sprintf("question %d of round %d", i, round), "ai": "answer"})
			sb.Write(line)
			sb.WriteByte('\n')
		}
		a.ws.appendRaw("load~laptop.jsonl", []byte(sb.String()))
		total += n
	}
	shipped := func() int64 {
		return sharetest.QueryInt(t, db, `SELECT count(*) FROM continuity_events WHERE author = $1`, a.user)
	}

	// kill -9 while shipping.
	batch(1, 1500)
	poll(t, 60*time.Second, "shipping started", func() bool { return shipped() > 0 })
	a.kill9(false)
	a.start()
	// pg_ctl restart while shipping.
	batch(2, 1500)
	poll(t, 60*time.Second, "shipping of round 2 started", func() bool { return shipped() > 1500 })
	srv.Restart(t)
	batch(3, 500)
	// Connections killed by the server, before their COMMIT or after.
	for range 10 {
		sharetest.QueryInt(t, db, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = $1`, a.user)
		time.Sleep(30 * time.Millisecond)
	}
	// The database down: the events wait, status says so.
	poll(t, 120*time.Second, "rounds 1-3 shipped", func() bool { return shipped() == int64(total) })
	srv.StopServer(t)
	batch(4, 500)
	poll(t, 60*time.Second, "status shows the backlog", func() bool {
		sh := a.ws.statusEnv(a.env).Share
		return sh != nil && sh.Backlog == 500 && sh.BacklogAge != "" && strings.Contains(sh.LastError, a.user+"@127.0.0.1")
	})
	if sh := a.ws.statusEnv(a.env).Share; strings.Contains(sh.LastError, "pw-") {
		t.Errorf("the error shows the password: %s", sh.LastError)
	}
	doc, _, _ := a.ws.cliEnv(a.env, "doctor")
	if !strings.Contains(doc, "team memory") || !strings.Contains(doc, "500 events not shipped yet") || !strings.Contains(doc, a.user+"@127.0.0.1") {
		t.Errorf("doctor does not show the backlog and the server:\n%s", doc)
	}
	// A forget made while the database is down travels when it is back.
	a.cli("forget", "--session", "s-1", "--yes")
	a.kill9(false)
	srv.StartServer(t)
	a.start()
	batch(5, 300)
	a.kill9(false) // again, mid-batch
	a.start()

	total -= 1500 // s-1, forgotten
	poll(t, 180*time.Second, "every event shipped, the forget carried out", func() bool { return shipped() == int64(total) })
	if n := sharetest.QueryInt(t, db, `SELECT count(DISTINCT id) FROM continuity_events WHERE author = $1`, a.user); n != int64(total) {
		t.Errorf("%d distinct ids shipped, want %d", n, total)
	}
	poll(t, 180*time.Second, "bob pulled every event and the forget", func() bool { n, _ := b.pulled(); return n == total })
	if n, ids := b.pulled(); n != total || ids != total || b.knows("s-1") {
		t.Errorf("bob holds %d events (%d ids), s-1 known: %v; want %d", n, ids, b.knows("s-1"), total)
	}
	// alice's own index: each line once.
	if st := a.ws.statusEnv(a.env); st.Events != int64(total) {
		t.Errorf("alice's index holds %d events, want %d", st.Events, total)
	}

}
