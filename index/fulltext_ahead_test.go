package index

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// A step read ahead (the indexer's pipeline) is written only if nothing
// it read can have changed since: an exchange deleted after it was read
// must not be inserted after its deletion was applied (it would stay
// searchable), and a step read past a watermark that another step moved
// must not insert its events twice.
func TestFullTextReadAhead(t *testing.T) {
	cases := []struct {
		name string
		// between runs after the step is read ahead, before it is written.
		between func(t *testing.T, db *DB)
		// step is what the step handles (deletions and events): what
		// it read ahead, or, when that is stale, what it reads again.
		step int
		// want is what "words" finds, by text, after the step and a Drain.
		want []string
	}{
		{
			name:    "nothing changed",
			between: func(t *testing.T, db *DB) {},
			step:    2,
			want:    []string{"kept words", "gone words"},
		},
		{
			name: "a session deleted",
			between: func(t *testing.T, db *DB) {
				if _, err := db.DeleteSession(ctx, "gone"); err != nil {
					t.Fatal(err)
				}
			},
			step: 2, // the deletion, the kept exchange
			want: []string{"kept words"},
		},
		{
			name: "a session deleted and its deletion applied",
			between: func(t *testing.T, db *DB) {
				if _, err := db.DeleteSession(ctx, "gone"); err != nil {
					t.Fatal(err)
				}
				if _, err := db.fullTextDeletes(ctx); err != nil {
					t.Fatal(err)
				}
			},
			step: 1,
			want: []string{"kept words"},
		},
		{
			name: "indexed meanwhile",
			between: func(t *testing.T, db *DB) {
				if _, err := db.IndexFullText(ctx); err != nil {
					t.Fatal(err)
				}
			},
			step: 0,
			want: []string{"kept words", "gone words"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t, testDir(t))
			f := newFeeder(t, db, "a.jsonl")
			commit(t, db, f.batch(exchangeAt("keep", hour(1), "kept words", ""), exchangeAt("gone", hour(2), "gone words", "")))
			rows := rowsOf(t, db)
			b, err := db.readFullTextBatch(ctx, db.ftMark.Load())
			if err != nil {
				t.Fatal(err)
			}
			if b.n != 2 {
				t.Fatalf("read ahead %d events, want 2", b.n)
			}
			tc.between(t, db)
			if n, err := db.indexFullTextStep(ctx, b); err != nil {
				t.Fatal(err)
			} else if n != tc.step {
				t.Errorf("the step handled %d deletions and events, want %d", n, tc.step)
			}
			drainFullText(t, db)
			var want []int64
			for _, text := range tc.want {
				want = append(want, rows[text])
			}
			if got := ftsRows(t, db, "words"); !reflect.DeepEqual(got, want) {
				t.Errorf("words found in rows %v, want %v (%v)", got, want, tc.want)
			}
			if n := fullTextPending(t, db); n != 0 {
				t.Errorf("pending = %d after Drain", n)
			}
			// Each exchange counted once (a row inserted twice counts twice).
			var docs int
			if err := db.ft.QueryRowContext(ctx, `SELECT coalesce(sum(doc), 0) FROM events_fts_vocab WHERE term = 'kept'`).Scan(&docs); err != nil {
				t.Fatal(err)
			}
			if docs != 1 {
				t.Errorf("'kept' is in %d exchanges of the full-text index, want 1", docs)
			}
		})
	}
}

// A step stops at fullTextStepBytes of texts, after the exchange that
// reaches it: the next step goes on from there.
func TestFullTextStepBytes(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	text := strings.Repeat("large ", 100<<10/6) // ~100 KiB
	want := (fullTextStepBytes + len(text) - 1) / len(text)
	var lines []string
	for i := range want + 10 {
		lines = append(lines, exchangeAt("s", hour(1).Add(time.Duration(i)*time.Second), text, ""))
	}
	commit(t, db, f.batch(append(lines, exchangeAt("s", hour(2), "small words", ""))...))
	b, err := db.readFullTextBatch(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.stop()
	if b.n != want {
		t.Errorf("first step read %d events, want %d (%d bytes of texts reached)", b.n, want, fullTextStepBytes)
	}
	drainFullText(t, db)
	if got := ftsRows(t, db, "small"); len(got) != 1 {
		t.Errorf("small found in %v, want 1 row", got)
	}
	if got := ftsRows(t, db, "large"); len(got) != want+10 {
		t.Errorf("large found in %d rows, want %d", len(got), want+10)
	}
}
