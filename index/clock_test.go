package index

import (
	"testing"
	"time"
)

// TestDatedAhead (issue 22, item 9): an event dated after the moment it
// was read (local time written with "Z": 9 hours ahead here) is counted
// and found, and the latest session is the one written to last, not the
// one dated latest. Before: the session dated 9 hours ahead stayed the
// latest until then, and nothing counted it.
func TestDatedAhead(t *testing.T) {
	now := fixedNow // 2025-06-01 12:00 UTC
	db, err := Open(testDir(t), Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := newFeeder(t, db, "a.jsonl")
	line := func(session, ts string) string {
		return `{"type":"exchange","session_id":"` + session + `","timestamp":"` + ts + `","user":"u","ai":"a"}`
	}
	steps := []struct {
		read   time.Time
		lines  []string
		latest string
		ahead  int64
	}{
		{now, []string{line("before", "2025-06-01T11:50:00Z")}, "before", 0},
		// Written at 12:00 local (UTC-9) as "21:00Z".
		{now, []string{line("zulu", "2025-06-01T21:00:00Z")}, "zulu", 1},
		// Written at 12:10, after it.
		{now.Add(10 * time.Minute), []string{line("after", "2025-06-01T12:09:00Z")}, "after", 1},
		// A minute of clock difference is not ahead.
		{now.Add(20 * time.Minute), []string{line("skewed", "2025-06-01T12:21:00Z")}, "skewed", 1},
		// zulu written again, 9 hours ahead again: latest again.
		{now.Add(30 * time.Minute), []string{line("zulu", "2025-06-01T21:30:00Z")}, "zulu", 2},
	}
	for i, st := range steps {
		now = st.read
		commit(t, db, f.batch(st.lines...))
		got, err := db.LatestSession(ctx)
		if err != nil || got != st.latest {
			t.Errorf("step %d: latest %q, %v; want %q", i, got, err, st.latest)
		}
		if s := mustStatus(t, db); s.TimestampsAhead != st.ahead {
			t.Errorf("step %d: status counts %d events ahead, want %d", i, s.TimestampsAhead, st.ahead)
		}
	}
	a, err := db.EventsAhead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.Events != 2 || a.Most != 9*time.Hour || !a.Latest.Equal(time.Date(2025, 6, 1, 21, 30, 0, 0, time.UTC)) ||
		len(a.Sessions) != 1 || a.Sessions[0] != (SessionCount{"zulu", 2}) {
		t.Errorf("ahead: %+v", a)
	}
}
