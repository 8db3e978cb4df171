package index

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// spanEvents are exchanges of two sessions at times with ties, and events
// of other types inside the windows the cases ask about.
func spanEvents(t0 time.Time) []string {
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	return []string{
		exchangeAt("s1", at(0), "first", "a"),
		exchangeAt("s1", at(1), "second", "b"),
		exchangeAt("s2", at(1), "a tie with second", "c"),
		`{"type":"context_reset","session_id":"s1","timestamp":"` + at(2).Format(time.RFC3339) + `"}`,
		exchangeAt("s2", at(3), "third", "d"),
		resumeLine("s1", "s3", at(4)),
		exchangeAt("s3", at(5), "fourth", "e"),
		exchangeAt("s1", at(5), "a tie with fourth", "f"),
		exchangeAt("s3", at(7), "last", "g"),
	}
}

// The exchanges a window holds, newest first (ties by row id, newest
// first), and their count: compared with every event read from the table
// and filtered and sorted here.
func TestExchangesByTime(t *testing.T) {
	db := openTest(t, testDir(t))
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(spanEvents(t0)...))

	type row struct {
		id, ts       int64
		typ, session string
	}
	var all []row
	rows, err := db.r.QueryContext(ctx, `SELECT id, ts, type, coalesce(session_id, '') FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.ts, &r.typ, &r.session); err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	rows.Close()
	if len(all) != len(spanEvents(t0)) {
		t.Fatalf("%d events stored, want %d", len(all), len(spanEvents(t0)))
	}
	model := func(fl Filter) []int64 {
		var keep []row
		for _, r := range all {
			in := r.typ == "exchange" &&
				(fl.Since.IsZero() || r.ts >= fl.Since.UnixNano()) &&
				(fl.Until.IsZero() || r.ts < fl.Until.UnixNano())
			if fl.Sessions != nil {
				in = in && contains(fl.Sessions, r.session)
			}
			if in {
				keep = append(keep, r)
			}
		}
		sort.Slice(keep, func(i, j int) bool {
			if keep[i].ts != keep[j].ts {
				return keep[i].ts > keep[j].ts
			}
			return keep[i].id > keep[j].id
		})
		ids := []int64{}
		for _, r := range keep {
			ids = append(ids, r.id)
		}
		return ids
	}
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	cases := []struct {
		name string
		f    Filter
		want int // exchanges in the window
	}{
		{"no filter", Filter{}, 7},
		{"since", Filter{Since: at(1)}, 6},
		{"until (excluded)", Filter{Until: at(5)}, 4},
		{"since and until", Filter{Since: at(1), Until: at(6)}, 5},
		{"a window with a reset only", Filter{Since: at(2), Until: at(3)}, 0},
		{"before every event", Filter{Until: t0}, 0},
		{"after every event", Filter{Since: at(8)}, 0},
		{"sessions", Filter{Sessions: []string{"s1", "s3"}}, 5},
		{"sessions and since", Filter{Sessions: []string{"s1"}, Since: at(1)}, 2},
		{"no session", Filter{Sessions: []string{}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := model(c.f)
			if len(want) != c.want {
				t.Fatalf("the model finds %d exchanges, the case says %d", len(want), c.want)
			}
			got, err := db.ExchangesNewestFirst(ctx, c.f, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				got = []int64{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ExchangesNewestFirst = %v, want %v", got, want)
			}
			first, err := db.ExchangesNewestFirst(ctx, c.f, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) > 0 && (len(first) != 1 || first[0] != want[0]) || len(want) == 0 && len(first) != 0 {
				t.Errorf("limit 1: %v, want the first of %v", first, want)
			}
			n, err := db.CountExchanges(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(len(want)) {
				t.Errorf("CountExchanges = %d, want %d", n, len(want))
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// A forgotten session's exchanges leave the time index with their rows:
// a window that held only them is empty, its count 0.
func TestExchangesByTimeForget(t *testing.T) {
	db := openTest(t, testDir(t))
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(spanEvents(t0)...))
	last := Filter{Since: t0.Add(6 * time.Hour)} // s3's "last" alone
	if n, err := db.CountExchanges(ctx, last); err != nil || n != 1 {
		t.Fatalf("before the forget: %d, %v", n, err)
	}
	if _, err := db.DeleteSession(ctx, "s3"); err != nil {
		t.Fatal(err)
	}
	if ids, err := db.ExchangesNewestFirst(ctx, last, 0); err != nil || len(ids) != 0 {
		t.Errorf("after forgetting s3: %v, %v", ids, err)
	}
	if n, err := db.CountExchanges(ctx, Filter{}); err != nil || n != 5 {
		t.Errorf("after forgetting s3: %d exchanges, %v; want 5", n, err)
	}
}

// A window without sessions is read from events_exchange_ts in the order
// asked: no event row read to learn its type, no sort. Through events_meta
// a wide window of a 1M index took 3.2 s, an empty one 0.8 s.
func TestSpanQueriesUseTimeIndex(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(spanEvents(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))...))
	since := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	until := since.Add(3 * time.Hour)
	for _, fl := range []Filter{{}, {Since: since}, {Until: until}, {Since: since, Until: until}} {
		for _, limit := range []int{0, 1} {
			q, args, err := newestFirstSQL(fl, limit)
			if err != nil {
				t.Fatal(err)
			}
			checkTimePlan(t, db, q, args)
		}
		q, args, err := countSQL(fl)
		if err != nil {
			t.Fatal(err)
		}
		checkTimePlan(t, db, q, args)
	}
}

func checkTimePlan(t *testing.T, db *DB, q string, args []any) {
	t.Helper()
	plan := queryPlan(t, db, q, args...)
	if !strings.Contains(plan, "USING COVERING INDEX events_exchange_ts") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("%s\nplan:\n%s", q, plan)
	}
}
