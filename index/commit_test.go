package index

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/praxis-os/continuity/watcher"
)

func TestCommitExactlyOnce(t *testing.T) {
	a, b, c := exchange("s1", "", "a"), exchange("s1", "", "b"), exchange("s1", "", "c")
	x1, y1 := exchange("s1", "id-1", "x"), exchange("s1", "id-1", "y")

	tests := []struct {
		name     string
		run      func(t *testing.T, db *DB) (last watcher.Batch)
		wantRaw  []string
		wantDups int64
	}{
		{
			name: "replayed batch",
			run: func(t *testing.T, db *DB) watcher.Batch {
				f := newFeeder(t, db, "a.jsonl")
				b1 := f.batch(a, b)
				commit(t, db, b1)
				commit(t, db, b1)
				return b1
			},
			wantRaw: []string{a, b},
		},
		{
			name: "replayed batch holding a duplicate id counts it once",
			run: func(t *testing.T, db *DB) watcher.Batch {
				f := newFeeder(t, db, "a.jsonl")
				b1 := f.batch(x1, y1)
				commit(t, db, b1)
				commit(t, db, b1)
				return b1
			},
			wantRaw:  []string{x1},
			wantDups: 1,
		},
		{
			name: "duplicate id in a later batch",
			run: func(t *testing.T, db *DB) watcher.Batch {
				f := newFeeder(t, db, "a.jsonl")
				commit(t, db, f.batch(x1))
				b2 := f.batch(y1, c)
				commit(t, db, b2)
				return b2
			},
			wantRaw:  []string{x1, c},
			wantDups: 1,
		},
		{
			name: "duplicate id in another file",
			run: func(t *testing.T, db *DB) watcher.Batch {
				f := newFeeder(t, db, "a.jsonl")
				g := newFeeder(t, db, "b.jsonl")
				commit(t, db, f.batch(x1))
				b2 := g.batch(y1)
				commit(t, db, b2)
				commit(t, db, b2)
				return b2
			},
			wantRaw:  []string{x1},
			wantDups: 1,
		},
		{
			name: "batch overlapping a committed one",
			run: func(t *testing.T, db *DB) watcher.Batch {
				f := newFeeder(t, db, "a.jsonl")
				again := *f
				commit(t, db, f.batch(a, b))
				b2 := again.batch(a, b, c)
				commit(t, db, b2)
				return b2
			},
			wantRaw: []string{a, b, c},
		},
		{
			name: "stale batch leaves the generation alone",
			run: func(t *testing.T, db *DB) watcher.Batch {
				f := newFeeder(t, db, "a.jsonl")
				b1 := f.batch(a)
				commit(t, db, b1)
				b2 := f.batch(b)
				commit(t, db, b2)
				commit(t, db, b1)
				return b2
			},
			wantRaw: []string{a, b},
		},
		{
			name: "blank-only batch advances the offset",
			run: func(t *testing.T, db *DB) watcher.Batch {
				f := newFeeder(t, db, "a.jsonl")
				commit(t, db, f.batch(a))
				b2 := f.batch("", "")
				commit(t, db, b2)
				return b2
			},
			wantRaw: []string{a},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, testDir(t))
			last := tt.run(t, db)
			if got := rawTexts(t, db); !reflect.DeepEqual(got, tt.wantRaw) {
				t.Errorf("stored lines = %q, want %q", got, tt.wantRaw)
			}
			st := mustStatus(t, db)
			if st.DuplicatesSkipped != tt.wantDups {
				t.Errorf("duplicates_skipped = %d, want %d", st.DuplicatesSkipped, tt.wantDups)
			}
			gens, err := db.Generations(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got *watcher.Generation
			for i := range gens {
				if gens[i].ID == last.Gen.ID {
					got = &gens[i]
				}
			}
			if got == nil || *got != last.Gen {
				t.Errorf("generation = %+v, want %+v", got, last.Gen)
			}
		})
	}
}

