package index

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestUndatedEventsInPlace (issue 22, item 8): a line without a timestamp
// takes its place from the file order: the time it was read (or the
// file's modification, when earlier), within the times of the events
// around it. Before: always the time it was read, so a context_reset
// written without one in an old log came after every exchange when the
// log was backfilled.
func TestUndatedEventsInPlace(t *testing.T) {
	at := func(hm string) string { return "2025-01-02T" + hm + ":00Z" }
	dated := func(id, hm string) string {
		return `{"type":"exchange","id":"` + id + `","session_id":"s","timestamp":"` + at(hm) + `","user":"u ` + id + `","ai":"a"}`
	}
	undated := func(id string) string {
		return `{"type":"exchange","id":"` + id + `","session_id":"s","user":"u ` + id + `","ai":"a"}`
	}
	reset := `{"type":"context_reset","id":"r","session_id":"s","reason":"window full"}`
	ts := func(hm string) time.Time { v, _ := time.Parse(time.RFC3339, at(hm)); return v }
	read := fixedNow // the time the lines are read
	type batch struct {
		lines   []string
		more    bool
		modTime time.Time
	}
	for _, tc := range []struct {
		name    string
		batches []batch
		want    []time.Time // the stored times, in file order
	}{
		{"between its neighbours", []batch{{lines: []string{dated("e1", "10:00"), reset, dated("e2", "10:30"), dated("e3", "10:40")}}},
			[]time.Time{ts("10:00"), ts("10:30"), ts("10:30"), ts("10:40")}},
		{"last line: read now", []batch{{lines: []string{dated("e1", "10:00"), reset}}},
			[]time.Time{ts("10:00"), read}},
		{"last line of an old file: its modification", []batch{{lines: []string{dated("e1", "10:00"), reset}, modTime: ts("11:00")}},
			[]time.Time{ts("10:00"), ts("11:00")}},
		{"last of a batch cut by its limits", []batch{
			{lines: []string{dated("e1", "10:00"), reset}, more: true, modTime: ts("23:00")},
			{lines: []string{dated("e2", "10:30")}, modTime: ts("23:00")}},
			[]time.Time{ts("10:00"), ts("10:00"), ts("10:30")}},
		{"first line", []batch{{lines: []string{reset, dated("e2", "10:30")}}},
			[]time.Time{ts("10:30"), ts("10:30")}},
		{"appended later, the one before already stored", []batch{
			{lines: []string{dated("e1", "10:00")}},
			{lines: []string{undated("u1")}, modTime: read}},
			[]time.Time{ts("10:00"), read}},
		{"never before the one before", []batch{{lines: []string{dated("e1", "10:00"), undated("u1")}, modTime: ts("09:00")}},
			[]time.Time{ts("10:00"), ts("10:00")}},
		{"a file without any timestamp", []batch{{lines: []string{undated("u1"), reset, undated("u2")}, modTime: ts("09:00")}},
			[]time.Time{ts("09:00"), ts("09:00"), ts("09:00")}},
		{"many lines, one batch", []batch{{lines: manyLines(dated, undated)}},
			append([]time.Time{ts("10:00")}, slices.Repeat([]time.Time{ts("10:30")}, 40)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t, testDir(t))
			f := newFeeder(t, db, "a.jsonl")
			for _, b := range tc.batches {
				wb := f.batch(b.lines...)
				wb.More, wb.ModTime = b.more, b.modTime
				commit(t, db, wb)
			}
			var got []time.Time
			rows, err := db.r.QueryContext(ctx, `SELECT ts FROM events ORDER BY start_offset`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var n int64
				if err := rows.Scan(&n); err != nil {
					t.Fatal(err)
				}
				got = append(got, time.Unix(0, n).UTC())
			}
			// The undated lines of a batch also carry their place in it
			// in nanoseconds (file order by time): equal to the
			// microsecond, and in file order.
			near := func(a, b time.Time) bool { d := a.Sub(b); return d > -time.Microsecond && d < time.Microsecond }
			if !slices.EqualFunc(got, tc.want, near) {
				t.Errorf("times %v, want %v", got, tc.want)
			}
		})
	}
}

// manyLines is a dated line, 39 undated ones (more than a batch prepares
// without its pipeline), then a dated one.
func manyLines(dated func(id, hm string) string, undated func(id string) string) []string {
	out := []string{dated("e1", "10:00")}
	for i := range 39 {
		out = append(out, undated(fmt.Sprint("u", i)))
	}
	return append(out, dated("e2", "10:30"))
}
