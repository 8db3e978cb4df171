package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func drainFullText(t testing.TB, db *DB) {
	t.Helper()
	if err := db.DrainFullText(ctx); err != nil {
		t.Fatal(err)
	}
}

func fullTextPending(t testing.TB, db *DB) int64 {
	t.Helper()
	n, err := db.FullTextPending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Deleting the newest events must not let new events take their row ids:
// the full-text index follows new events by id, and would skip them.
func TestFullTextRowIDsNotReused(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(exchangeAt("keep", hour(1), "kept words", ""), exchangeAt("gone", hour(2), "forgotten words", "")))
	drainFullText(t, db)
	before := rowsOf(t, db)
	if _, err := db.DeleteSession(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	commit(t, db, f.batch(exchangeAt("new", hour(3), "fresh words", "")))
	after := rowsOf(t, db)
	if after["fresh words"] <= before["forgotten words"] {
		t.Errorf("new event got row %d, not above the deleted row %d", after["fresh words"], before["forgotten words"])
	}
	drainFullText(t, db)
	if got := ftsRows(t, db, "words"); !reflect.DeepEqual(got, []int64{before["kept words"], after["fresh words"]}) {
		t.Errorf("words found in %v, want the kept and the fresh rows", got)
	}
	if n := fullTextPending(t, db); n != 0 {
		t.Errorf("pending = %d after Drain", n)
	}
}

// A deletion of an exchange the full-text index has not read yet is
// harmless, and the exchange is never indexed.
func TestFullTextDeleteBeforeIndexing(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(exchangeAt("gone", hour(1), "never indexed", ""), exchangeAt("keep", hour(2), "indexed", "")))
	if _, err := db.DeleteSession(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	drainFullText(t, db)
	if got := ftsRows(t, db, "never"); len(got) != 0 {
		t.Errorf("deleted exchange found: %v", got)
	}
	if got := ftsRows(t, db, "indexed"); len(got) != 1 {
		t.Errorf("indexed found in %v, want 1 row", got)
	}
}

// The full-text index survives a reopen, and is rebuilt from the events
// when its file is missing, of another index.db, or of another layout.
func TestFullTextRebuild(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(exchangeAt("s", hour(1), "persistent text", ""), exchangeAt("s", hour(2), "more text", "")))
	drainFullText(t, db)
	want := ftsRows(t, db, "text")
	db.Close()

	other := testDir(t)
	odb := openTest(t, other)
	commit(t, odb, newFeeder(t, odb, "b.jsonl").batch(exchangeAt("x", hour(1), "foreign text", "")))
	drainFullText(t, odb)
	odb.Close()

	ftFile := filepath.Join(dir, FullTextFileName)
	copyFile := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		damage  func()
		pending int64 // before the indexer runs
	}{
		{"reopen", func() {}, 0},
		{"missing", func() { os.Remove(ftFile) }, 2},
		{"another index", func() { copyFile(filepath.Join(other, FullTextFileName), ftFile) }, 2},
		{"garbage", func() {
			for _, p := range []string{ftFile, ftFile + "-wal", ftFile + "-shm"} {
				os.Remove(p)
			}
			if err := os.WriteFile(ftFile, []byte(strings.Repeat("not a database. ", 4096)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, 2},
		{"another layout", func() {
			db := openTest(t, dir)
			if _, err := db.ft.Exec(fmt.Sprintf("PRAGMA user_version = %d", fullTextVersion+1)); err != nil {
				t.Fatal(err)
			}
			db.Close()
		}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.damage()
			db := openTest(t, dir)
			defer db.Close()
			if n := fullTextPending(t, db); n != c.pending {
				t.Errorf("pending after open = %d, want %d", n, c.pending)
			}
			drainFullText(t, db)
			if got := ftsRows(t, db, "text"); !reflect.DeepEqual(got, want) {
				t.Errorf("text found in %v, want %v", got, want)
			}
			if info, err := os.Stat(ftFile); err != nil || info.Mode().Perm() != 0o600 {
				t.Errorf("%s: %v, %v, want mode 0600", ftFile, info.Mode(), err)
			}
		})
	}
}

// In the writing process a search sees every exchange committed before
// it when the lag is small; behind a backfill-sized lag it does not wait,
// and the indexer catches up.
func TestLexicalCatchesUpSmallLag(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(exchangeAt("s", hour(1), "needle in a small lag", "")))
	if got := ftsRows(t, db, "needle"); len(got) != 1 {
		t.Fatalf("small lag: needle found in %v, want 1 row", got)
	}
	lines := make([]string, fullTextSyncLag+1)
	for i := range lines {
		lines[i] = exchangeAt("s", hour(2), fmt.Sprintf("haystack %d", i), "")
	}
	commit(t, db, f.batch(lines...))
	hits, err := db.Lexical(ctx, "haystack", [2]float64{}, Filter{}, 0)
	if err != nil || len(hits) != 0 {
		t.Errorf("large lag: %d hits, %v; want none before the indexer runs", len(hits), err)
	}
	if n := fullTextPending(t, db); n != int64(len(lines)) {
		t.Errorf("pending = %d, want %d", n, len(lines))
	}
	drainFullText(t, db)
	if hits, err := db.Lexical(ctx, "haystack", [2]float64{}, Filter{}, 0); err != nil || len(hits) != len(lines) {
		t.Errorf("after Drain: %d hits, %v; want %d", len(hits), err, len(lines))
	}
}

