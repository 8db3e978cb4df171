package index

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// A step's exchanges are inserted a chunk (ftInsertRows) per statement and
// the rest one by one: every exchange is found, by its own word and by the
// word all share, whatever its place in the chunks (two full chunks, a
// partial one; an event that is not an exchange in between).
func TestFullTextChunkedInsert(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	n := 2*ftInsertRows + 5
	var lines []string
	for i := range n {
		lines = append(lines, exchangeAt("s", hour(i), fmt.Sprintf("shared unique%d", i), fmt.Sprintf("answer%d", i)))
		if i == ftInsertRows-1 {
			lines = append(lines, `{"type":"context_reset","timestamp":"2026-01-01T00:00:00Z","session_id":"s"}`)
		}
	}
	commit(t, db, f.batch(lines...))
	drainFullText(t, db)
	rows := rowsOf(t, db)
	var want []int64
	for i := range n {
		row := rows[fmt.Sprintf("shared unique%d", i)]
		want = append(want, row)
		if got := ftsRows(t, db, fmt.Sprintf("unique%d", i)); !reflect.DeepEqual(got, []int64{row}) {
			t.Errorf("unique%d found in %v, want [%d]", i, got, row)
		}
		if got := ftsRows(t, db, fmt.Sprintf("answer%d", i)); !reflect.DeepEqual(got, []int64{row}) {
			t.Errorf("answer%d found in %v, want [%d]", i, got, row)
		}
	}
	got := ftsRows(t, db, "shared")
	slices.Sort(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shared found in %d rows %v, want %d", len(got), got, len(want))
	}
	if p := fullTextPending(t, db); p != 0 {
		t.Errorf("pending = %d after Drain", p)
	}
}
