package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/logformat"
)

// machine is a workspace standing for one machine of a user's: its own
// CONTINUITY_MACHINE, its own daemon and index, logs that a sync tool
// carries to the other machine (syncLogs).
type machine struct {
	t    *testing.T
	name string
	ws   *workspace
	env  []string
	d    *daemonProc
}

func newMachine(t *testing.T, name string) *machine {
	return &machine{t: t, name: name, ws: newWorkspace(t), env: []string{logformat.MachineEnv + "=" + name}}
}

func (m *machine) start() { m.t.Helper(); m.d = m.ws.startDaemonEnv(m.env) }

// kill9 kills the daemon with SIGKILL; rebuild also deletes the cache
// (the index, every view): the next start rebuilds it from the logs.
func (m *machine) kill9(rebuild bool) {
	m.t.Helper()
	if m.d != nil {
		m.d.kill()
		m.d = nil
	}
	if rebuild {
		if err := os.RemoveAll(filepath.Join(m.ws.root, ".praxis-os", ".cache")); err != nil {
			m.t.Fatal(err)
		}
	}
}

func (m *machine) cli(args ...string) string {
	m.t.Helper()
	out, errs, code := m.ws.cliEnv(m.env, args...)
	if code != 0 {
		m.t.Fatalf("%s: continuity %v: exit %d: %s %s", m.name, args, code, out, errs)
	}
	return out
}

// echo appends a line with a shell's >>, as an editor rule does.
func (m *machine) echo(file, line string) {
	m.t.Helper()
	cmd := exec.Command("sh", "-c", `printf '%s\n' "$1" >> "$2"`, "sh", line, filepath.Join(m.ws.logs, file))
	if out, err := cmd.CombinedOutput(); err != nil {
		m.t.Fatalf("sh >>: %v %s", err, out)
	}
}

// indexed is what the machine's index holds: event id by line, the lines
// of an id-less event counted in order (file content, occurrence).
type indexedEvent struct {
	ID, Session, User string
}

