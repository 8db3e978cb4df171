package index

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-os/continuity/watcher"
)

// helperCommit is a stand-in daemon: it takes the lock, resumes the one
// generation from its stored checkpoint and commits batches until killed.
// Line n always has the same content, as a file would.
func helperCommit(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	l, err := AcquireLock(dir)
	if err != nil {
		fail(err)
	}
	defer l.Close()
	db, err := Open(dir, Options{})
	if err != nil {
		fail(err)
	}
	gens, err := db.Generations(ctx)
	if err != nil {
		fail(err)
	}
	var f feeder
	if len(gens) == 0 {
		g := watcher.Generation{Path: "session-crash.jsonl"}
		if g.ID, err = db.CreateGeneration(ctx, g, 0); err != nil {
			fail(err)
		}
		f.gen = g
	} else {
		f.gen = gens[0]
	}
	for i := 0; ; i++ {
		var texts []string
		for j := 0; j < 1+i%50; j++ {
			n := f.gen.Line + int64(len(texts)) + 1
			switch {
			case n%17 == 0:
				texts = append(texts, fmt.Sprintf("not json %d", n))
			case n%23 == 0:
				texts = append(texts, "")
			default:
				texts = append(texts, exchange("", fmt.Sprintf("line-%d", n), strings.Repeat("w", int(n%300))))
			}
		}
		if err := db.Commit(ctx, f.batch(texts...)); err != nil {
			fail(err)
		}
		if i == 0 {
			fmt.Println("committing")
		}
	}
}

func TestCrashKeepsLinesAndCheckpointTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := testDir(t)
	var lastLine int64
	for round := 0; round < 4; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "CONTINUITY_INDEX_HELPER=commit", "CONTINUITY_INDEX_DIR="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "committing\n" {
			cmd.Process.Kill()
			t.Fatalf("round %d: helper said %q, %v", round, line, err)
		}
		time.Sleep(time.Duration(100+round*70) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		db, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		gens, err := db.Generations(ctx)
		if err != nil || len(gens) != 1 {
			t.Fatalf("round %d: generations %+v, %v", round, gens, err)
		}
		g := gens[0]
		if g.Line <= lastLine {
			t.Errorf("round %d: no progress (line %d, before %d)", round, g.Line, lastLine)
		}
		lastLine = g.Line

		// Every line up to the checkpoint is stored exactly once (as an
		// event, a reject, or nothing for a blank), and none beyond it.
		type span struct{ start, end, line int64 }
		var spans []span
		rows, err := db.r.Query(`SELECT start_offset, end_offset, line FROM events
			UNION ALL SELECT start_offset, end_offset, line FROM rejects ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s span
			rows.Scan(&s.start, &s.end, &s.line)
			spans = append(spans, s)
		}
		rows.Close()
		var pos, line int64
		for _, s := range spans {
			// Blank lines (every 23rd) are one byte each and not stored.
			for s.start > pos && (line+1)%23 == 0 {
				pos++
				line++
			}
			if s.start != pos || s.line != line+1 {
				t.Fatalf("round %d: stored line %d at %d, want line %d at %d", round, s.line, s.start, line+1, pos)
			}
			pos, line = s.end, line+1
		}
		for pos < g.Offset && (line+1)%23 == 0 {
			pos++
			line++
		}
		if pos != g.Offset || line != g.Line {
			t.Fatalf("round %d: stored lines end at %d (line %d), checkpoint at %d (line %d)", round, pos, line, g.Offset, g.Line)
		}
		st := mustStatus(t, db)
		if st.DuplicatesSkipped != 0 {
			t.Errorf("round %d: %d duplicates", round, st.DuplicatesSkipped)
		}
		t.Logf("round %d: %d lines, %d events, %d rejects", round, g.Line, st.Events, st.Rejects)
		db.Close()
	}
}
