package index

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/praxis-os/continuity/analyze"
)

// TestExchangeDocs: the exchanges after a row, in row order, with their
// texts as FTS5 is given them; other events advance the last row read
// without a document; the identity moves with a forget; the counts and
// the raw-less reads agree with the index.
func TestExchangeDocs(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	var lines []string
	for i := range 30 {
		lines = append(lines, exchange(fmt.Sprintf("s%d", i%3), fmt.Sprintf("x%d", i), fmt.Sprintf("Running the Café builds %d 日本語", i)))
		if i%7 == 0 {
			lines = append(lines, `{"type":"context_reset","timestamp":"2025-01-02T03:04:05Z","session_id":"s1"}`)
		}
	}
	commit(t, db, f.batch(lines...))

	identity, epoch, err := db.LexiconIdentity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var all []ExchangeDoc
	last := int64(0)
	for {
		docs, l, err := db.ExchangeDocs(ctx, last, 7)
		if err != nil {
			t.Fatal(err)
		}
		if l == last {
			if len(docs) != 0 {
				t.Fatalf("docs without a row read: %v", docs)
			}
			break
		}
		if l-last > 7 {
			t.Fatalf("read rows %d..%d, more than 7", last+1, l)
		}
		all, last = append(all, docs...), l
	}
	if len(all) != 30 || last != 35 {
		t.Fatalf("%d exchanges up to row %d, want 30 up to 35", len(all), last)
	}
	evs, err := db.EventsByRows(ctx, []int64{all[4].Row})
	if err != nil {
		t.Fatal(err)
	}
	e := evs[all[4].Row]
	if want := (ExchangeDoc{Row: e.Row, Session: e.SessionID, TS: e.Timestamp.UnixNano(), User: analyze.Document(e.User), AI: analyze.Document(e.AI)}); all[4] != want {
		t.Fatalf("doc %+v, want %+v", all[4], want)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Row <= all[i-1].Row {
			t.Fatalf("rows out of order: %d then %d", all[i-1].Row, all[i].Row)
		}
	}
	if n, err := db.ExchangesUpTo(ctx, all[9].Row); err != nil || n != 10 {
		t.Fatalf("ExchangesUpTo: %d, %v, want 10", n, err)
	}

	rows := []int64{all[0].Row, all[5].Row, 2, 999}
	full, err := db.EventsByRows(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := db.EventsByRowsWithoutRaw(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	for r, e := range full {
		if len(e.Raw) == 0 {
			t.Fatalf("row %d: no raw line", r)
		}
		e.Raw = nil
		if !reflect.DeepEqual(bare[r], e) {
			t.Fatalf("row %d without raw: %+v, want %+v", r, bare[r], e)
		}
	}
	if len(bare) != len(full) {
		t.Fatalf("%d events without raw, %d with", len(bare), len(full))
	}

	if _, err := db.DeleteSession(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	id2, epoch2, err := db.LexiconIdentity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id2 == identity || epoch2 <= epoch {
		t.Fatalf("identity %q epoch %d after a forget, %q %d before", id2, epoch2, identity, epoch)
	}
	if n, err := db.ExchangesUpTo(ctx, last); err != nil || n != 20 {
		t.Fatalf("ExchangesUpTo after the forget: %d, %v, want 20", n, err)
	}
}