func (m *machine) events() []indexedEvent {
	m.t.Helper()
	path := filepath.Join(m.ws.root, ".praxis-os", ".cache", "continuity", "index.db")
	if _, err := os.Stat(path); err != nil {
		return nil // not created yet (a rebuild)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		m.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT event_id, coalesce(session_id, ''), coalesce(user, '') FROM events ORDER BY session_id, user, event_id`)
	if err != nil {
		return nil // being created
	}
	defer rows.Close()
	var out []indexedEvent
	for rows.Next() {
		var e indexedEvent
		if err := rows.Scan(&e.ID, &e.Session, &e.User); err != nil {
			m.t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// knows reports whether the machine's index holds events of session.
func (m *machine) knows(session string) bool {
	for _, e := range m.events() {
		if e.Session == session {
			return true
		}
	}
	return false
}

// caughtUp waits until the daemon has read every byte of every log and
// carried out the forgets (the status' lag is 0, nothing pending), then
// until its event count is want (the forgets of another machine are
// carried out within a second).
func (m *machine) caughtUp(want int) []indexedEvent {
	m.t.Helper()
	var evs []indexedEvent
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _, code := m.ws.cliEnv(m.env, "status", "--json")
		var st struct {
			LagBytes        int64 `json:"lag_bytes"`
			FullTextPending int64 `json:"fulltext_pending"`
			Files           []struct {
				NotSeen bool `json:"not_seen"`
				Missing bool `json:"missing"`
			} `json:"files"`
			Daemon struct {
				Running bool `json:"running"`
			} `json:"daemon"`
		}
		if code == 0 && json.Unmarshal([]byte(out), &st) == nil && st.Daemon.Running && st.LagBytes == 0 {
			seen := true
			for _, f := range st.Files {
				seen = seen && !f.NotSeen && !f.Missing
			}
			if seen {
				if evs = m.events(); len(evs) == want {
					return evs
				}
			}
		}
		if time.Now().After(deadline) {
			stderr := ""
			if m.d != nil {
				stderr = m.d.stderr.String()
				if len(stderr) > 6000 {
					stderr = stderr[len(stderr)-6000:]
				}
			}
			m.t.Fatalf("%s: not caught up with %d events within 60s: %d events, status %s\n%s", m.name, want, len(evs), out, stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// How syncLogs settles a file both machines changed.
const (
	conflictSyncthing = iota // the receiver's version renamed .sync-conflict-..., the sender's in place
	conflictDropbox          // the same, named "x (m's conflicted copy ...)"
	conflictUnion            // git's merge=union: the lines of both, in another order, on both sides
)

// syncLogs carries the logs folder of src to dst as a sync tool does:
// a new or longer file is written to a temp file and renamed into place;
// a file both changed becomes a conflict (how: conflict). The files
// continuity writes beside the logs (.forgotten.<machine>) travel too.
func syncLogs(t *testing.T, src, dst *machine, conflict int, stamp int) {
	t.Helper()
	ents, err := os.ReadDir(src.ws.logs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || name == ".gitignore" || logformat.SyncTemp(name) {
			continue
		}
		from, err := os.ReadFile(filepath.Join(src.ws.logs, name))
		if err != nil {
			t.Fatal(err)
		}
		to, err := os.ReadFile(filepath.Join(dst.ws.logs, name))
		switch {
		case os.IsNotExist(err), err == nil && bytes.HasPrefix(from, to) && !bytes.Equal(from, to):
			writeViaTemp(t, dst.ws.logs, name, from, stamp%2 == 0)
		case err != nil:
			t.Fatal(err)
		case bytes.Equal(from, to), bytes.HasPrefix(to, from):
			// The same, or dst is ahead: the other direction carries it.
		default:
			switch conflict {
			case conflictUnion:
				merged := unionMerge(to, from)
				writeViaTemp(t, dst.ws.logs, name, merged, false)
				writeViaTemp(t, src.ws.logs, name, merged, true)
			default:
				copyName := conflictName(name, src.name, conflict, stamp)
				if err := os.Rename(filepath.Join(dst.ws.logs, name), filepath.Join(dst.ws.logs, copyName)); err != nil {
					t.Fatal(err)
				}
				writeViaTemp(t, dst.ws.logs, name, from, true)
			}
		}
	}
}

// writeViaTemp writes a file as Syncthing does: a temp file in the folder
// (.syncthing.x.tmp or ~syncthing~x.tmp), renamed over the file.
func writeViaTemp(t *testing.T, dir, name string, data []byte, tilde bool) {
	t.Helper()
	tmp := filepath.Join(dir, ".syncthing."+name+".tmp")
	if tilde {
		tmp = filepath.Join(dir, "~syncthing~"+name+".tmp")
	}
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func conflictName(name, device string, conflict, stamp int) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	if conflict == conflictDropbox {
		return fmt.Sprintf("%s (%s's conflicted copy 2026-11-%02d)%s", base, device, 1+stamp%28, ext)
	}
	return fmt.Sprintf("%s.sync-conflict-20261129-%06d-%s%s", base, stamp%240000, strings.ToUpper(device)+"AAAA", ext)
}

// unionMerge is git's merge=union of two versions of a log: the lines
// of theirs not in ours (as a multiset) first, then ours: each line of
// both once, in another order than either's.
func unionMerge(ours, theirs []byte) []byte {
	count := map[string]int{}
	lines := func(b []byte) []string {
		s := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(s) == 1 && s[0] == "" {
			return nil
		}
		return s
	}
	for _, l := range lines(ours) {
		count[l]++
	}
	var out []string
	for _, l := range lines(theirs) {
		if count[l] > 0 {
			count[l]--
			continue
		}
		out = append(out, l)
	}
	out = append(out, lines(ours)...)
	return []byte(strings.Join(out, "\n") + "\n")
}

// ledger is what the two machines' users wrote: every line once, and the
// sessions forgotten.
type ledger struct {
	lines     map[string]int // session \x00 user text -> lines written
	forgotten map[string]bool
}

func newLedger() *ledger { return &ledger{lines: map[string]int{}, forgotten: map[string]bool{}} }

func (l *ledger) add(session, user string) { l.lines[session+"\x00"+user]++ }

func (l *ledger) want() int {
	n := 0
	for k, c := range l.lines {
		if !l.forgotten[strings.SplitN(k, "\x00", 2)[0]] {
			n += c
		}
	}
	return n
}

// checkInvariants: each line written is indexed once on each machine
// (no more: a copy's lines are the same events; no less: a line only in a
// conflict copy is indexed), the ids are the same on both, and no event
// of a forgotten session is left.
func checkInvariants(t *testing.T, l *ledger, ms ...*machine) {
	t.Helper()
	var ids [][]string
	for _, m := range ms {
		evs := m.caughtUp(l.want())
		got := map[string]int{}
		var mine []string
		for _, e := range evs {
			got[e.Session+"\x00"+e.User]++
			mine = append(mine, e.ID)
			if l.forgotten[e.Session] {
				t.Errorf("%s: an event of forgotten session %s is indexed: %q", m.name, e.Session, e.User)
			}
		}
		for k, c := range l.lines {
			if s := strings.SplitN(k, "\x00", 2)[0]; !l.forgotten[s] && got[k] != c {
				t.Errorf("%s: %q indexed %d times, written %d", m.name, strings.ReplaceAll(k, "\x00", ": "), got[k], c)
			}
		}
		sort.Strings(mine)
		ids = append(ids, mine)
	}
	for i := 1; i < len(ids); i++ {
		if strings.Join(ids[0], ",") != strings.Join(ids[i], ",") {
			t.Fatalf("the ids differ between %s and %s:\n%v\n%v", ms[0].name, ms[i].name, ids[0], ids[i])
		}
	}
}

func line(session, user string) string {
	b, _ := json.Marshal(map[string]string{"type": "exchange", "session_id": session, "user": user, "ai": "noted"})
	return string(b)
}

// TestTwoMachinesSync: two machines (CONTINUITY_MACHINE a and b) share
// their logs through a sync tool, simulated both ways as the tools do it
// (temp file and rename, Syncthing and Dropbox conflict copies, git's
// union merge), over rounds of appends on both sides (editor rules'
// echo >> lines without ids, some identical, to a file of each machine
// and to one file both write; continuity log), with kill -9 and rebuilds
// (the cache deleted) between them, and a forget made on one machine.
// After each round: each line indexed once on each machine, the same ids
// on both, the forget held. On the old code the ids of id-less lines
// differed between the machines and after every rebuild, a conflict
// copy's lines were indexed again, and the forget did not travel.
func TestTwoMachinesSync(t *testing.T) {
	t.Parallel()
	a, b := newMachine(t, "a"), newMachine(t, "b")
	a.start()
	b.start()
	l := newLedger()
	// A sync tool's temp files left behind (a transfer cut short): never
	// read.
	a.echo(".syncthing.session-t~b.jsonl.tmp", line("t", "half a transfer"))
	b.echo("~syncthing~session-t~a.jsonl.tmp", line("t", "half a transfer"))
	// The recipe shares .praxis-os/.conversations, or keeps the cache out.
	if st, err := os.ReadFile(filepath.Join("..", "..", "recipes", "sync", "stignore")); err != nil || !strings.Contains(string(st), "/.praxis-os/.cache") {
		t.Errorf("recipes/sync/stignore does not keep the cache out: %v %s", err, st)
	}
	conflicts := []int{conflictSyncthing, conflictDropbox, conflictUnion, conflictSyncthing}
	for round := range 4 {
		for _, m := range []*machine{a, b} {
			own := logformat.MachineLogName("session-s"+strconv.Itoa(round%2), m.name)
			for i := range 2 {
				u := fmt.Sprintf("%s round %d line %d", m.name, round, i)
				m.echo(own, line("s"+strconv.Itoa(round%2), u))
				l.add("s"+strconv.Itoa(round%2), u)
			}
			// Identical lines: two events.
			same := fmt.Sprintf("ok from %s in round %d", m.name, round)
			m.echo(own, line("s2", same))
			m.echo(own, line("s2", same))
			l.add("s2", same)
			l.add("s2", same)
			// One file both machines append to (an editor rule without
			// the machine in the name): conflicts.
			u := fmt.Sprintf("shared by %s round %d", m.name, round)
			m.echo("notes.jsonl", line("notes", u))
			l.add("notes", u)
			u = fmt.Sprintf("logged by %s round %d", m.name, round)
			m.cli("log", "--session", "s3", "--user", u, "--ai", "ok")
			l.add("s3", u)
		}
		if round == 2 {
			// A forget on b, with lines of the session on both (and
			// more written on a in the next round, which stay out).
			b.cli("forget", "--session", "s1")
			l.forgotten["s1"] = true
		}
		syncLogs(t, a, b, conflicts[round], round*2)
		syncLogs(t, b, a, conflicts[round], round*2+1)
		switch round {
		case 0:
			a.kill9(false)
			a.start()
		case 1:
			b.kill9(true) // a rebuild
			b.start()
		case 3:
			a.kill9(true)
			b.kill9(true)
			a.start()
			b.start()
		}
		checkInvariants(t, l, a, b)
	}
	// status and doctor name the conflict copies.
	out := a.cli("status")
	if !strings.Contains(out, "conflict copies") || !strings.Contains(out, "sync-conflict") {
		t.Errorf("status names no conflict copy:\n%s", out)
	}
	out = a.cli("doctor", "--json")
	if !strings.Contains(out, "conflicted copy") || !strings.Contains(out, "indexed once") {
		t.Errorf("doctor names no conflict copy:\n%s", out)
	}
}

// TestTwoMachinesRandom is TestTwoMachinesSync at random: appends on
// either machine (own file, shared file, identical lines, continuity
// log), syncs one way or both with any kind of conflict, forgets, kill
// -9 and rebuilds, in a random order, the invariants checked after each
// sync both ways. CONTINUITY_SYNC_SEQUENCES (default 2) sequences of
// CONTINUITY_SYNC_STEPS (default 12) steps, seeded by
// CONTINUITY_SYNC_SEED (default: the time; printed).
func TestTwoMachinesRandom(t *testing.T) {
	t.Parallel()
	seqs, steps := envInt("CONTINUITY_SYNC_SEQUENCES", 2), envInt("CONTINUITY_SYNC_STEPS", 12)
	seed := int64(envInt("CONTINUITY_SYNC_SEED", int(time.Now().UnixNano()%1e9)))
	t.Logf("seed %d (CONTINUITY_SYNC_SEED), %d sequences of %d steps", seed, seqs, steps)
	for s := range seqs {
		t.Run(strconv.Itoa(s), func(t *testing.T) { randomSync(t, rand.New(rand.NewSource(seed+int64(s))), steps) })
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func randomSync(t *testing.T, r *rand.Rand, steps int) {
	ms := []*machine{newMachine(t, "a"), newMachine(t, "b")}
	for _, m := range ms {
		m.start()
	}
	l := newLedger()
	sessions := []string{"r0", "r1", "r2", "r3"}
	live := func() []string {
		var out []string
		for _, s := range sessions {
			if !l.forgotten[s] {
				out = append(out, s)
			}
		}
		return out
	}
	n := 0
	for step := range steps {
		m := ms[r.Intn(2)]
		var did []string
		for range 1 + r.Intn(4) {
			ss := live()
			if len(ss) == 0 {
				break
			}
			s := ss[r.Intn(len(ss))]
			n++
			u := fmt.Sprintf("%s wrote %d", m.name, n)
			switch k := r.Intn(10); {
			case k < 4:
				m.echo(logformat.MachineLogName("session-"+s, m.name), line(s, u))
				l.add(s, u)
			case k < 6:
				m.echo("shared.jsonl", line(s, u))
				l.add(s, u)
			case k < 8:
				u = "the same line in " + m.name + " " + s // identical lines
				m.echo(logformat.MachineLogName("session-"+s, m.name), line(s, u))
				l.add(s, u)
			default:
				m.cli("log", "--session", s, "--user", u, "--ai", "ok")
				l.add(s, u)
			}
		}
		did = append(did, "append on "+m.name)
		switch k := r.Intn(10); {
		case k < 2:
			if ss := live(); len(ss) > 1 && m.knows(ss[0]) {
				s := ss[0]
				m.cli("forget", "--session", s)
				l.forgotten[s] = true
				did = append(did, "forget "+s+" on "+m.name)
			}
		case k < 4:
			m.kill9(r.Intn(2) == 0)
			m.start()
			did = append(did, "kill -9 / rebuild "+m.name)
		}
		c := r.Intn(3)
		if r.Intn(3) == 0 {
			// One way only: the other machine is behind until a later
			// step.
			syncLogs(t, m, ms[0], c, step)
			syncLogs(t, m, ms[1], c, step)
			did = append(did, fmt.Sprintf("sync one way from %s (conflicts %d)", m.name, c))
			t.Logf("step %d: %s", step, strings.Join(did, ", "))
			continue
		}
		syncLogs(t, ms[0], ms[1], c, 2*step)
		syncLogs(t, ms[1], ms[0], c, 2*step+1)
		did = append(did, fmt.Sprintf("sync both ways (conflicts %d)", c))
		t.Logf("step %d: %s", step, strings.Join(did, ", "))
		checkInvariants(t, l, ms...)
		if t.Failed() {
			return
		}
	}
	syncLogs(t, ms[0], ms[1], conflictSyncthing, 2*steps)
	syncLogs(t, ms[1], ms[0], conflictSyncthing, 2*steps+1)
	checkInvariants(t, l, ms...)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
