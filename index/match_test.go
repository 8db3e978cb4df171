package index

import (
	"strings"
	"testing"

	"github.com/praxis-os/continuity/watcher"
)

// TestMatchLines: lines read again from an older copy of a log match what
// was stored from the same offsets, as stored (redacted); another text,
// other offsets or other bytes differ; lines nobody stored count in
// neither.
func TestMatchLines(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	secret := "key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
	b := f.batch(exchange("s", "", "first"), "", exchange("s", "", secret), "not json", exchange("s", "", "fourth"))
	commit(t, db, b)
	gen := b.Gen.ID
	if raw := rawTexts(t, db); len(raw) != 3 || strings.Contains(raw[1], "sk-proj-") {
		t.Fatalf("the secret was not redacted in the stored line: %q", raw)
	}
	ls := b.Lines // first, secret, not json, fourth (the blank one is not a line)
	edit := func(l watcher.Line, data string) watcher.Line {
		l.Data = []byte(data)
		l.End = l.Start + int64(len(data)) + 1
		return l
	}
	for _, tc := range []struct {
		name       string
		lines      []watcher.Line
		same       int
		wantDiffer bool
	}{
		{"all the same", ls, 4, false},
		{"a prefix", ls[:2], 2, false},
		{"the secret as written matches its redacted form", ls[1:2], 1, false},
		{"a reject matches its excerpt", ls[2:3], 1, false},
		{"another text at the same offset", []watcher.Line{edit(ls[0], exchange("s", "", "firsT"))}, 0, true},
		{"other bytes, same length, in a reject", []watcher.Line{edit(ls[2], "not JSON")}, 0, true},
		{"another length", []watcher.Line{edit(ls[3], exchange("s", "", "fourth!"))}, 0, true},
		{"nobody stored it", []watcher.Line{{Number: 9, Start: 10_000, End: 10_010, Data: []byte("whatever")}}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			same, differ, err := db.MatchLines(ctx, gen, tc.lines)
			if err != nil {
				t.Fatal(err)
			}
			if same != tc.same || differ != tc.wantDiffer {
				t.Errorf("MatchLines = %d, %v; want %d, %v", same, differ, tc.same, tc.wantDiffer)
			}
		})
	}
}
