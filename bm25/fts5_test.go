//go:build sqlite_fts5

package bm25

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/praxis-os/continuity/analyze"

	"github.com/praxis-os/continuity/internal/shareddata"
)

// The decisive tests: the engine against a real FTS5 table of the schema
// of index/fulltext.go, fed the same documents, asked the same queries.

const ftsSchema = `CREATE VIRTUAL TABLE t USING fts5(user, ai, content = '', contentless_delete = 1,
	tokenize = 'unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE ti USING fts5vocab(t, 'instance');
CREATE VIRTUAL TABLE tr USING fts5vocab(t, 'row');
CREATE TABLE meta (id INTEGER PRIMARY KEY, session TEXT NOT NULL, ts INTEGER NOT NULL);`

// evalData is the LongMemEval development set's folder
// ($CONTINUITY_EVAL_DATA, else ../shared/data/longmemeval-s-dev beside the
// repository), "" when absent.
func evalData() string {
	dir := shareddata.LongMemEval()
	if _, err := os.Stat(filepath.Join(dir, "logs")); err != nil {
		return ""
	}
	return dir
}

type rawExchange struct {
	Type      string `json:"type"`
	User      string `json:"user"`
	AI        string `json:"ai"`
	Session   string `json:"session_id"`
	Timestamp string `json:"timestamp"`
}

// longMemEvalDocs reads up to max exchanges of the dev set's logs as
// analysed documents (rows from 1, with gaps), nil when the set is
// absent.
func longMemEvalDocs(tb testing.TB, max int) []Doc {
	dir := evalData()
	if dir == "" {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "logs", "*.jsonl"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("LongMemEval logs in %s: %v", dir, err)
	}
	var docs []Doc
	row := int64(0)
	for _, fn := range files {
		f, err := os.Open(fn)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() && len(docs) < max {
			var e rawExchange
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "exchange" {
				continue
			}
			ts, _ := time.Parse(time.RFC3339, e.Timestamp)
			row += 1 + int64(len(docs)%3)
			docs = append(docs, Doc{Row: row, Session: e.Session, TS: ts.UnixNano(),
				User: analyze.Document(e.User), AI: analyze.Document(e.AI)})
		}
		f.Close()
		if len(docs) >= max {
			break
		}
	}
	return docs
}

// oddWords are texts that try the tokenizer: accents, capitals, CJK,
// combining marks, digits, symbols, emoji, invalid UTF-8.
var oddWords = []string{
	"café", "naïve", "Straße", "ÉCOLE", "日本語", "本語", "語", "테스트", "ﾃｽﾄ", "Ⅻ", "²", "x²", "e\u0301",
	"a\u0300b", "\u0300x", "ग्रंथ", "İstanbul", "ΣΟΦΙΑ", "ς", "😀smile", "ab\xffcd", "\xc3", "\xe6\x97", "ab\x80cd",
	"\xed\xa0\x80z", "\xf4\x90\x80\x80y", "\xf8\x88\x80\x80\x80w", "ß", "ﬁx", "Ǆ", "ǅ", "\U000E0041tag", "\U00100000pu",
	"\uE000pua", "١٢٣", "foo_bar", "don't", "a.b", "ＡＢＣ", "\u200dzwj", "Ω", "K", "Å",
}

// syntheticDocs makes n documents of Zipf-distributed words of a small
// vocabulary, some odd words, sometimes raw (not analysed) text, in
// sessions of a few dozen; rows start after from.
func syntheticDocs(rng *rand.Rand, n int, from int64) []Doc {
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x%c", i, 'a'+rune(i%26))
	}
	z := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	text := func() string {
		var b strings.Builder
		for range rng.IntN(40) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			if rng.IntN(25) == 0 {
				b.WriteString(oddWords[rng.IntN(len(oddWords))])
			} else {
				b.WriteString(vocab[z.Uint64()])
			}
		}
		if rng.IntN(10) == 0 {
			return b.String()
		}
		return analyze.Document(b.String())
	}
	docs := make([]Doc, n)
	row := from
	for i := range docs {
		row += 1 + int64(rng.IntN(3))
		docs[i] = Doc{Row: row, Session: fmt.Sprintf("s%d", i/30), TS: int64(1e18) + row*int64(time.Second), User: text(), AI: text()}
		if rng.IntN(50) == 0 {
			docs[i].AI = ""
		}
		if rng.IntN(200) == 0 {
			docs[i].User = strings.Repeat("zz", 17000) + " tail" // a token over 32768 bytes
		}
	}
	return docs
}

