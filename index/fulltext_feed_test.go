package index

import (
	"fmt"
	"reflect"
	"testing"
)

// ftInstances lists every term instance of the full-text index (term,
// row, column, offset), and its watermark.
func ftInstances(t *testing.T, db *DB) ([]string, int64) {
	t.Helper()
	if _, err := db.ft.Exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.ft_instances USING fts5vocab(main, events_fts, 'instance')`); err != nil {
		t.Fatal(err)
	}
	rows, err := db.ft.Query(`SELECT term, doc, col, offset FROM temp.ft_instances ORDER BY term, doc, col, offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var term, col string
		var doc, off int64
		if err := rows.Scan(&term, &doc, &col, &off); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s %d", term, doc, col, off))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	mark, err := db.fullTextWatermark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return out, mark
}

// Exchanges handed over by the commits of a backfill (the feed) make the
// same full-text index as exchanges read back from index.db: texts as
// stored (redacted), files in the ai column, other events, rejects and
// duplicates between them.
func TestFullTextFeedSameIndex(t *testing.T) {
	lines := [][]string{
		{
			exchangeAt("s1", hour(1), "how do I rotate the token", "use the vault"),
			`{"type":"context_reset","session_id":"s1","timestamp":"2025-03-01T01:30:00Z"}`,
			`{"type":"exchange","session_id":"s1","timestamp":"2025-03-01T02:00:00Z","user":"fix the parser","ai":"done","files":["src/parser.go","docs/grammar.md"]}`,
			`not json`,
			exchangeAt("s2", hour(3), "my key is "+"AKIA"+"IOSFODNN7EXAMPLE", "do not paste keys"), // built from parts: the repository scan (redact) finds no key
		},
		{
			`{"type":"exchange","id":"e-1","session_id":"s2","timestamp":"2025-03-01T04:00:00Z","user":"first","ai":"answer"}`,
			`{"type":"exchange","id":"e-1","session_id":"s2","timestamp":"2025-03-01T04:00:00Z","user":"first","ai":"answer"}`,
			exchangeAt("s3", hour(5), "last words", "and more words"),
		},
	}
	build := func(backfill bool) ([]string, int64) {
		db := openTest(t, testDir(t))
		if backfill {
			end, err := db.BeginBackfill(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := end(); err != nil {
					t.Error(err)
				}
			}()
		}
		f := newFeeder(t, db, "a.jsonl")
		for _, b := range lines {
			commit(t, db, f.batch(b...))
		}
		if backfill {
			if segs := len(db.ftFeed.Load().segs); segs != len(lines) {
				t.Fatalf("the feed holds %d segments, want %d", segs, len(lines))
			}
		}
		drainFullText(t, db)
		if backfill {
			if segs := len(db.ftFeed.Load().segs); segs != 0 {
				t.Errorf("the feed still holds %d segments after Drain", segs)
			}
		}
		return ftInstances(t, db)
	}
	read, readMark := build(false)
	fed, fedMark := build(true)
	if len(read) == 0 {
		t.Fatal("empty full-text index")
	}
	if !reflect.DeepEqual(fed, read) || fedMark != readMark {
		t.Errorf("fed: %d instances, watermark %d; read back: %d, watermark %d\nfed:  %v\nread: %v", len(fed), fedMark, len(read), readMark, fed, read)
	}
}

// A session deleted after its exchanges were committed, before the
// full-text writer took them from the feed: the feed's segment is not
// used (the events are read from index.db), and the deleted exchange is
// never searchable.
func TestFullTextFeedDeletion(t *testing.T) {
	db := openTest(t, testDir(t))
	end, err := db.BeginBackfill(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(exchangeAt("keep", hour(1), "kept words", ""), exchangeAt("gone", hour(2), "gone words", "")))
	if _, err := db.DeleteSession(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	commit(t, db, f.batch(exchangeAt("keep", hour(3), "later words", "")))
	drainFullText(t, db)
	rows := rowsOf(t, db)
	want := []int64{rows["kept words"], rows["later words"]}
	if got := ftsRows(t, db, "words"); !reflect.DeepEqual(got, want) {
		t.Errorf("words found in rows %v, want %v", got, want)
	}
}

// The feed is followed only from the watermark on, without gaps, by
// steps of at most fullTextStep events.
func TestFullTextFeedTake(t *testing.T) {
	seg := func(after, last int64, rows ...int64) ftSegment {
		s := ftSegment{after: after, last: last}
		for _, r := range rows {
			s.todo = append(s.todo, ftExchange{row: r, user: "u", ai: "a"})
		}
		return s
	}
	taken := func(b *ftBatch) string {
		if b == nil {
			return "nil"
		}
		b.stop()
		var rows []int64
		for _, e := range b.todo {
			rows = append(rows, e.row)
		}
		return fmt.Sprintf("(%d,%d] n=%d %v", b.after, b.last, b.n, rows)
	}
	cases := []struct {
		name     string
		segs     []ftSegment
		after    int64
		deleting int64
		want     string
		left     int
	}{
		{"continues the watermark", []ftSegment{seg(10, 14, 11, 13), seg(14, 16, 16)}, 10, 0, "(10,16] n=6 [11 13 16]", 0},
		{"read past already", []ftSegment{seg(10, 14, 11, 13)}, 14, 0, "nil", 0},
		{"cut by the watermark", []ftSegment{seg(10, 14, 11, 13)}, 12, 0, "(12,14] n=2 [13]", 0},
		{"ahead of the watermark", []ftSegment{seg(10, 14, 11)}, 8, 0, "nil", 1},
		{"a deletion since", []ftSegment{seg(10, 14, 11)}, 10, 2, "nil", 1},
		{"a deletion since the second", []ftSegment{seg(10, 14, 11), {after: 14, last: 15, deleting: 2}}, 10, 0, "(10,14] n=4 [11]", 1},
		{"a full step", []ftSegment{seg(0, fullTextStep, 1), seg(fullTextStep, fullTextStep+1, fullTextStep+1)}, 0, 0, fmt.Sprintf("(0,%d] n=%d [1]", fullTextStep, fullTextStep), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &ftFeed{}
			for _, s := range tc.segs {
				f.publish(s)
			}
			if got := taken(f.take(tc.after, tc.deleting)); got != tc.want {
				t.Errorf("take(%d) = %s, want %s", tc.after, got, tc.want)
			}
			if len(f.segs) != tc.left {
				t.Errorf("%d segments left, want %d", len(f.segs), tc.left)
			}
		})
	}

	// A gap between commits (events stored by another path) drops what
	// the feed held.
	f := &ftFeed{}
	f.publish(seg(0, 4, 1))
	f.publish(seg(6, 8, 7))
	if len(f.segs) != 1 || f.segs[0].after != 6 {
		t.Errorf("after a gap the feed holds %+v, want the later segment alone", f.segs)
	}
	// Past ftFeedMaxBytes it is dropped: the writer reads index.db.
	f = &ftFeed{}
	big := seg(0, 1, 1)
	big.todo[0].user = string(make([]byte, ftFeedMaxBytes))
	f.publish(seg(0, 0)) // nothing stored: not a segment
	f.publish(big)
	if len(f.segs) != 0 || f.bytes != 0 {
		t.Errorf("an oversized feed holds %d segments, %d bytes", len(f.segs), f.bytes)
	}
}
