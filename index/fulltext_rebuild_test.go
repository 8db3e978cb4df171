package index

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// TestFullTextDeletedWhileOpen: fulltext.db (with -wal and -shm) deleted
// under a writer that has it open is rebuilt by CheckFullText, while
// searches run concurrently: meanwhile they answer or report
// ErrNoFullText, never another error; after, they find every exchange,
// including one committed after the rebuild.
func TestFullTextDeletedWhileOpen(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(exchange("s", "", "alpha one"), exchange("s", "", "alpha two")))
	drainFullText(t, db)
	if rebuilt, err := db.CheckFullText(ctx); rebuilt || err != nil {
		t.Fatalf("CheckFullText on an intact file: %v, %v", rebuilt, err)
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := db.Lexical(ctx, "alpha", [2]float64{}, Filter{}, 0); err != nil && !errors.Is(err, ErrNoFullText) {
					errs <- err
					return
				}
			}
		}()
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db.ftPath + suffix)
	}
	rebuilt, err := db.CheckFullText(ctx)
	if err != nil || !rebuilt {
		t.Fatalf("CheckFullText after the delete: rebuilt %v, %v", rebuilt, err)
	}
	commit(t, db, f.batch(exchange("s", "", "alpha three")))
	drainFullText(t, db)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("search during the rebuild: %v", err)
	}
	if got := ftsRows(t, db, "alpha"); len(got) != 3 {
		t.Errorf("after the rebuild, alpha found in %v, want 3 exchanges", got)
	}
	if _, err := os.Stat(db.ftPath); err != nil {
		t.Errorf("fulltext.db not recreated: %v", err)
	}
}
