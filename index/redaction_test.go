package index

import (
	"database/sql"
	"strings"
	"testing"
	"time"
)

// TestRedactStored: what an older version stored unredacted (a secret
// hidden by JSON escapes in the raw line, a secret in a file path) is
// redacted at the next Open, once; events without secrets stay byte for
// byte; with redaction off, nothing happens until it is on again.
func TestRedactStored(t *testing.T) {
	const (
		hidden   = `{"type":"exchange","session_id":"s","id":"e1","user":"key \u0041KIAIOSFODNN7EXAMPLE here","ai":"ok"}`
		harmless = `{"type":"exchange","session_id":"s","id":"e2","user":"caf\u00e9 \/ \u0041","ai":"ok","files":["main.go"]}`
	)
	// Built in parts: the repository holds no literal secret (see
	// redact's TestRepoHasNoFalsePositives).
	clone := `["https://bob:` + `Xk9qZr7Lw2vT` + `@git.example.org/x.git"]`
	dir := testDir(t)
	db := openTest(t, dir)
	f := newFeeder(t, db, "a.jsonl")
	if err := db.Commit(ctx, f.batch(hidden, harmless)); err != nil {
		t.Fatal(err)
	}
	if got := rawOf(t, db, "e1"); strings.Contains(got, "IOSFODNN7") {
		t.Fatalf("Commit stored the hidden secret: %s", got)
	}
	// What an older version left: the secret in raw, no version counter.
	if _, err := db.w.Exec(`UPDATE events SET raw = ?, files = ? WHERE producer_id = 'e1'`, []byte(hidden), clone); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`DELETE FROM counters WHERE name = ?`, counterStoredRedaction); err != nil {
		t.Fatal(err)
	}
	before := counter(t, db, CounterRedactions)
	db.Close()

	// Redaction off: left as it is, and the pass stays due.
	off, err := Open(dir, Options{Now: func() time.Time { return fixedNow }, NoRedaction: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := rawOf(t, off, "e1"); got != hidden || counter(t, off, counterStoredRedaction) != 0 {
		t.Errorf("redaction off changed raw or marked it done: %s", got)
	}
	off.Close()

	for i := 0; i < 2; i++ { // the second Open has nothing left to do
		db := openTest(t, dir)
		if got := rawOf(t, db, "e1"); strings.Contains(got, "IOSFODNN7") || !strings.Contains(got, "[REDACTED:aws-access-key-id]") {
			t.Errorf("open %d: raw still holds the secret: %s", i, got)
		}
		if got := rawOf(t, db, "e2"); got != harmless {
			t.Errorf("open %d: a line without secrets changed: %s", i, got)
		}
		var files, harmlessFiles string
		if err := db.w.QueryRow(`SELECT (SELECT files FROM events WHERE producer_id = 'e1'), (SELECT files FROM events WHERE producer_id = 'e2')`).
			Scan(&files, &harmlessFiles); err != nil {
			t.Fatal(err)
		}
		if files != `["https://bob:[REDACTED:url-password]@git.example.org/x.git"]` || harmlessFiles != `["main.go"]` {
			t.Errorf("open %d: files %s and %s", i, files, harmlessFiles)
		}
		if n := counter(t, db, CounterRedactions); n != before+2 {
			t.Errorf("open %d: redactions %d, want %d", i, n, before+2)
		}
		if v := counter(t, db, counterStoredRedaction); v != storedRedactionVersion {
			t.Errorf("open %d: raw redaction version %d, want %d", i, v, storedRedactionVersion)
		}
		db.Close()
	}
}

func rawOf(t *testing.T, db *DB, producerID string) string {
	t.Helper()
	var raw []byte
	var user, ai sql.NullString
	if err := db.w.QueryRow(`SELECT raw, user, ai FROM events WHERE producer_id = ?`, producerID).Scan(&raw, &user, &ai); err != nil {
		t.Fatal(err)
	}
	line, err := unpackLine(raw, user, ai)
	if err != nil {
		t.Fatal(err)
	}
	return string(line)
}

func counter(t *testing.T, db *DB, name string) int64 {
	t.Helper()
	var n int64
	err := db.w.QueryRow(`SELECT value FROM counters WHERE name = ?`, name).Scan(&n)
	if err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	return n
}

// TestRedactFiles: a secret in a file path (a clone URL with its password)
// is redacted in the stored files list, which resume shows.
func TestRedactFiles(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	line := `{"type":"exchange","session_id":"s","id":"e1","user":"clone it","files":["https://bob:` + `Xk9qZr7Lw2vT` +
		`@git.example.org/x.git","main.go"]}`
	if err := db.Commit(ctx, f.batch(line)); err != nil {
		t.Fatal(err)
	}
	var files string
	if err := db.w.QueryRow(`SELECT files FROM events WHERE producer_id = 'e1'`).Scan(&files); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(files, "Xk9qZr7Lw2vT") || !strings.Contains(files, "[REDACTED:url-password]") || !strings.Contains(files, `"main.go"`) {
		t.Errorf("stored files %s", files)
	}
}
