package index

import (
	"testing"
)

// TestAdjacent: each exchange's neighbours in its session's order (by
// time, not by line), the other sessions and the other event types
// skipped; a forgotten session's exchanges are gone, and so are they as
// neighbours; unknown rows are left out.
func TestAdjacent(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "log.jsonl")
	commit(t, db, f.batch(
		exchangeAt("s1", hour(1), "one", "a"),
		exchangeAt("s1", hour(3), "three", "a"), // logged before two, later in time
		exchangeAt("s2", hour(2), "other", "a"),
		`{"type":"context_reset","session_id":"s1","reason":"compaction","timestamp":"2025-03-01T02:30:00Z"}`,
		exchangeAt("s1", hour(2), "two", "a"),
		exchangeAt("gone", hour(4), "g1", "a"),
		exchangeAt("gone", hour(5), "g2", "a"),
	))
	row := rowsOf(t, db)
	got, err := db.Adjacent(ctx, []int64{row["one"], row["two"], row["three"], row["other"], row["g1"], 999})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]Adjacency{
		row["one"]:   {0, row["two"]},
		row["two"]:   {row["one"], row["three"]},
		row["three"]: {row["two"], 0},
		row["other"]: {0, 0},
		row["g1"]:    {0, row["g2"]},
	}
	if len(got) != len(want) {
		t.Errorf("Adjacent = %v, want %v", got, want)
	}
	for r, w := range want {
		if got[r] != w {
			t.Errorf("row %d: %+v, want %+v", r, got[r], w)
		}
	}
	if _, err := db.DeleteSession(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	got, err = db.Adjacent(ctx, []int64{row["g1"], row["g2"]})
	if err != nil || len(got) != 0 {
		t.Errorf("after forgetting its session: %v, %v; want nothing", got, err)
	}
}
