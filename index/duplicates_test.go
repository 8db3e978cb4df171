package index

import (
	"strings"
	"testing"
)

// TestReusedIDs: a line skipped because its id is already stored is listed
// by Rejects with the line that first used the id: as a replay when it is
// the same line, as a reused id when its content differs (protocol.md,
// section 3). Both count as duplicates; nothing else of the batch changes.
func TestReusedIDs(t *testing.T) {
	tests := []struct {
		name   string
		second string // a line of b.jsonl after a.jsonl's first line (id "1")
		kind   string
		reason string
	}{
		{"identical replay", exchange("s1", "1", "hello"), KindDuplicate, `duplicate of a.jsonl:1 (same id "1", same content)`},
		{"other content", exchange("s2", "1", "other"), KindDuplicateID, `id "1" reused with different content: first used at a.jsonl:1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, testDir(t))
			a := newFeeder(t, db, "a.jsonl")
			commit(t, db, a.batch(exchange("s1", "1", "hello")))
			b := newFeeder(t, db, "b.jsonl")
			batch := b.batch(exchange("s2", "", "first of b"), tt.second)
			commit(t, db, batch)
			commit(t, db, batch) // a replayed batch adds nothing

			rs, err := db.Rejects(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 {
				t.Fatalf("rejects = %+v, want 1", rs)
			}
			r := rs[0]
			if r.Kind != tt.kind || !strings.Contains(r.Reason, tt.reason) || r.File != "b.jsonl" || r.Line != 2 || r.Excerpt == "" {
				t.Errorf("reject %+v, want b.jsonl:2 of kind %s with %q", r, tt.kind, tt.reason)
			}
			if st := mustStatus(t, db); st.DuplicatesSkipped != 1 || st.Events != 2 {
				t.Errorf("status: %d duplicates, %d events; want 1, 2", st.DuplicatesSkipped, st.Events)
			}
		})
	}
}

// TestBOMCounted: a line read with its byte order mark skipped (the
// watcher strips it) counts in CounterBOMsSkipped, once.
func TestBOMCounted(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	b := f.batch(exchange("s1", "", "hi"), exchange("s1", "", "again"))
	b.Lines[0].BOM = true
	commit(t, db, b)
	commit(t, db, b)
	if st := mustStatus(t, db); st.BOMsSkipped != 1 || st.Events != 2 {
		t.Errorf("status: %d byte order marks, %d events; want 1, 2", st.BOMsSkipped, st.Events)
	}
}
