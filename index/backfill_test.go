package index

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// During a backfill the WAL is checkpointed beside the commits, and
// still starts over instead of growing by everything committed; at its
// end the writer checkpoints by itself again, and every event is there.
func TestBackfillCheckpoints(t *testing.T) {
	defer func(b, f int64) { backfillCheckpointBytes, backfillWALFrames = b, f }(backfillCheckpointBytes, backfillWALFrames)
	backfillCheckpointBytes, backfillWALFrames = 64<<10, 32 // 512 KiB of WAL

	dir := testDir(t)
	db := openTest(t, dir)
	end, err := db.BeginBackfill(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := newFeeder(t, db, "a.jsonl")
	text := strings.Repeat("words of an exchange ", 50)
	const batches, perBatch = 150, 40
	maxWAL := int64(0)
	for i := range batches {
		lines := make([]string, perBatch)
		for j := range lines {
			lines[j] = exchangeAt("s", hour(1), fmt.Sprintf("question %d.%d %s", i, j, text), text)
		}
		commit(t, db, f.batch(lines...))
		// The background checkpoint it asked for, if any, done before the
		// next commit (not a race of the machine's load against the bound).
		waitCheckpoint(db.ckpt.Load())
		if fi, err := os.Stat(db.path + "-wal"); err == nil {
			maxWAL = max(maxWAL, fi.Size())
		}
	}
	// 6,000 lines of 2 KB: about 20 MiB of WAL written in all.
	if maxWAL > 5<<20 {
		t.Errorf("the WAL grew to %.1f MiB during the backfill, want it started over (at 0.5 MiB)", float64(maxWAL)/(1<<20))
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}
	var auto int
	if err := db.w.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 1000 {
		t.Errorf("wal_autocheckpoint = %d after the backfill, want 1000", auto)
	}
	var n int
	var check string
	if err := db.r.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := db.w.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil {
		t.Fatal(err)
	}
	if n != batches*perBatch || check != "ok" {
		t.Errorf("%d events (want %d), integrity %q", n, batches*perBatch, check)
	}
}

// waitCheckpoint returns once the checkpoint asked of c, if any, has been
// picked up (and any that was running has ended): the next commit then
// runs beside a checkpoint, as in a backfill, rather than racing the
// machine's load to ask for one. It does not wait for the checkpoint
// picked up to end: were every checkpoint done before the next commit,
// SQLite would start the WAL over by itself and the test would no longer
// see whether the writer does (it passes then without the writer's
// restart; with this wait it fails without it, the WAL at 15-20 MiB).
func waitCheckpoint(c *checkpointer) {
	for len(c.wake) > 0 {
		time.Sleep(time.Millisecond)
	}
	c.mu.Lock()
	c.mu.Unlock()
}