// A reader opened before any full-text index exists says so clearly.
func TestLexicalWithoutFullTextFile(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	commit(t, db, newFeeder(t, db, "a.jsonl").batch(exchangeAt("s", hour(1), "words", "")))
	db.Close()
	for _, p := range []string{FullTextFileName, FullTextFileName + "-wal", FullTextFileName + "-shm"} {
		os.Remove(filepath.Join(dir, p))
	}
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Lexical(ctx, "words", [2]float64{}, Filter{}, 1); err == nil || !errors.Is(err, ErrNoFullText) {
		t.Errorf("Lexical without fulltext.db: %v, want ErrNoFullText", err)
	}
	if _, err := ro.FullTextPending(ctx); !errors.Is(err, ErrNoFullText) {
		t.Errorf("FullTextPending without fulltext.db: %v, want ErrNoFullText", err)
	}
}

// A damaged full-text index does not take the events with it: a reader
// still reads them, and full-text queries say what is wrong and how to fix
// it.
func TestReaderWithDamagedFullText(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	commit(t, db, newFeeder(t, db, "a.jsonl").batch(exchangeAt("s", hour(1), "words", "")))
	db.Close()
	ft := filepath.Join(dir, FullTextFileName)
	for _, p := range []string{ft, ft + "-wal", ft + "-shm"} {
		os.Remove(p)
	}
	if err := os.WriteFile(ft, []byte(strings.Repeat("not a database. ", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open with a damaged fulltext.db: %v", err)
	}
	defer ro.Close()
	if st, err := ro.Status(ctx); err != nil || st.Exchanges != 1 {
		t.Errorf("Status = %d exchanges, %v; want 1", st.Exchanges, err)
	}
	_, err = ro.Lexical(ctx, "words", [2]float64{}, Filter{}, 1)
	if err == nil || !strings.Contains(err.Error(), "cannot be read") || !strings.Contains(err.Error(), "rebuilds") {
		t.Errorf("Lexical with a damaged fulltext.db: %v", err)
	}
}

// A reader finding a full-text index of an older layout (its terms made
// another way: porter stems before Snowball) says so rather than answer
// from it; a writer rebuilds it and the reader then finds the words.
func TestReaderWithOldFullTextLayout(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	commit(t, db, newFeeder(t, db, "a.jsonl").batch(exchangeAt("s", hour(1), "running words", "")))
	if _, err := db.ft.Exec(fmt.Sprintf("PRAGMA user_version = %d", fullTextVersion-1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ro.Lexical(ctx, "run", [2]float64{}, Filter{}, 1)
	if err == nil || !strings.Contains(err.Error(), "another version") || !strings.Contains(err.Error(), "rebuilds") {
		t.Errorf("Lexical with an old fulltext.db: %v", err)
	}
	ro.Close()

	db = openTest(t, dir) // the writer rebuilds it
	if got := ftsRows(t, db, "running"); len(got) != 1 {
		t.Errorf("after the rebuild: running found in %v, want 1 row", got)
	}
	db.Close()
	ro, err = Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if hits, err := ro.Lexical(ctx, "run", [2]float64{}, Filter{}, 1); err != nil || len(hits) != 1 {
		t.Errorf("reader after the rebuild: %v, %v", hits, err)
	}
}