func TestCommitIsAtomic(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(exchange("s1", "", "before")))
	before := f.gen

	// The third line fails as it is stored, after an event and a reject
	// of the batch were written: a trigger on the writer's connection (the
	// only one) aborts inserting an event of session s2.
	w, err := db.writer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, `CREATE TEMP TRIGGER boom BEFORE INSERT ON events
		WHEN NEW.session_id = 's2' BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatal(err)
	}
	again := *f
	b := f.batch(exchange("s1", "id-1", "a"), "{bad", exchange("s2", "", "c"), exchange("s2", "id-1", "dup"))
	err = db.Commit(ctx, b)
	if _, err := w.ExecContext(ctx, `DROP TRIGGER temp.boom`); err != nil {
		t.Fatal(err)
	}
	if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "index: commit batch for a.jsonl") {
		t.Fatalf("Commit = %v, want the wrapped trigger error", err)
	}
	st := mustStatus(t, db)
	if st.Events != 1 || st.Rejects != 0 || st.Sessions != 1 || st.DuplicatesSkipped != 0 {
		t.Errorf("failed commit left traces: %+v", st)
	}
	gens, _ := db.Generations(ctx)
	if len(gens) != 1 || gens[0] != before {
		t.Errorf("failed commit moved the generation: %+v, want %+v", gens, before)
	}

	// Retried, the same lines go in once.
	commit(t, db, again.batch(exchange("s1", "id-1", "a"), "{bad", exchange("s2", "", "c"), exchange("s2", "id-1", "dup")))
	st = mustStatus(t, db)
	if st.Events != 3 || st.Rejects != 2 || st.Sessions != 2 || st.DuplicatesSkipped != 1 { // the reused id is listed
		t.Errorf("after retry: %+v", st)
	}

	// A cancelled context commits nothing either.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.Commit(cctx, f.batch(exchange("s1", "", "late"))); err == nil {
		t.Error("Commit with a cancelled context succeeded")
	}
	if got := mustStatus(t, db).Events; got != 3 {
		t.Errorf("events after cancelled commit = %d, want 3", got)
	}
}

func TestCommitUnknownGeneration(t *testing.T) {
	db := openTest(t, testDir(t))
	f := &feeder{gen: watcher.Generation{ID: 99, Path: "a.jsonl"}}
	err := db.Commit(ctx, f.batch(exchange("s1", "", "a")))
	if err == nil || !strings.Contains(err.Error(), "no generation 99") {
		t.Errorf("Commit to unknown generation = %v", err)
	}
}

func TestCommitRejects(t *testing.T) {
	invalidUTF8 := "{\"type\":\"exchange\",\"user\":\"\xff\xfe\"}"
	long := `{"type":"exchange","user":"` + strings.Repeat("é", 300) + `"` // no closing brace: invalid JSON
	tests := []struct {
		name        string
		line        string
		kind        string
		reason      string // substring
		excerpt     string // exact when not ""
		excerptFunc func(t *testing.T, e string)
	}{
		{name: "not JSON", line: "hello", kind: "invalid_json", reason: "invalid JSON", excerpt: "hello"},
		{name: "truncated", line: `{"type":"exchange"`, kind: "invalid_json", excerpt: `{"type":"exchange"`},
		{name: "array", line: `[1,2]`, kind: "not_object", reason: "not an object"},
		{name: "missing type", line: `{"user":"a","ai":"b","session_id":"s"}`, kind: "missing_field", reason: `"type"`},
		{name: "bad timestamp", line: `{"type":"exchange","session_id":"s","user":"a","ai":"b","timestamp":"yesterday"}`, kind: "invalid_field", reason: "timestamp"},
		{name: "duplicate key", line: `{"type":"exchange","type":"exchange"}`, kind: "duplicate_key"},
		{name: "invalid UTF-8", line: invalidUTF8, kind: "invalid_utf8", reason: "UTF-8",
			excerptFunc: func(t *testing.T, e string) {
				if !utf8.ValidString(e) || !strings.Contains(e, "\uFFFD") {
					t.Errorf("excerpt %q: want valid UTF-8 with U+FFFD", e)
				}
			}},
		{name: "long invalid line", line: long, kind: "invalid_json",
			excerptFunc: func(t *testing.T, e string) {
				if len(e) > ExcerptSize || len(e) < ExcerptSize-3 || !utf8.ValidString(e) || !strings.HasPrefix(long, e) {
					t.Errorf("excerpt of %d bytes, valid=%v, want a prefix of ≤%d bytes", len(e), utf8.ValidString(e), ExcerptSize)
				}
			}},
		{name: "oversize", line: "OVERSIZE:2097152", kind: "too_large",
			reason: "line of 2097152 bytes (2.0 MiB) exceeds the maximum line size of 1048576 bytes (1.0 MiB); to index such lines, run the daemon (or ingest) with --max-line-bytes 2097152 or more", excerpt: strings.Repeat("x", ExcerptSize)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t, testDir(t))
			f := newFeeder(t, db, "session-s9.jsonl")
			ok := exchange("", "", "fine")
			b := f.batch(ok, tt.line, ok)
			commit(t, db, b)
			commit(t, db, b) // replay: still one reject

			rejects, err := db.Rejects(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rejects) != 1 {
				t.Fatalf("rejects = %+v, want 1", rejects)
			}
			r := rejects[0]
			bad := b.Lines[1]
			if r.Kind != tt.kind || !strings.Contains(r.Reason, tt.reason) || r.Reason == "" {
				t.Errorf("reject kind %q reason %q, want kind %q reason containing %q", r.Kind, r.Reason, tt.kind, tt.reason)
			}
			if r.File != "session-s9.jsonl" || r.Line != 2 || r.Offset != bad.Start || r.End != bad.End || r.Generation != f.gen.ID {
				t.Errorf("reject position %+v, want line 2 at [%d,%d)", r, bad.Start, bad.End)
			}
			if !r.CreatedAt.Equal(fixedNow) {
				t.Errorf("created_at %v", r.CreatedAt)
			}
			if tt.excerpt != "" && r.Excerpt != tt.excerpt {
				t.Errorf("excerpt %q, want %q", r.Excerpt, tt.excerpt)
			}
			if tt.excerptFunc != nil {
				tt.excerptFunc(t, r.Excerpt)
			}
			if got := rawTexts(t, db); len(got) != 2 {
				t.Errorf("valid lines around the reject: %q", got)
			}
			if st := mustStatus(t, db); st.Rejects != 1 || st.Events != 2 {
				t.Errorf("status %+v", st)
			}
		})
	}
}

func TestRejectsLimit(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch("1", "2", "3", "4", "5"))
	for _, tt := range []struct {
		limit int
		want  []string
	}{
		{0, []string{"1", "2", "3", "4", "5"}},
		{2, []string{"4", "5"}},
		{9, []string{"1", "2", "3", "4", "5"}},
	} {
		rs, err := db.Rejects(ctx, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rs {
			got = append(got, r.Excerpt)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Rejects(%d) = %q, want %q", tt.limit, got, tt.want)
		}
	}
}

func TestCommitStoresEventFields(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "session-s1.jsonl")
	lines := []string{
		`{"type":"exchange","user":"hello","ai":"hi there","files":["a.go","b.go"],"metadata":{"k":[1,2]},"extra":true,"id":"p-1"}`,
		`{"type":"context_reset","timestamp":"2025-01-02T03:04:05.123456789Z","reason":"compaction"}`,
		`{"type":"future_thing","session_id":"s1","timestamp":"2025-01-01T00:00:00Z","payload":1}`,
	}
	commit(t, db, f.batch(lines...))
	evs, err := db.EventsBySession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("events = %+v", evs)
	}
	byType := map[string]Event{}
	for _, e := range evs {
		byType[e.Type] = e
	}
	ex := byType["exchange"]
	if ex.EventID != "p-1" || ex.ProducerID != "p-1" || ex.User != "hello" || ex.AI != "hi there" ||
		!reflect.DeepEqual(ex.Files, []string{"a.go", "b.go"}) || string(ex.Metadata) != `{"k":[1,2]}` ||
		!reflect.DeepEqual(ex.UnknownFields, []string{"extra"}) || !ex.TimestampInferred || !ex.Timestamp.Equal(time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)) ||
		!ex.SessionFromFile || string(ex.Raw) != lines[0] || ex.Line != 1 || ex.Start != 0 || ex.File != "session-s1.jsonl" || ex.V != 1 {
		t.Errorf("exchange = %+v", ex)
	}
	reset := byType["context_reset"]
	if reset.Reason != "compaction" || reset.TimestampInferred ||
		!reset.Timestamp.Equal(time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)) || reset.ProducerID != "" {
		t.Errorf("context_reset = %+v", reset)
	}
	if len(reset.EventID) != 36 || reset.EventID == byType["future_thing"].EventID {
		t.Errorf("generated event ids %q, %q", reset.EventID, byType["future_thing"].EventID)
	}
	// Ordered by timestamp, then file order: the undated exchange takes
	// the time of the line after it (TestUndatedEventsInPlace).
	if evs[0].Type != "future_thing" || evs[1].Type != "exchange" {
		t.Errorf("order: %s, %s, %s", evs[0].Type, evs[1].Type, evs[2].Type)
	}
	st := mustStatus(t, db)
	if st.UnknownTypes != 1 || st.UnknownFields != 2 || st.Events != 3 || st.Exchanges != 1 ||
		!reflect.DeepEqual(st.EventsByType, map[string]int64{"exchange": 1, "context_reset": 1, "future_thing": 1}) {
		t.Errorf("status = %+v", st)
	}
}

func TestCommitSessions(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	ts := func(s string) string { return `"timestamp":"` + s + `"` }
	commit(t, db, f.batch(
		`{"type":"exchange","session_id":"old",`+ts("2025-01-01T10:00:00Z")+`,"user":"u","ai":"a"}`,
		`{"type":"context_reset","session_id":"old",`+ts("2025-01-01T09:00:00Z")+`}`,
		`{"type":"session_resume","previous_session":"old","new_session":"new",`+ts("2025-01-01T11:00:00Z")+`}`,
	))
	commit(t, db, f.batch(
		`{"type":"exchange","session_id":"new",`+ts("2025-01-01T12:00:00Z")+`,"user":"u","ai":"a"}`,
		`{"type":"exchange","session_id":"old",`+ts("2025-01-01T13:00:00Z")+`,"user":"u","ai":"a"}`,
		`{"type":"session_resume","previous_session":"old","new_session":"new",`+ts("2025-01-01T14:00:00Z")+`}`,
	))

	type session struct {
		first, last               time.Time
		exchanges, resets, events int64
	}
	got := map[string]session{}
	rows, err := db.r.Query(`SELECT id, first_ts, last_ts, exchanges, resets, events FROM sessions`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var first, last int64
		var s session
		if err := rows.Scan(&id, &first, &last, &s.exchanges, &s.resets, &s.events); err != nil {
			t.Fatal(err)
		}
		s.first, s.last = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		got[id] = s
	}
	rows.Close()
	at := func(h int) time.Time { return time.Date(2025, 1, 1, h, 0, 0, 0, time.UTC) }
	want := map[string]session{
		"old": {first: at(9), last: at(13), exchanges: 2, resets: 1, events: 3},
		"new": {first: at(11), last: at(14), exchanges: 1, resets: 0, events: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sessions =\n%+v\nwant\n%+v", got, want)
	}

	var links []string
	rows, err = db.r.Query(`SELECT previous, new, ts, (SELECT raw FROM events WHERE id = event) FROM session_links`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var prev, next, raw string
		var ts int64
		if err := rows.Scan(&prev, &next, &ts, &raw); err != nil {
			t.Fatal(err)
		}
		if !time.Unix(0, ts).Equal(at(11)) || !strings.Contains(raw, "11:00") {
			t.Errorf("link %s->%s at %v from %s: want the first resume", prev, next, time.Unix(0, ts).UTC(), raw)
		}
		links = append(links, prev+"->"+next)
	}
	rows.Close()
	if !reflect.DeepEqual(links, []string{"old->new"}) {
		t.Errorf("links = %v", links)
	}
	if n := mustStatus(t, db).Sessions; n != 2 {
		t.Errorf("Status.Sessions = %d", n)
	}
}

func TestGenerations(t *testing.T) {
	db := openTest(t, testDir(t))
	g1 := watcher.Generation{Path: "a.jsonl", Dev: 1<<64 - 1, Ino: 1 << 63,
		Head: watcher.Fingerprint{Len: 3, Sum: 1<<64 - 2}, Tail: watcher.Fingerprint{Len: 3, Sum: 1 << 63}}
	id1, err := db.CreateGeneration(ctx, g1, 0)
	if err != nil {
		t.Fatal(err)
	}
	g1.ID = id1
	g2 := watcher.Generation{ID: 12345, Path: "b.jsonl", Dev: 2, Ino: 3, Gone: true}
	id2, err := db.CreateGeneration(ctx, g2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if id2 == 12345 || id2 == id1 {
		t.Errorf("CreateGeneration used the given ID: %d", id2)
	}
	g2.ID = id2

	list := func() []watcher.Generation {
		t.Helper()
		gs, err := db.Generations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return gs
	}
	if got := list(); !reflect.DeepEqual(got, []watcher.Generation{g1, g2}) {
		t.Errorf("Generations = %+v\nwant %+v", got, []watcher.Generation{g1, g2})
	}

	// Update touches path, dev, ino, gone only.
	upd := g1
	upd.Path, upd.Dev, upd.Ino, upd.Gone = "renamed.jsonl", 7, 8, true
	upd.Offset, upd.Line, upd.Head = 999, 9, watcher.Fingerprint{}
	if err := db.UpdateGeneration(ctx, upd); err != nil {
		t.Fatal(err)
	}
	g1.Path, g1.Dev, g1.Ino, g1.Gone = "renamed.jsonl", 7, 8, true
	if got := list(); got[0] != g1 {
		t.Errorf("after update: %+v, want %+v", got[0], g1)
	}

	// Commit moves the offset and fingerprints but not Gone.
	f := &feeder{gen: g1}
	b := f.batch(exchange("s", "", "x"))
	b.Gen.Gone = false
	b.Gen.Path = "again.jsonl"
	commit(t, db, b)
	g1 = b.Gen
	g1.Gone = true
	if got := list(); got[0] != g1 {
		t.Errorf("after commit: %+v, want %+v", got[0], g1)
	}

	// Replacing ends the old generation.
	g3 := watcher.Generation{Path: "renamed.jsonl", Dev: 7, Ino: 8}
	id3, err := db.CreateGeneration(ctx, g3, id1)
	if err != nil {
		t.Fatal(err)
	}
	g3.ID = id3
	if got := list(); !reflect.DeepEqual(got, []watcher.Generation{g2, g3}) {
		t.Errorf("after replace: %+v", got)
	}
	// The ended generation's events stay.
	if n := len(rawTexts(t, db)); n != 1 {
		t.Errorf("events after replace: %d", n)
	}

	if _, err := db.CreateGeneration(ctx, watcher.Generation{Path: "c.jsonl"}, 4242); err == nil {
		t.Error("replacing an unknown generation succeeded")
	}
	if got := list(); len(got) != 2 {
		t.Errorf("failed replace left a generation: %+v", got)
	}
	if err := db.UpdateGeneration(ctx, watcher.Generation{ID: 4242}); err == nil {
		t.Error("updating an unknown generation succeeded")
	}
}

func TestSkippedFiles(t *testing.T) {
	db := openTest(t, testDir(t))
	steps := []struct {
		name, reason string
		want         []SkippedFile
	}{
		{"b.jsonl", "symlink", []SkippedFile{{"b.jsonl", "symlink"}}},
		{"a.jsonl", "FIFO", []SkippedFile{{"a.jsonl", "FIFO"}, {"b.jsonl", "symlink"}}},
		{"b.jsonl", "unreadable: permission denied", []SkippedFile{{"a.jsonl", "FIFO"}, {"b.jsonl", "unreadable: permission denied"}}},
		{"a.jsonl", "", []SkippedFile{{"b.jsonl", "unreadable: permission denied"}}},
		{"never.jsonl", "", []SkippedFile{{"b.jsonl", "unreadable: permission denied"}}},
	}
	for _, s := range steps {
		if err := db.SetSkippedFile(ctx, s.name, s.reason); err != nil {
			t.Fatal(err)
		}
		if got := mustStatus(t, db).Skipped; !reflect.DeepEqual(got, s.want) {
			t.Errorf("after SetSkippedFile(%q, %q): %+v, want %+v", s.name, s.reason, got, s.want)
		}
	}
}

func TestStatusJSON(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(exchange("s1", "", "x"), "{"))
	st := mustStatus(t, db)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"events", "exchanges", "sessions", "rejects", "duplicates_skipped", "unknown_types", "unknown_fields", "forgotten_skipped", "forgotten", "events_by_type", "vectors", "files", "skipped"} {
		if _, ok := m[k]; !ok {
			t.Errorf("status JSON lacks %q: %s", k, b)
		}
	}
	files := m["files"].([]any)
	file := files[0].(map[string]any)
	if file["path"] != "a.jsonl" || file["offset"].(float64) != float64(f.gen.Offset) || file["line"].(float64) != 2 {
		t.Errorf("files JSON: %s", b)
	}
	rs, _ := db.Rejects(ctx, 0)
	b, _ = json.Marshal(rs[0])
	for _, k := range []string{`"file":"a.jsonl"`, `"line":2`, `"offset":`, `"reason":`, `"excerpt":"{"`, `"kind":"invalid_json"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("reject JSON lacks %s: %s", k, b)
		}
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"abc", "abc"},
		{"a\xffb", "a\uFFFDb"},
		{strings.Repeat("a", 300), strings.Repeat("a", 256)},
		{strings.Repeat("a", 255) + "é", strings.Repeat("a", 255)}, // no half rune
		{strings.Repeat("\xff", 100), strings.Repeat("\uFFFD", 85)},
		{strings.Repeat("a", 254) + "\xc3", strings.Repeat("a", 254)}, // cut rune, no room for U+FFFD
	}
	for _, tt := range tests {
		got := excerpt([]byte(tt.in))
		if got != tt.want || len(got) > ExcerptSize || !utf8.ValidString(got) {
			t.Errorf("excerpt(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCommitEventShapes: insertEvent writes some values into its
// statements (NULLs, booleans, the batch's generation, file and time) and
// binds the rest; every shape of event must store the same columns as a
// plain insert would, a file name with a quote included.
func TestCommitEventShapes(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "it's a 'log'.jsonl")
	lines := []string{
		`{"type":"exchange","session_id":"s","user":"u1","ai":"a1","id":"p-1","timestamp":"2025-01-01T00:00:00Z"}`,
		`{"type":"exchange","session_id":"s","user":"u2","ai":"","timestamp":"2025-01-01T00:00:01Z"}`,
		`{"type":"exchange","session_id":"s","user":"u3","ai":"a3"}`,
		`{"type":"session_resume","previous_session":"s","new_session":"t","id":"p-2","timestamp":"2025-01-01T00:00:02Z","files":["x"]}`,
		`{"type":"context_reset","session_id":"t","reason":"r","timestamp":"2025-01-01T00:00:03Z","metadata":{"a":1},"odd":1}`,
	}
	b := f.batch(lines...)
	commit(t, db, b)
	rows, err := db.r.QueryContext(ctx, `SELECT generation, file, line, start_offset, ingested_at, session_from_file, ts_inferred,
		coalesce(producer_id, '-'), event_id = coalesce(producer_id, event_id), coalesce(session_id, '-'), coalesce(user, '-'),
		coalesce(ai, '-'), coalesce(reason, '-'), coalesce(previous_session, '-'), coalesce(new_session, '-'),
		coalesce(files, '-'), coalesce(metadata, '-'), coalesce(unknown_fields, '-'), raw, v
		FROM events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var gen, line, start, at, v int64
		var fromFile, inferred, sameID bool
		var file, producer, session, user, ai, reason, prev, next, files, meta, unknown string
		var raw []byte
		if err := rows.Scan(&gen, &file, &line, &start, &at, &fromFile, &inferred, &producer, &sameID, &session, &user, &ai,
			&reason, &prev, &next, &files, &meta, &unknown, &raw, &v); err != nil {
			t.Fatal(err)
		}
		if gen != b.Gen.ID || file != "it's a 'log'.jsonl" || at != fixedNow.UnixNano() || !sameID || v != 1 ||
			string(raw) != lines[line-1] || start != b.Lines[line-1].Start {
			t.Errorf("line %d: generation %d file %q ingested_at %d event_id=producer_id %v v %d raw %q start %d",
				line, gen, file, at, sameID, v, raw, start)
		}
		got = append(got, fmt.Sprintf("%d %v %v %s %s %s %s %s %s %s %s %s %s", line, fromFile, inferred, producer, session,
			user, ai, reason, prev, next, files, meta, unknown))
	}
	want := []string{
		`1 false false p-1 s u1 a1 - - - - - -`,
		`2 false false - s u2 - - - - - - -`,
		`3 false true - s u3 a3 - - - - - -`,
		`4 false false p-2 t - - - s t ["x"] - -`,
		`5 false false - t - - r - - - {"a":1} ["odd"]`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The session from the file name (session_from_file true).
	g := newFeeder(t, db, "session-f.jsonl")
	commit(t, db, g.batch(`{"type":"exchange","user":"u","ai":"a","timestamp":"2025-01-01T00:00:04Z"}`))
	var fromFile bool
	var file string
	if err := db.r.QueryRowContext(ctx, `SELECT session_from_file, file FROM events WHERE session_id = 'f'`).Scan(&fromFile, &file); err != nil || !fromFile || file != "session-f.jsonl" {
		t.Errorf("session from file: %v %q %v", fromFile, file, err)
	}
}
