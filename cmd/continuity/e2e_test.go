package main

import (
	"database/sql"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/praxis-os/continuity/index"
)

// storedLines reads every indexed event's raw line, by producer id.
func storedLines(t *testing.T, root string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(root, ".praxis-os", ".cache", "continuity", "index.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT coalesce(producer_id, event_id), raw, user, ai FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id string
		var raw []byte
		var user, ai sql.NullString
		if err := rows.Scan(&id, &raw, &user, &ai); err != nil {
			t.Fatal(err)
		}
		raw, err := index.StoredLine(raw, user, ai)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = append(out[id], string(raw))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkFullText checks that the full-text index (fulltext.db) holds
// exactly the exchanges of index.db, once each.
func checkFullText(t *testing.T, root string) {
	t.Helper()
	cache := filepath.Join(root, ".praxis-os", ".cache", "continuity")
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(cache, "index.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`ATTACH DATABASE ? AS ft`, "file:"+filepath.Join(cache, "fulltext.db")+"?mode=ro"); err != nil {
		t.Fatal(err)
	}
	var exchanges, docs, missing, extra int64
	err = db.QueryRow(`SELECT
		(SELECT count(*) FROM events WHERE type = 'exchange'),
		(SELECT count(*) FROM ft.events_fts_docsize),
		(SELECT count(*) FROM events WHERE type = 'exchange' AND id NOT IN (SELECT id FROM ft.events_fts_docsize)),
		(SELECT count(*) FROM ft.events_fts_docsize WHERE id NOT IN (SELECT id FROM events WHERE type = 'exchange'))`).
		Scan(&exchanges, &docs, &missing, &extra)
	if err != nil {
		t.Fatal(err)
	}
	if docs != exchanges || missing != 0 || extra != 0 {
		t.Errorf("full-text index: %d documents for %d exchanges (%d missing, %d extra)", docs, exchanges, missing, extra)
	}
}

// checkPrivate checks that everything under dir is private to the user:
// folders 0700, files (and the socket) 0600.
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCrashSoak: 8 concurrent writers append 10,000 exchange lines of mixed
// sizes (up to 64 KiB, one write each) while the daemon is killed with
// SIGKILL at random moments 20 times and restarted. Every line must be
// indexed exactly once, byte for byte. CONTINUITY_SOAK=1 runs a longer one.
func TestCrashSoak(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) { crashSoak(t, mode.args) })
	}
}

// modes are the two ways the daemon learns of changes: fsnotify with the
// rescan as a safety net, and the periodic rescan alone (1 s here).
var modes = []struct {
	name string
	args []string
}{
	{"notify", nil},
	{"rescan-only", []string{"--no-notify", "--rescan", "1s"}},
}