type ftsIndex struct {
	db *sql.DB
}

func openFTS(tb testing.TB) *ftsIndex {
	db, err := sql.Open("sqlite3", filepath.Join(tb.TempDir(), "fts.db"))
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(ftsSchema); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return &ftsIndex{db: db}
}

func (f *ftsIndex) add(tb testing.TB, docs []Doc) {
	tx, err := f.db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range docs {
		if _, err := tx.Exec(`INSERT INTO t (rowid, user, ai) VALUES (?, ?, ?)`, d.Row, d.User, d.AI); err != nil {
			tb.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO meta (id, session, ts) VALUES (?, ?, ?)`, d.Row, d.Session, d.TS); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

func (f *ftsIndex) delete(tb testing.TB, rows []int64) {
	for _, r := range rows {
		if _, err := f.db.Exec(`DELETE FROM t WHERE rowid = ?`, r); err != nil {
			tb.Fatal(err)
		}
	}
}

// matchAny is analyze.MatchAny's expression of single terms.
func matchAny(terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(q, " OR ")
}

// search asks FTS5 as index.DB.Lexical does.
func (f *ftsIndex) search(tb testing.TB, terms []string, w [2]float64, flt Filter, limit int) []Hit {
	if w == [2]float64{} {
		w = [2]float64{1, 1}
	}
	q := `SELECT rowid, rank FROM t WHERE t MATCH ?1 AND rank MATCH ?2`
	args := []any{matchAny(terms), fmt.Sprintf("bm25(%v, %v)", w[0], w[1])}
	var conds []string
	if flt.Sessions != nil {
		js, _ := json.Marshal(flt.Sessions)
		conds = append(conds, fmt.Sprintf(`session IN (SELECT value FROM json_each(%s))`, quoteSQL(string(js))))
	}
	if flt.Since != 0 {
		conds = append(conds, fmt.Sprintf(`ts >= %d`, flt.Since))
	}
	if flt.Until != 0 {
		conds = append(conds, fmt.Sprintf(`ts < %d`, flt.Until))
	}
	if len(conds) > 0 {
		q += ` AND EXISTS (SELECT 1 FROM meta WHERE id = t.rowid AND ` + strings.Join(conds, " AND ") + `)`
	}
	q += ` ORDER BY rank, rowid`
	if limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, limit)
	}
	rows, err := f.db.Query(q, args...)
	if err != nil {
		tb.Fatalf("fts5 %q: %v", args[0], err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.Row, &h.Score); err != nil {
			tb.Fatal(err)
		}
		h.Score = -h.Score
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return hits
}

func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// vocabulary returns the terms of the FTS5 index with their document
// counts.
func (f *ftsIndex) vocabulary(tb testing.TB) (terms []string, docs []int64) {
	rows, err := f.db.Query(`SELECT term, doc FROM tr`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			tb.Fatal(err)
		}
		terms, docs = append(terms, t), append(docs, n)
	}
	return terms, docs
}

// compareQueries runs n random queries on both and fails at the first
// difference.
func compareQueries(t *testing.T, rng *rand.Rand, ix *Index, fts *ftsIndex, docs []Doc, n int) {
	t.Helper()
	vocab, _ := fts.vocabulary(t)
	if len(vocab) == 0 {
		t.Fatal("empty vocabulary")
	}
	weights := [][2]float64{{5, 1}, {1, 1}, {0, 0}, {0.3, 2.7}, {1, 0}}
	var sessions []string
	for _, d := range docs {
		if len(sessions) == 0 || sessions[len(sessions)-1] != d.Session {
			sessions = append(sessions, d.Session)
		}
	}
	exact, nonEmpty := 0, 0
	for q := range n {
		nt := 1 + rng.IntN(12)
		var terms []string
		for range nt {
			switch r := rng.IntN(20); {
			case r == 0:
				terms = append(terms, "absentterm")
			case r == 1 && len(terms) > 0:
				terms = append(terms, terms[rng.IntN(len(terms))]) // a duplicate
			default:
				terms = append(terms, vocab[rng.IntN(len(vocab))])
			}
		}
		w := weights[rng.IntN(len(weights))]
		var flt Filter
		switch rng.IntN(5) {
		case 0:
			flt.Sessions = []string{sessions[rng.IntN(len(sessions))], sessions[rng.IntN(len(sessions))], "nosuch"}
		case 1:
			d := docs[rng.IntN(len(docs))]
			flt.Since = d.TS
			flt.Until = d.TS + int64(rng.IntN(1e6))*int64(time.Second)
		case 2:
			flt.Sessions = []string{"nosuch"}
		}
		limit := []int{0, 1, 10, 50}[rng.IntN(4)]
		want := fts.search(t, terms, w, flt, limit)
		got, err := ix.Search(terms, w, flt, limit)
		if err != nil {
			t.Fatalf("query %d %q: %v", q, terms, err)
		}
		if len(want) > 0 {
			nonEmpty++
		}
		if len(got) != len(want) {
			t.Fatalf("query %d %q w %v filter %+v limit %d: %d hits, FTS5 %d\n got %v\nwant %v", q, terms, w, flt, limit, len(got), len(want), head(got), head(want))
		}
		for i := range want {
			if got[i].Row != want[i].Row || math.Float64bits(got[i].Score) != math.Float64bits(want[i].Score) {
				t.Fatalf("query %d %q w %v filter %+v limit %d: hit %d is %+v, FTS5 %+v (diff %g)", q, terms, w, flt, limit, i, got[i], want[i], got[i].Score-want[i].Score)
			}
		}
		exact++
	}
	if nonEmpty < n/4 {
		t.Fatalf("only %d of %d queries matched anything: the test proves little", nonEmpty, n)
	}
	t.Logf("%d queries (%d with hits): rows, order and scores bit-identical to FTS5", exact, nonEmpty)
}

func head(h []Hit) []Hit { return h[:min(5, len(h))] }

// corpus is LongMemEval documents when present, then synthetic ones.
func corpus(t *testing.T, rng *rand.Rand, lme, synth int) []Doc {
	docs := longMemEvalDocs(t, lme)
	if docs == nil {
		t.Log("LongMemEval dev set absent ($CONTINUITY_EVAL_DATA or ../shared/data/longmemeval-s-dev): synthetic texts only")
	}
	last := int64(0)
	if len(docs) > 0 {
		last = docs[len(docs)-1].Row
	}
	return append(docs, syntheticDocs(rng, synth, last)...)
}

// exactScale multiplies TestExactAgainstFTS5's documents and queries
// ($BM25_EXACT_SCALE, 1 by default): a longer check run by hand.
func exactScale() int {
	if n, err := strconv.Atoi(os.Getenv("BM25_EXACT_SCALE")); err == nil && n > 0 {
		return n
	}
	return 1
}

func TestExactAgainstFTS5(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sc := exactScale()
	docs := corpus(t, rng, 4000*sc, 3000*sc)
	fts := openFTS(t)
	fts.add(t, docs)

	for _, tc := range []struct {
		name string
		seal int
	}{{"tail", 1 << 30}, {"segments", 1500 * sc}} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(s int) { SealDocs = s }(SealDocs)
			SealDocs = tc.seal
			dir := t.TempDir()
			ix, err := Open(dir, "id1")
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(docs); i += 700 {
				if err := ix.Add(docs[i:min(i+700, len(docs))]); err != nil {
					t.Fatal(err)
				}
			}
			if ix.Len() != len(docs) || ix.Watermark() != docs[len(docs)-1].Row {
				t.Fatalf("Len %d Watermark %d", ix.Len(), ix.Watermark())
			}
			compareQueries(t, rng, ix, fts, docs, 300*sc)
			if err := ix.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			if ix, err = Open(dir, "id1"); err != nil || ix.Reset() != nil {
				t.Fatal(err, ix.Reset())
			}
			defer ix.Close()
			if ix.Len() != len(docs) {
				t.Fatalf("reopened: Len %d, want %d", ix.Len(), len(docs))
			}
			compareQueries(t, rng, ix, fts, docs, 150)
		})
	}
}

// TestExactAfterDelete deletes rows of segments and of the tail from both,
// and compares before and after a reopen.
func TestExactAfterDelete(t *testing.T) {
	defer func(s int) { SealDocs = s }(SealDocs)
	SealDocs = 1000
	rng := rand.New(rand.NewPCG(3, 4))
	docs := corpus(t, rng, 2000, 1500)
	fts := openFTS(t)
	fts.add(t, docs)
	dir := t.TempDir()
	ix, err := Open(dir, "id")
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	var del []int64
	for _, d := range docs {
		if rng.IntN(7) == 0 {
			del = append(del, d.Row)
		}
	}
	// Whole sessions too, as forget does.
	for _, d := range docs[len(docs)/2:] {
		if d.Session == docs[len(docs)/2].Session {
			del = append(del, d.Row)
		}
	}
	del = append(del, -5, docs[len(docs)-1].Row+100) // absent rows
	slices.Sort(del)
	del = slices.Compact(del)
	fts.delete(t, del)
	if err := ix.Delete(del); err != nil {
		t.Fatal(err)
	}
	if err := ix.Delete(del[:10]); err != nil { // again: no change
		t.Fatal(err)
	}
	var live int
	if err := fts.db.QueryRow(`SELECT count(*) FROM meta WHERE id NOT IN (SELECT value FROM json_each(?))`, mustJSON(del)).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if ix.Len() != live {
		t.Fatalf("Len %d after deletes, want %d", ix.Len(), live)
	}
	compareQueries(t, rng, ix, fts, docs, 200)
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if ix, err = Open(dir, "id"); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Len() != live {
		t.Fatalf("reopened: Len %d, want %d", ix.Len(), live)
	}
	compareQueries(t, rng, ix, fts, docs, 150)
	checkDocFreq(t, ix, fts)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkDocFreq compares DocFreq with fts5vocab's document counts.
func checkDocFreq(t *testing.T, ix *Index, fts *ftsIndex) {
	all, counts := fts.vocabulary(t)
	// A stored term a query cannot name (one written from invalid UTF-8
	// reads back as another token) is left out.
	var terms []string
	var want []int64
	for i, term := range all {
		if tok, err := tokenOf(term); err == nil && tok == term {
			terms, want = append(terms, term), append(want, counts[i])
		}
	}
	got, n, err := ix.DocFreq(terms)
	if err != nil {
		t.Fatal(err)
	}
	for i := range terms {
		if got[i] != want[i] {
			t.Fatalf("DocFreq(%q) = %d, fts5vocab %d", terms[i], got[i], want[i])
		}
	}
	if n != int64(ix.Len()) {
		t.Fatalf("DocFreq n %d, Len %d", n, ix.Len())
	}
}

// TestTokensAgainstFTS5 compares, document by document, the tokens the
// engine counts with the instances FTS5 stores (fts5vocab 'instance'):
// every token of every column, in order.
func TestTokensAgainstFTS5(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	docs := corpus(t, rng, 3000, 3000)
	// Every odd word alone, raw and analysed, and all of them together.
	row := docs[len(docs)-1].Row
	for _, w := range oddWords {
		for _, s := range []string{w, analyze.Document(w), "x" + w + "y " + strings.ToUpper(w)} {
			row++
			docs = append(docs, Doc{Row: row, Session: "odd", User: s, AI: w + " " + s})
		}
	}
	fts := openFTS(t)
	fts.add(t, docs)
	rows, err := fts.db.Query(`SELECT doc, col, term FROM ti ORDER BY doc, col, offset`)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		row int64
		col string
	}
	want := map[key][]string{}
	for rows.Next() {
		var k key
		var term string
		if err := rows.Scan(&k.row, &k.col, &term); err != nil {
			t.Fatal(err)
		}
		want[k] = append(want[k], term)
	}
	rows.Close()
	for _, d := range docs {
		for col, text := range map[string]string{"user": d.User, "ai": d.AI} {
			var got []string
			tokenize(text, nil, func(tok []byte) { got = append(got, string(tok)) })
			w := want[key{d.Row, col}]
			if !slices.Equal(got, w) {
				t.Fatalf("row %d %s %q: tokens %q, FTS5 %q", d.Row, col, text, got, w)
			}
		}
	}
	// And the per-document lengths the engine keeps.
	ix, err := Open(t.TempDir(), "id")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		n := len(want[key{d.Row, "user"}]) + len(want[key{d.Row, "ai"}])
		if got := ix.tail.docs.lens[i]; int(got) != n {
			t.Fatalf("row %d: length %d, FTS5 %d", d.Row, got, n)
		}
	}
}

// TestExactAfterMerges flushes after every small batch (a segment each),
// deleting along the way, so that segments are merged (and tombstones
// dropped) many times over; answers stay FTS5's, before and after a
// reopen, and the segment count stays logarithmic.
func TestExactAfterMerges(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	docs := corpus(t, rng, 1500, 2500)
	fts := openFTS(t)
	fts.add(t, docs)
	dir := t.TempDir()
	ix, err := Open(dir, "m")
	if err != nil {
		t.Fatal(err)
	}
	var del []int64
	maxSegs := 0
	for i := 0; i < len(docs); i += 37 {
		batch := docs[i:min(i+37, len(docs))]
		if err := ix.Add(batch); err != nil {
			t.Fatal(err)
		}
		if err := ix.Flush(); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(4) == 0 {
			r := docs[rng.IntN(i+len(batch))].Row
			del = append(del, r)
			if err := ix.Delete([]int64{r}); err != nil {
				t.Fatal(err)
			}
		}
		maxSegs = max(maxSegs, len(ix.segs))
	}
	fts.delete(t, del)
	t.Logf("%d flushes, at most %d segments, %d at the end", (len(docs)+36)/37, maxSegs, len(ix.segs))
	if maxSegs > 3*mergeFanIn {
		t.Fatalf("%d segments at once: merging does not keep up", maxSegs)
	}
	compareQueries(t, rng, ix, fts, docs, 200)
	checkDocFreq(t, ix, fts)
	ix.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	ix, err = Open(dir, "m")
	if err != nil || ix.Reset() != nil {
		t.Fatal(err, ix.Reset())
	}
	defer ix.Close()
	if len(files) != len(ix.segs)+1 {
		t.Fatalf("%d files for %d segments and a manifest: %v", len(files), len(ix.segs), files)
	}
	compareQueries(t, rng, ix, fts, docs, 150)
}

// TestUnicodeTableAgainstFTS5 checks the generated unicode61 tables
// against the SQLite linked in, on every code point below U+3400 and a
// sample of the others (internal/u61gen checks them all): a SQLite
// upgrade with other Unicode tables fails here, and the tables are to be
// generated again.
func TestUnicodeTableAgainstFTS5(t *testing.T) {
	var docs []Doc
	add := func(c uint32) {
		e := string(appendUTF8(nil, c))
		docs = append(docs, Doc{Row: int64(len(docs) + 1), User: "x" + e + "x " + e + " z Q" + e})
	}
	for c := uint32(0x80); c < 0x3400; c++ {
		add(c)
	}
	for c := uint32(0x3400); c < 0x110000; c += 97 {
		add(c)
	}
	fts := openFTS(t)
	fts.add(t, docs)
	rows, err := fts.db.Query(`SELECT doc, term FROM ti WHERE col = 'user' ORDER BY doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64][]string{}
	for rows.Next() {
		var doc int64
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		want[doc] = append(want[doc], term)
	}
	rows.Close()
	for _, d := range docs {
		var got []string
		tokenize(d.User, nil, func(tok []byte) { got = append(got, string(tok)) })
		if !slices.Equal(got, want[d.Row]) {
			t.Fatalf("%q: tokens %q, FTS5 %q (regenerate: go run -tags sqlite_fts5 ./bm25/internal/u61gen)", d.User, got, want[d.Row])
		}
	}
	t.Logf("%d code points agree", len(docs))
}
