package index

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkFTS5Content measures FTS5's content options on the exchanges of
// a real index (CONTINUITY_BENCH_INDEX: an index.db, say a prepared
// continuity-bench workspace's), in index form: contentless with
// contentless_delete (fulltext.db's), the texts stored in the FTS5 table
// (the default), and external content (a table of the index-form texts
// beside it: events' own columns cannot be the content, FTS5 is given
// analysed text). It reports each file's size and the p50 of a ranked
// query (bm25, top 10) over the same words.
//
//	CONTINUITY_BENCH_INDEX=/ws/.praxis-os/.cache/continuity/index.db \
//	  go test -tags sqlite_fts5 ./index -run XXX -bench FTS5Content -benchtime 1x
func BenchmarkFTS5Content(b *testing.B) {
	path := os.Getenv("CONTINUITY_BENCH_INDEX")
	if path == "" {
		b.Skip("CONTINUITY_BENCH_INDEX is not set")
	}
	db, err := Open(filepath.Dir(path), Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	docs, _, err := db.ExchangeDocs(ctx, 0, 0)
	db.Close()
	if err != nil {
		b.Fatal(err)
	}
	words := map[string]int{}
	for _, d := range docs[:min(len(docs), 2000)] {
		for _, w := range strings.Fields(d.User) {
			words[w]++
		}
	}
	var queries []string
	for w, n := range words {
		if n >= 3 && len(queries) < 200 && !strings.ContainsAny(w, `"*:^()-+`) {
			queries = append(queries, `"`+w+`"`)
		}
	}
	slices.Sort(queries)
	variants := []struct{ name, schema string }{
		{"contentless (today)", `CREATE VIRTUAL TABLE f USING fts5(user, ai, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0');`},
		{"content stored", `CREATE VIRTUAL TABLE f USING fts5(user, ai, tokenize = 'unicode61 remove_diacritics 0');`},
		{"external content", `CREATE TABLE c (id INTEGER PRIMARY KEY, user TEXT, ai TEXT);
CREATE VIRTUAL TABLE f USING fts5(user, ai, content = 'c', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 0');`},
	}
	dir := b.TempDir()
	for _, v := range variants {
		file := filepath.Join(dir, strings.ReplaceAll(v.name, " ", "_")+".db")
		w, err := sql.Open("sqlite3", "file:"+file+"?_journal_mode=WAL&_synchronous=NORMAL")
		if err != nil {
			b.Fatal(err)
		}
		w.SetMaxOpenConns(1)
		if _, err := w.Exec(`PRAGMA page_size = 16384; ` + v.schema); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		tx, _ := w.Begin()
		for _, d := range docs {
			if strings.HasPrefix(v.name, "external") {
				if _, err := tx.Exec(`INSERT INTO c (id, user, ai) VALUES (?, ?, ?)`, d.Row, d.User, d.AI); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := tx.Exec(`INSERT INTO f (rowid, user, ai) VALUES (?, ?, ?)`, d.Row, d.User, d.AI); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		w.Exec(`INSERT INTO f (f) VALUES ('optimize'); PRAGMA wal_checkpoint(TRUNCATE);`)
		took := time.Since(start)
		var lat []time.Duration
		for _, q := range queries {
			t0 := time.Now()
			rows, err := w.Query(`SELECT rowid, bm25(f) FROM f WHERE f MATCH ? ORDER BY rank LIMIT 10`, q)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
			}
			rows.Close()
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		w.Close()
		st, err := os.Stat(file)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%-20s %d exchanges: %.1f MB (%.0f B an exchange), built in %s, query p50 %s p90 %s (%d queries)\n",
			v.name, len(docs), float64(st.Size())/1e6, float64(st.Size())/float64(len(docs)), took.Round(time.Millisecond),
			lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*9/10].Round(time.Microsecond), len(lat))
	}
}