func crashSoak(t *testing.T, daemonArgs []string) {
	total, kills := 10000, 20
	if os.Getenv("CONTINUITY_SOAK") != "" {
		total, kills = 100000, 200
	}
	if testing.Short() {
		total, kills = 1000, 5
	}
	const writers = 8
	ws := newWorkspace(t)
	rng := rand.New(rand.NewPCG(7, 11))
	want := make(map[string]string, total)
	work := make([][]string, writers)
	for i := 0; i < total; i++ {
		var size int
		switch r := rng.IntN(100); {
		case r < 70:
			size = 50 + rng.IntN(2000)
		case r < 95:
			size = 2000 + rng.IntN(14000)
		default:
			size = 16000 + rng.IntN(34000) // JSON escaping grows it to at most ~64 KiB
		}
		id := fmt.Sprintf("soak-%06d", i)
		text := strings.Repeat("lorem ipsum ÷ \"quoted\" \\ ", size/26+1)[:size]
		line := exchangeLine("s"+strconv.Itoa(i%5), id, text[:size/3], text[size/3:])
		if len(line) > 64<<10 {
			t.Fatalf("line %d is %d bytes", i, len(line))
		}
		want[id] = strings.TrimSuffix(line, "\n")
		work[i%writers] = append(work[i%writers], line)
	}

	d := ws.startDaemon(daemonArgs...)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// Two writers share each file: concurrent appends to one file.
			f, err := os.OpenFile(filepath.Join(ws.logs, fmt.Sprintf("session-w%d.jsonl", w%4)), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for i, line := range work[w] {
				if n, err := f.Write([]byte(line)); err != nil || n != len(line) {
					t.Errorf("write: %d, %v", n, err)
					return
				}
				if i%4 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}(w)
	}
	killRng := rand.New(rand.NewPCG(3, 5))
	for k := 0; k < kills; k++ {
		time.Sleep(time.Duration(20+killRng.IntN(200)) * time.Millisecond)
		d.kill()
		d = ws.startDaemon(daemonArgs...)
	}
	wg.Wait()
	eventually(t, 120*time.Second, "all lines indexed", func() bool {
		st := ws.status()
		if st.Exchanges != int64(total) {
			return false
		}
		for _, f := range st.Files {
			if f.Lag != 0 {
				return false
			}
		}
		return st.FullTextPending == 0
	})
	d.stop(t)
	checkFullText(t, ws.root)
	checkPrivate(t, filepath.Join(ws.root, ".praxis-os", ".cache"))

	st := ws.status()
	if st.Exchanges != int64(total) || st.Rejects != 0 || st.DuplicatesSkipped != 0 {
		t.Fatalf("status: %d exchanges (want %d), %d rejects, %d duplicates skipped", st.Exchanges, total, st.Rejects, st.DuplicatesSkipped)
	}
	got := storedLines(t, ws.root)
	if len(got) != total {
		t.Fatalf("%d distinct events stored, want %d", len(got), total)
	}
	for id, line := range want {
		if g := got[id]; len(g) != 1 || g[0] != line {
			t.Fatalf("event %s stored %d times (or differs from the line written)", id, len(g))
		}
	}
	t.Logf("%d lines, %d SIGKILLs: each line indexed once, byte for byte", total, kills)
}

// TestSplitLine: a line written in two parts 300 ms apart is indexed once,
// whole, and never rejected, also across a SIGKILL between the parts.
func TestSplitLine(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) { splitLine(t, mode.args) })
	}
}

func splitLine(t *testing.T, daemonArgs []string) {
	ws := newWorkspace(t)
	d := ws.startDaemon(daemonArgs...)
	line := exchangeLine("split", "split-1", "first half of the question", "and the answer")
	cut := len(line) / 2
	ws.shellAppend("split.jsonl", line[:cut])
	ws.caughtUp(1, int64(cut)) // the marker alone; the half line read, not indexed
	if st := ws.status(); st.Exchanges != 1 || st.Rejects != 0 {
		t.Fatalf("half a line: %d exchanges (the marker's 1), %d rejects", st.Exchanges, st.Rejects)
	}
	ws.shellAppend("split.jsonl", line[cut:])
	eventually(t, 5*time.Second, "split line indexed", func() bool { return ws.status().Exchanges == 2 })

	line2 := exchangeLine("split", "split-2", "second question", "second answer")
	ws.shellAppend("split.jsonl", line2[:10])
	ws.caughtUp(3, 10) // the daemon has read the first part before it is killed
	d.kill()
	ws.shellAppend("split.jsonl", line2[10:])
	d = ws.startDaemon(daemonArgs...)
	eventually(t, 5*time.Second, "split line indexed after SIGKILL", func() bool { return ws.status().Exchanges == 4 })
	d.stop(t)
	if st := ws.status(); st.Rejects != 0 || st.Exchanges != 4 {
		t.Fatalf("%d exchanges, %d rejects", st.Exchanges, st.Rejects)
	}
	got := storedLines(t, ws.root)
	for id, l := range map[string]string{"split-1": line, "split-2": line2} {
		if g := got[id]; len(g) != 1 || g[0] != strings.TrimSuffix(l, "\n") {
			t.Errorf("%s stored as %q", id, g)
		}
	}
}

