package fulltext

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/indextest"
)

var ctx = context.Background()

// rows is the rows FTS5 finds for word.
func rows(t *testing.T, db *index.DB, word string) int {
	t.Helper()
	hits, err := db.Lexical(ctx, analyze.MatchAny(analyze.WordTerms(word)), [2]float64{}, index.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(hits)
}

func pending(t *testing.T, x *Indexer) int64 {
	t.Helper()
	st, ok := x.Report(ctx).(Status)
	if !ok || st.Error != "" {
		t.Fatalf("Report = %#v", x.Report(ctx))
	}
	return st.Pending
}

// RunUntil, once finish is closed, indexes what was committed before and
// returns: a backfill's "ingested" means full-text searchable.
func TestRunUntil(t *testing.T) {
	f := indextest.New(t)
	f.Commit(indextest.Exchange("e0", "s", indextest.At(1), "early words", ""))
	x := New(f.DB, nil)
	finish := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- x.RunUntil(ctx, finish) }()
	for i := range 5 {
		f.Commit(indextest.Exchange(fmt.Sprint("e", i+1), "s", indextest.At(2+i), "later words", ""))
	}
	// No Notify: closing finish is enough.
	close(finish)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("RunUntil did not return after finish was closed")
	}
	if n := pending(t, x); n != 0 {
		t.Errorf("pending = %d after RunUntil returned", n)
	}
	if got := rows(t, f.DB, "words"); got != 6 {
		t.Errorf("words found in %d rows, want 6", got)
	}
}

// The view follows the events table: what is committed becomes
// searchable after Drain, and a session the index forgets leaves it.
func TestFollowsEvents(t *testing.T) {
	f := indextest.New(t)
	x := New(f.DB, nil)
	if x.Name() != "fulltext" {
		t.Errorf("Name = %q", x.Name())
	}
	f.Commit(indextest.Exchange("a1", "a", indextest.At(1), "kubernetes ingress", "ok"),
		indextest.Exchange("b1", "b", indextest.At(2), "kubernetes pods", "ok"))
	if n := pending(t, x); n != 2 {
		t.Errorf("pending before Drain = %d, want 2", n)
	}
	if err := x.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, f.DB, "kubernetes"); got != 2 {
		t.Fatalf("kubernetes in %d rows, want 2", got)
	}
	if _, err := f.DB.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := x.Remove(ctx, follow.Removal{Sessions: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if err := x.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, f.DB, "ingress"); got != 0 {
		t.Errorf("the forgotten session's words still found in %d rows", got)
	}
	if got := rows(t, f.DB, "pods"); got != 1 {
		t.Errorf("pods in %d rows, want 1", got)
	}
}
