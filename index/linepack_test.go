package index

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func nullStr(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// A packed line renders the stored line byte for byte, whatever the
// producer's JSON style (Go's json.Marshal with its HTML escapes, Python's
// ensure_ascii, JavaScript's, spaces, key order, unknown fields, a text
// repeated elsewhere in the line); a text whose escapes no style makes
// stays in the line.
func TestPackLine(t *testing.T) {
	long := "a question about <div> & the café’s menu\u2028next line, tab\tand \"quotes\" \\ 🙂 \b\f\x01"
	goMarshal := func(m map[string]any) string {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []struct {
		name, line, user, ai string
		cuts                 int // texts cut out of the line
	}{
		{"plain", `{"type":"exchange","user":"how do I run the tests?","ai":"go test ./... from the root"}`,
			"how do I run the tests?", "go test ./... from the root", 2},
		{"go json.Marshal", goMarshal(map[string]any{"type": "exchange", "user": long, "ai": long + " again"}),
			long, long + " again", 2},
		{"python ensure_ascii", `{"type": "exchange", "user": "caf\u00e9 \ud83d\ude42 and more text", "ai": "short answer here!"}`,
			"café 🙂 and more text", "short answer here!", 2},
		{"javascript", "{\"ai\":\"line\\u2028sep and <b> & bold\",\"user\":\"the user asks a question\",\"type\":\"exchange\"}",
			"the user asks a question", "line\u2028sep and <b> & bold", 2},
		{"same text twice", `{"type":"exchange","user":"the very same text","ai":"the very same text","metadata":{"x":"the very same text"}}`,
			"the very same text", "the very same text", 2},
		{"escaped slash stays", `{"type":"exchange","user":"see http:\/\/example.com\/x","ai":"a long enough answer"}`,
			"see http://example.com/x", "a long enough answer", 1},
		{"short texts", `{"type":"exchange","user":"hi","ai":"hello"}`, "hi", "hello", 0},
		{"not an exchange", `{"type":"context_reset","reason":"the context was full"}`, "", "", 0},
	}
	for _, c := range cases {
		packed := packLine([]byte(c.line), c.user, c.ai, nil)
		cuts := 0
		if len(packed) > 0 && packed[0] == packMagic {
			cuts = int(packed[1])
		}
		if cuts != c.cuts {
			t.Errorf("%s: %d texts cut, want %d", c.name, cuts, c.cuts)
		}
		if cuts > 0 && len(packed) >= len(c.line) {
			t.Errorf("%s: packed %d bytes, the line %d", c.name, len(packed), len(c.line))
		}
		got, err := unpackLine(packed, nullStr(c.user), nullStr(c.ai))
		if err != nil || string(got) != c.line {
			t.Errorf("%s: unpacked %q, %v; want %q", c.name, got, err, c.line)
		}
	}
	// A packed line without the text it needs is an error, not a wrong line.
	packed := packLine([]byte(cases[0].line), cases[0].user, cases[0].ai, nil)
	if _, err := unpackLine(packed, sql.NullString{}, nullStr(cases[0].ai)); err == nil {
		t.Errorf("unpacked without its user text")
	}
	for _, bad := range [][]byte{{packMagic}, {packMagic, 3}, {packMagic, 1, packUser, 0}, {packMagic, 1, packUser, 0, 200}} {
		if _, err := unpackLine(bad, nullStr("x"), nullStr("y")); err == nil {
			t.Errorf("unpackLine(%v): no error", bad)
		}
	}
}

// Whatever the texts and the line, unpacking gives the line back.
func FuzzPackLine(f *testing.F) {
	f.Add(`{"type":"exchange","user":`, "a long enough user text", `,"ai":`, "and an answer to it, <long>", `}`, byte(0))
	f.Add(`{"user": `, "caf\u00e9 \u2028 text\b", `, "ai":`, "🙂 \x01 answer & more", ` }`, byte(3))
	f.Fuzz(func(t *testing.T, a, user, b, ai, c string, style byte) {
		// Go's json.Marshal is one of the styles, to the byte.
		if utf8.ValidString(user) {
			want, _ := json.Marshal(user)
			if got := appendJSONString(nil, user, packStyles[1]); string(got) != string(want) {
				t.Fatalf("Go style of %q: %s, json.Marshal %s", user, got, want)
			}
		}
		st := packStyles[int(style)%len(packStyles)]
		line := a + string(appendJSONString(nil, user, st)) + b + string(appendJSONString(nil, ai, packStyles[int(style/4)%len(packStyles)])) + c
		packed := packLine([]byte(line), user, ai, nil)
		got, err := unpackLine(packed, sql.NullString{String: user, Valid: true}, sql.NullString{String: ai, Valid: true})
		if err != nil || !bytes.Equal(got, []byte(line)) {
			t.Fatalf("unpacked %q, %v; want %q", got, err, line)
		}
	})
}

// A database written by schema version 10 (whole raw lines) is packed by
// the version 11 migration: the raw column shrinks by the texts, and
// every reader of the line (RawLines, the events' Raw as export and the
// viewer read them, a duplicate id's comparison, edits in place) sees the
// same bytes as before.
func TestMigratePackedLines(t *testing.T) {
	dir := testDir(t)
	lines := []string{
		`{"type":"exchange","session_id":"s1","id":"e1","timestamp":"2025-01-02T03:04:05Z","user":"how do I run the tests of the index?","ai":"go test -tags sqlite_fts5 ./index from the root <of the repo>"}`,
		`{"type": "exchange", "session_id": "s1", "id": "e2", "timestamp": "2025-01-02T03:05:05Z", "user": "caf\u00e9 question, long enough", "ai": "ok"}`,
		`{"type":"context_reset","session_id":"s1","id":"r1","timestamp":"2025-01-02T03:06:05Z","reason":"context full"}`,
		`{"type":"exchange","session_id":"s2","timestamp":"2025-01-02T03:07:05Z","user":"see http:\/\/example.com\/a\/b please","ai":"an answer long enough to be cut"}`,
	}
	var before int64
	withMigrations(10, func() {
		db := openTest(t, dir)
		f := newFeeder(t, db, "a.jsonl")
		commit(t, db, f.batch(lines...))
		// Version 10 stored whole lines.
		for i, r := range rawTexts(t, db) {
			if _, err := db.w.Exec(`UPDATE events SET raw = ? WHERE generation = ? AND start_offset = ?`, []byte(lines[i]), f.gen.ID, mustRawLines(t, db)[i].Start); err != nil {
				t.Fatal(err)
			}
			_ = r
		}
		db.w.QueryRow(`SELECT sum(length(raw)) FROM events`).Scan(&before)
		db.Close()
	})
	db := openTest(t, dir)
	defer db.Close()
	if v, _ := userVersion(ctx, db.w); v != SchemaVersion() || v < 11 {
		t.Fatalf("user_version %d after migration", v)
	}
	var after int64
	var packed int
	db.w.QueryRow(`SELECT sum(length(raw)), count(*) FILTER (WHERE substr(raw, 1, 1) = x'01') FROM events`).Scan(&after, &packed)
	if packed != 3 || after >= before {
		t.Errorf("%d lines packed (want 3), raw column %d bytes, %d before", packed, after, before)
	}
	if got := rawTexts(t, db); strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("RawLines after migration:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(lines, "\n"))
	}
	evs, err := db.EventsBySession(ctx, "s1")
	if err != nil || len(evs) != 3 {
		t.Fatalf("EventsBySession = %d, %v", len(evs), err)
	}
	for i, e := range evs {
		if string(e.Raw) != lines[i] {
			t.Errorf("event %s Raw = %q, want %q", e.EventID, e.Raw, lines[i])
		}
	}
	// The same id again with the same line: a duplicate (the stored line
	// is compared whole), with another text: a reused id.
	f := newFeeder(t, db, "b.jsonl")
	commit(t, db, f.batch(lines[0], strings.Replace(lines[1], "question", "query", 1)))
	var dup, reused int
	db.w.QueryRow(`SELECT count(*) FILTER (WHERE kind = ?), count(*) FILTER (WHERE kind = ?) FROM rejects`, KindDuplicate, KindDuplicateID).Scan(&dup, &reused)
	if dup != 1 || reused != 1 {
		t.Errorf("rejects: %d duplicates, %d reused ids; want 1 and 1", dup, reused)
	}
	// New lines are stored packed as well.
	var n int
	db.w.QueryRow(`SELECT count(*) FROM events WHERE substr(raw, 1, 1) = x'01'`).Scan(&n)
	if n != 3 {
		t.Errorf("%d packed lines after the new commit, want 3", n)
	}
}

func mustRawLines(t *testing.T, db *DB) []RawEvent {
	t.Helper()
	r, err := db.RawLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// BenchmarkPackLine packs LongMemEval-like lines (json.Marshal's style:
// HTML escapes, a curly apostrophe) of about 2 KB.
func BenchmarkPackLine(b *testing.B) {
	user := strings.Repeat("I’m planning a trip & want <ideas> for the museum visit. ", 8)
	ai := strings.Repeat("Sure — here are a few ideas for your visit: the café opens at nine, tickets cost €12. ", 18)
	line, err := json.Marshal(map[string]string{"type": "exchange", "session_id": "s1", "user": user, "ai": ai})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	var buf []byte
	for b.Loop() {
		buf = packLine(line, user, ai, buf)
		if buf[0] != packMagic || buf[1] != 2 {
			b.Fatal("not packed")
		}
	}
}