// TestChaos runs every kind of file mishap and bad input past a running
// daemon, with fsnotify and with the periodic rescan alone. The rescan-only
// run must converge within two rescan periods after each change.
func TestChaos(t *testing.T) {
	for _, mode := range []string{"notify", "rescan-only"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t)
			rescan := time.Second
			args := []string{"--rescan", rescan.String()}
			timeout := 5 * time.Second
			if mode == "rescan-only" {
				args = append(args, "--no-notify")
				timeout = 2 * rescan
			}
			d := ws.startDaemon(args...)
			eventually(t, 5*time.Second, "daemon ready", func() bool { _, _, c := ws.cli("status"); return c == 0 })

			n := 0 // good lines written so far
			good := func(file string) string {
				n++
				return exchangeLine("chaos", fmt.Sprintf("good-%d", n), fmt.Sprintf("question %d", n), "answer")
			}
			settle := func(what string, rejects int) {
				t.Helper()
				start := time.Now()
				eventually(t, timeout, what, func() bool {
					st := ws.status()
					return st.Exchanges == int64(n) && st.Rejects == int64(rejects)
				})
				t.Logf("%s: converged in %s", what, time.Since(start).Round(time.Millisecond))
				d.alive(t)
			}

			ws.appendRaw("a.jsonl", []byte(good("a")+good("a")))
			settle("good lines", 0)

			ws.appendRaw("a.jsonl", []byte(`{"type":"exchange","user":"unterminated`+"\n"+good("a")))
			settle("malformed JSON", 1)
			ws.appendRaw("a.jsonl", []byte("{\"type\":\"exchange\",\"session_id\":\"s\",\"user\":\"bad \xff\xfe bytes\"}\n"+good("a")))
			settle("invalid UTF-8", 2)
			ws.appendRaw("a.jsonl", []byte(`{"type":"exchange","session_id":"s","user":"one"} {"type":"exchange","session_id":"s","user":"two"}`+"\n"+good("a")))
			settle("two objects on one line", 3)
			big := `{"type":"exchange","session_id":"s","user":"` + strings.Repeat("x", 2<<20) + `"}` + "\n"
			ws.appendRaw("a.jsonl", []byte(big+good("a")))
			settle("2 MiB line", 4)

			rs := ws.rejects()
			for _, c := range []struct {
				line   int64
				reason string
			}{{3, "json"}, {5, "utf-8"}, {7, "after the object"}, {9, "line"}} {
				if !hasReject(rs, "a.jsonl", c.line, c.reason) {
					t.Errorf("no reject for a.jsonl:%d mentioning %q in %+v", c.line, c.reason, rs)
				}
			}

			if err := os.Truncate(filepath.Join(ws.logs, "a.jsonl"), 0); err != nil {
				t.Fatal(err)
			}
			ws.appendRaw("a.jsonl", []byte(good("a")))
			settle("truncate to 0 then a new line", 4)

			ws.appendRaw("b.jsonl", []byte(good("b")))
			settle("second file", 4)
			if err := os.Rename(filepath.Join(ws.logs, "b.jsonl"), filepath.Join(ws.logs, "b.jsonl.1")); err != nil {
				t.Fatal(err)
			}
			ws.appendRaw("b.jsonl", []byte(good("b")))
			settle("rename and recreate", 4)

			if err := os.Remove(filepath.Join(ws.logs, "a.jsonl")); err != nil {
				t.Fatal(err)
			}
			ws.appendRaw("b.jsonl", []byte(good("b")))
			settle("delete", 4)

			if err := os.RemoveAll(ws.logs); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(ws.logs, 0o700); err != nil {
				t.Fatal(err)
			}
			ws.appendRaw("c.jsonl", []byte(good("c")))
			settle("rm -rf of the folder and recreate", 4)

			outside := filepath.Join(ws.root, "outside.jsonl")
			os.WriteFile(outside, []byte(exchangeLine("x", "outside", "must not", "be read")), 0o600)
			if err := os.Symlink(outside, filepath.Join(ws.logs, "link.jsonl")); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(ws.logs, "x.jsonl"), 0o600); err != nil {
				t.Fatal(err)
			}
			ws.appendRaw("c.jsonl", []byte(good("c")))
			settle("symlink and FIFO", 4)
			// The good line can be indexed before the two files are
			// looked at (events arrive in any order): wait for them too.
			skipped := map[string]string{}
			eventually(t, timeout, "symlink and FIFO skipped", func() bool {
				clear(skipped)
				for _, s := range ws.status().Skipped {
					skipped[s.Name] = s.Reason
				}
				return strings.Contains(skipped["link.jsonl"], "symbolic link") && strings.Contains(skipped["x.jsonl"], "FIFO")
			})
			if got := storedLines(t, ws.root); len(got["outside"]) != 0 {
				t.Error("a file outside the folder was read through a symlink")
			}
			d.stop(t)
		})
	}
}
