package bm25

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func openT(t *testing.T, dir, id string) *Index {
	t.Helper()
	ix, err := Open(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestEmptyAndOneDoc(t *testing.T) {
	for _, tc := range []struct {
		name  string
		docs  []Doc
		terms []string
		f     Filter
		want  []int64
	}{
		{"empty index", nil, []string{"a"}, Filter{}, nil},
		{"no terms", []Doc{{Row: 1, User: "a"}}, nil, Filter{}, nil},
		{"one doc", []Doc{{Row: 7, User: "alpha beta", AI: "beta"}}, []string{"beta"}, Filter{}, []int64{7}},
		{"absent term", []Doc{{Row: 7, User: "alpha"}}, []string{"gamma"}, Filter{}, nil},
		{"empty texts", []Doc{{Row: 1}, {Row: 2, AI: "x"}}, []string{"x"}, Filter{}, []int64{2}},
		{"no sessions", []Doc{{Row: 1, User: "x", Session: "s"}}, []string{"x"}, Filter{Sessions: []string{}}, nil},
		{"unknown session", []Doc{{Row: 1, User: "x", Session: "s"}}, []string{"x"}, Filter{Sessions: []string{"t"}}, nil},
		{"session", []Doc{{Row: 1, User: "x", Session: "s"}, {Row: 2, User: "x", Session: "t"}}, []string{"x"}, Filter{Sessions: []string{"t"}}, []int64{2}},
		{"since until", []Doc{{Row: 1, User: "x", TS: 10}, {Row: 2, User: "x", TS: 20}, {Row: 3, User: "x", TS: 30}}, []string{"x"}, Filter{Since: 20, Until: 30}, []int64{2}},
		{"case folded", []Doc{{Row: 1, User: "Alpha"}}, []string{"ALPHA"}, Filter{}, []int64{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := openT(t, t.TempDir(), "id")
			if err := ix.Add(tc.docs); err != nil {
				t.Fatal(err)
			}
			hits, err := ix.Search(tc.terms, [2]float64{}, tc.f, 0)
			if err != nil {
				t.Fatal(err)
			}
			var rows []int64
			for _, h := range hits {
				rows = append(rows, h.Row)
				if !(h.Score > 0) {
					t.Errorf("row %d: score %v", h.Row, h.Score)
				}
			}
			if fmt.Sprint(rows) != fmt.Sprint(tc.want) {
				t.Fatalf("rows %v, want %v", rows, tc.want)
			}
		})
	}
}

// TestOneDocScore checks the formula on one document by hand: N = 1,
// nHit = 1 gives idf = log(0.5/1.5) < 0, floored at 1e-6.
func TestOneDocScore(t *testing.T) {
	ix := openT(t, t.TempDir(), "id")
	if err := ix.Add([]Doc{{Row: 1, User: "a a b", AI: "a"}}); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search([]string{"a"}, [2]float64{5, 1}, Filter{}, 10)
	if err != nil || len(hits) != 1 {
		t.Fatal(hits, err)
	}
	f, d := 11.0, 4.0 // 5+5+1; 4 tokens, avgdl 4
	want := 1e-6 * (f * 2.2) / (f + 1.2*(0.25+0.75*d/d))
	if math.Abs(hits[0].Score-want) > 1e-18 {
		t.Fatalf("score %v, want %v", hits[0].Score, want)
	}
}

func TestBadInput(t *testing.T) {
	ix := openT(t, t.TempDir(), "id")
	if err := ix.Add([]Doc{{Row: 5, User: "x"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want error
	}{
		{"row not above watermark", func() error { return ix.Add([]Doc{{Row: 5}}) }, nil},
		{"rows out of order", func() error { return ix.Add([]Doc{{Row: 9}, {Row: 8}}) }, nil},
		{"phrase term", func() error { _, err := ix.Search([]string{"two words"}, [2]float64{}, Filter{}, 0); return err }, ErrNotOneTerm},
		{"empty term", func() error { _, err := ix.Search([]string{"--"}, [2]float64{}, Filter{}, 0); return err }, ErrNotOneTerm},
		{"NaN weight", func() error { _, err := ix.Search([]string{"x"}, [2]float64{math.NaN(), 1}, Filter{}, 0); return err }, ErrWeights},
		{"negative weight", func() error { _, err := ix.Search([]string{"x"}, [2]float64{-1, 1}, Filter{}, 0); return err }, ErrWeights},
		{"DocFreq phrase", func() error { _, _, err := ix.DocFreq([]string{"a b"}); return err }, ErrNotOneTerm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
	if ix.Len() != 1 || ix.Watermark() != 5 {
		t.Fatalf("refused adds changed the index: Len %d Watermark %d", ix.Len(), ix.Watermark())
	}
}

func TestIdentityAndDamage(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, "one")
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add([]Doc{{Row: 1, User: "x"}, {Row: 2, User: "y"}}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	// A file of someone else's in the folder is left alone.
	other := filepath.Join(dir, "README")
	if err := os.WriteFile(other, []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		damage   func()
		identity string
		reset    bool
	}{
		{"same identity", func() {}, "one", false},
		{"identity changed", func() {}, "two", true},
		{"manifest flipped", func() { flip(t, filepath.Join(dir, manifestName), 12) }, "one", true},
		{"segment header flipped", func() { flip(t, firstSegment(t, dir), 9) }, "one", true},
		{"segment dictionary flipped", func() { flip(t, firstSegment(t, dir), segHeaderSize+3) }, "one", true},
		{"segment truncated", func() { os.Truncate(firstSegment(t, dir), 50) }, "one", true},
		{"segment missing", func() { os.Remove(firstSegment(t, dir)) }, "one", true},
		{"manifest missing", func() { os.Remove(filepath.Join(dir, manifestName)) }, "one", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Rebuild the good state.
			ix, err := Open(dir, "one")
			if err != nil {
				t.Fatal(err)
			}
			if ix.Len() == 0 {
				ix.Add([]Doc{{Row: 1, User: "x"}, {Row: 2, User: "y"}})
				ix.Flush()
			}
			ix.Close()
			tc.damage()
			ix, err = Open(dir, tc.identity)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if got := ix.Reset() != nil; got != tc.reset {
				t.Fatalf("Reset() = %v", ix.Reset())
			}
			wantLen := 2
			if tc.reset || tc.name == "manifest missing" {
				wantLen = 0
			}
			if ix.Len() != wantLen {
				t.Fatalf("Len %d, want %d", ix.Len(), wantLen)
			}
			if wantLen == 0 && ix.Watermark() != 0 {
				t.Fatalf("Watermark %d after a reset", ix.Watermark())
			}
			if _, err := os.Stat(other); err != nil {
				t.Fatalf("a file not the index's was removed: %v", err)
			}
			if err := ix.Add([]Doc{{Row: 3, User: "z"}}); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Permissions.
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(t.TempDir(), "new")
	ix, err = Open(sub, "p")
	if err != nil {
		t.Fatal(err)
	}
	ix.Add([]Doc{{Row: 1, User: "x"}})
	ix.Flush()
	ix.Close()
	_ = fi
	if fi, _ := os.Stat(sub); fi.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(sub)
	for _, e := range entries {
		if fi, _ := e.Info(); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", e.Name(), fi.Mode().Perm())
		}
	}
}

func flip(t *testing.T, path string, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x55
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

func firstSegment(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "seg-*"+segExt))
	if len(m) == 0 {
		t.Fatal("no segment file")
	}
	return m[0]
}

// TestWatermarkDurability: what Open finds is what was sealed; the tail
// is lost on Close without Flush, and the caller adds it again.
func TestWatermarkDurability(t *testing.T) {
	defer func(s int) { SealDocs = s }(SealDocs)
	SealDocs = 4
	dir := t.TempDir()
	ix := openT(t, dir, "id")
	var docs []Doc
	for r := int64(1); r <= 10; r++ {
		docs = append(docs, Doc{Row: r * 10, User: fmt.Sprintf("w%d common", r)})
	}
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix2 := openT(t, dir, "id")
	if ix2.Watermark() != 80 || ix2.Len() != 8 {
		t.Fatalf("reopened without Flush: Watermark %d Len %d, want the 8 sealed rows up to 80", ix2.Watermark(), ix2.Len())
	}
	if err := ix2.Add(docs[8:]); err != nil {
		t.Fatal(err)
	}
	hits, _ := ix2.Search([]string{"common"}, [2]float64{}, Filter{}, 0)
	if len(hits) != 10 {
		t.Fatalf("%d hits, want 10", len(hits))
	}
}

// TestConcurrentSearch runs searches while the writer adds, seals,
// deletes and flushes (go test -race).
func TestConcurrentSearch(t *testing.T) {
	defer func(s int) { SealDocs = s }(SealDocs)
	SealDocs = 300
	ix := openT(t, t.TempDir(), "id")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				terms := []string{fmt.Sprintf("w%d", (i+g)%50), "common"}
				hits, err := ix.Search(terms, [2]float64{5, 1}, Filter{Since: 1}, 20)
				if err != nil {
					t.Error(err)
					return
				}
				for j := 1; j < len(hits); j++ {
					if better(hits[j], hits[j-1]) {
						t.Errorf("hits out of order: %v", hits)
						return
					}
				}
				ix.DocFreq(terms)
				ix.Len()
			}
		}()
	}
	row := int64(0)
	for batch := range 40 {
		docs := make([]Doc, 50)
		for i := range docs {
			row++
			docs[i] = Doc{Row: row, TS: row, Session: fmt.Sprint(row / 20), User: fmt.Sprintf("w%d common", row%50), AI: "x"}
		}
		if err := ix.Add(docs); err != nil {
			t.Fatal(err)
		}
		if batch%7 == 0 {
			if err := ix.Delete([]int64{row - 3, row - 400}); err != nil {
				t.Fatal(err)
			}
		}
		if batch%3 == 0 { // small segments: merges run under the searches
			if err := ix.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if ix.Len() < 1900 || ix.Len() > 2000 {
		t.Fatalf("Len %d", ix.Len())
	}
}

func TestClosed(t *testing.T) {
	ix, err := Open(t.TempDir(), "id")
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if err := ix.Add([]Doc{{Row: 1}}); err == nil {
		t.Error("Add after Close")
	}
	if _, err := ix.Search([]string{"x"}, [2]float64{}, Filter{}, 0); err == nil {
		t.Error("Search after Close")
	}
	if err := ix.Close(); err != nil {
		t.Error(err)
	}
}

// TestSealFailure: a seal that cannot write its file fails Add, keeps the
// documents searchable, and is tried again by the next Add.
func TestSealFailure(t *testing.T) {
	defer func(s int) { SealDocs = s }(SealDocs)
	SealDocs = 3
	dir := t.TempDir()
	ix := openT(t, dir, "id")
	// A folder where the first segment's temporary file goes.
	block := filepath.Join(dir, segName(0)+".tmp")
	if err := os.Mkdir(block, 0o700); err != nil {
		t.Fatal(err)
	}
	docs := []Doc{{Row: 1, User: "a"}, {Row: 2, User: "a"}, {Row: 3, User: "a"}, {Row: 4, User: "a"}, {Row: 5, User: "a"}}
	if err := ix.Add(docs); err == nil {
		t.Fatal("Add did not report the failed seal")
	}
	if ix.Watermark() != 3 || ix.Len() != 3 {
		t.Fatalf("after the failed seal: Watermark %d Len %d, want 3 3", ix.Watermark(), ix.Len())
	}
	if hits, _ := ix.Search([]string{"a"}, [2]float64{}, Filter{}, 0); len(hits) != 3 {
		t.Fatalf("%d hits, want 3", len(hits))
	}
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(docs[3:]); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix = openT(t, dir, "id")
	if hits, _ := ix.Search([]string{"a"}, [2]float64{}, Filter{}, 0); len(hits) != 5 || ix.Watermark() != 5 {
		t.Fatalf("reopened: %d hits, Watermark %d", len(hits), ix.Watermark())
	}
}
