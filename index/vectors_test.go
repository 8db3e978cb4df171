package index

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestEmbedText(t *testing.T) {
	tests := []struct{ user, ai, want string }{
		{"q", "a", "q\n\na"},
		{"  q \n", "\ta ", "q\n\na"},
		{"", "a", "a"},
		{"q", "  ", "q"},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := EmbedText(tt.user, tt.ai); got != tt.want {
			t.Errorf("EmbedText(%q, %q) = %q, want %q", tt.user, tt.ai, got, tt.want)
		}
	}
}

func pending(t *testing.T, db *DB, identity string, limit int) []EmbedItem {
	t.Helper()
	items, err := db.PendingEmbeddings(ctx, identity, limit)
	if err != nil {
		t.Fatalf("PendingEmbeddings: %v", err)
	}
	return items
}

func pendingRows(t *testing.T, db *DB, identity string) []int64 {
	t.Helper()
	var out []int64
	for _, it := range pending(t, db, identity, 0) {
		out = append(out, it.Row)
	}
	return out
}

func countPending(t *testing.T, db *DB, identity string) int64 {
	t.Helper()
	n, err := db.CountPending(ctx, identity)
	if err != nil {
		t.Fatalf("CountPending: %v", err)
	}
	return n
}

func vec(xs ...float32) []float32 { return xs }

func store(t *testing.T, db *DB, identity string, rows []int64, dim int) {
	t.Helper()
	vecs := make([][]float32, len(rows))
	for i, r := range rows {
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(r) + float32(j)/10
		}
	}
	if err := db.StoreVectors(ctx, identity, rows, vecs); err != nil {
		t.Fatalf("StoreVectors: %v", err)
	}
}

type vecRow struct {
	Row     int64
	Session string
	TS      int64
	Vec     []float32
}

func allVectors(t *testing.T, db *DB, identity string) []vecRow {
	t.Helper()
	var out []vecRow
	if err := db.EachVector(ctx, identity, func(row int64, session string, ts int64, q Quantized) error {
		out = append(out, vecRow{row, session, ts, q.Float32s()})
		return nil
	}); err != nil {
		t.Fatalf("EachVector: %v", err)
	}
	return out
}

func TestVectors(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	commit(t, db, f.batch(
		exchangeAt("s1", hour(1), " first question ", "first answer"),
		`{"type":"context_reset","session_id":"s1"}`,
		exchangeAt("s2", hour(2), "second", ""),
		exchangeAt("", hour(3), "", "third answer"),
	))
	row := rowsOf(t, db)
	r1, r2, r3 := row[" first question "], row["second"], row[""]

	// Pending: exchanges only, oldest first, with their text.
	want := []EmbedItem{{r1, "first question\n\nfirst answer"}, {r2, "second"}, {r3, "third answer"}}
	if got := pending(t, db, "m1", 0); !reflect.DeepEqual(got, want) {
		t.Errorf("pending = %+v, want %+v", got, want)
	}
	if got := pending(t, db, "m1", 2); !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("pending limit 2 = %+v", got)
	}
	if n := countPending(t, db, "m1"); n != 3 {
		t.Errorf("CountPending = %d, want 3", n)
	}

	// Store: a reset and an unknown row are skipped.
	var reset int64
	if err := db.r.QueryRow(`SELECT id FROM events WHERE type = 'context_reset'`).Scan(&reset); err != nil {
		t.Fatal(err)
	}
	if err := db.StoreVectors(ctx, "m1", []int64{r1, reset, 9999}, [][]float32{vec(1, 2), vec(3, 4), vec(5, 6)}); err != nil {
		t.Fatal(err)
	}
	if got := pendingRows(t, db, "m1"); !reflect.DeepEqual(got, []int64{r2, r3}) {
		t.Errorf("pending after store = %v", got)
	}
	if got := pendingRows(t, db, "m2"); !reflect.DeepEqual(got, []int64{r1, r2, r3}) {
		t.Errorf("pending for another identity = %v", got)
	}
	if n := countPending(t, db, "m1"); n != 2 {
		t.Errorf("CountPending = %d, want 2", n)
	}

	// Errors: nothing stored.
	for _, c := range []struct {
		name string
		id   string
		rows []int64
		vecs [][]float32
	}{
		{"length mismatch", "m1", []int64{r2}, nil},
		{"ragged", "m1", []int64{r2, r3}, [][]float32{vec(1, 2), vec(1)}},
		{"empty vector", "m1", []int64{r2}, [][]float32{{}}},
		{"other dimension than stored", "m1", []int64{r2}, [][]float32{vec(1, 2, 3)}},
		{"no identity", "", []int64{r2}, [][]float32{vec(1, 2)}},
	} {
		if err := db.StoreVectors(ctx, c.id, c.rows, c.vecs); err == nil {
			t.Errorf("%s: StoreVectors accepted", c.name)
		}
	}
	if n := countPending(t, db, "m1"); n != 2 {
		t.Errorf("CountPending after refused stores = %d, want 2", n)
	}

	// Replace, then read back in row order with session and time.
	if err := db.StoreVectors(ctx, "m1", []int64{r3, r1, r2}, [][]float32{vec(-1, 0.5), vec(7, 8), vec(float32(math.Inf(1)), -0)}); err != nil {
		t.Fatal(err)
	}
	got := allVectors(t, db, "m1")
	// Stored quantised, each of an exchange's vectors (two here: "m1"
	// has the default recipe, the prompt's and the answer's) normalised
	// on its own; one not finite is stored as zero (similar to nothing).
	wantV := []vecRow{
		{r1, "s1", hour(1).UnixNano(), vec(1, 1)},
		{r2, "s2", hour(2).UnixNano(), vec(0, 0)},
		{r3, "a", hour(3).UnixNano(), vec(-1, 1)}, // session from the file name
	}
	if !reflect.DeepEqual(got, wantV) {
		t.Errorf("EachVector = %+v, want %+v", got, wantV)
	}
	if n := countPending(t, db, "m1"); n != 0 || len(pending(t, db, "m1", 10)) != 0 {
		t.Errorf("pending after all stored: %d", n)
	}

	// The callback's error stops the walk and comes back as is.
	stop := errors.New("stop")
	calls := 0
	if err := db.EachVector(ctx, "m1", func(int64, string, int64, Quantized) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("EachVector with failing fn: err %v after %d calls", err, calls)
	}

	// Status counts per identity; pruning keeps one.
	store(t, db, "m2", []int64{r1, r2}, 4)
	if st := mustStatus(t, db); !reflect.DeepEqual(st.Vectors, map[string]int64{"m1": 3, "m2": 2}) {
		t.Errorf("Status.Vectors = %v", st.Vectors)
	}
	// Listed by identity with their bytes (per vector a float32 scale
	// and int8 components: 2×(4+1) a row for m1, 2×(4+2) for m2 and
	// m3); one dropped
	// by name, the others kept (issue 33 item 3).
	store(t, db, "m3", []int64{r1}, 4)
	if sets, err := db.VectorSets(ctx); err != nil || !reflect.DeepEqual(sets, []VectorSet{{"m1", 3, 30}, {"m2", 2, 24}, {"m3", 1, 12}}) {
		t.Errorf("VectorSets = %+v, %v", sets, err)
	}
	if n, err := db.DropVectors(ctx, "m3"); err != nil || n != 1 {
		t.Errorf("DropVectors(m3) = %d, %v, want 1", n, err)
	}
	if st := mustStatus(t, db); !reflect.DeepEqual(st.Vectors, map[string]int64{"m1": 3, "m2": 2}) {
		t.Errorf("Status.Vectors after dropping m3 = %v", st.Vectors)
	}
	n, err := db.PruneVectors(ctx, "m2")
	if err != nil || n != 3 {
		t.Errorf("PruneVectors = %d, %v, want 3", n, err)
	}
	if st := mustStatus(t, db); !reflect.DeepEqual(st.Vectors, map[string]int64{"m2": 2}) {
		t.Errorf("Status.Vectors after prune = %v", st.Vectors)
	}
	if got := pendingRows(t, db, "m1"); !reflect.DeepEqual(got, []int64{r1, r2, r3}) {
		t.Errorf("m1 pending after prune = %v, want all", got)
	}
	if n, err := db.PruneVectors(ctx, "m2"); err != nil || n != 0 {
		t.Errorf("second PruneVectors = %d, %v", n, err)
	}

	// Read-only handles read but do not write.
	ro, err := Open(db.dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got := allVectors(t, ro, "m2"); len(got) != 2 {
		t.Errorf("read-only EachVector: %d vectors", len(got))
	}
	if n := countPending(t, ro, "m2"); n != 1 {
		t.Errorf("read-only CountPending = %d", n)
	}
	if err := ro.StoreVectors(ctx, "m2", []int64{r3}, [][]float32{vec(1, 2, 3)}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("read-only StoreVectors: %v", err)
	}
	if _, err := ro.PruneVectors(ctx, "x"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("read-only PruneVectors: %v", err)
	}
}

// PendingEmbeddings starts where the last call found the first pending
// row; deletions must not make it skip rows that are pending again.
func TestPendingAfterDeletes(t *testing.T) {
	dir := testDir(t)
	db := openTest(t, dir)
	f := newFeeder(t, db, "a.jsonl")
	var lines []string
	for i := 0; i < 10; i++ {
		lines = append(lines, exchangeAt("old", hour(1), "old "+string(rune('a'+i)), "x"))
	}
	commit(t, db, f.batch(lines...))
	embedAll := func(db *DB) int {
		t.Helper()
		n := 0
		for {
			items := pending(t, db, "m", 3)
			if len(items) == 0 {
				return n
			}
			rows := make([]int64, len(items))
			for i, it := range items {
				rows[i] = it.Row
			}
			store(t, db, "m", rows, 2)
			n += len(rows)
		}
	}
	if n := embedAll(db); n != 10 {
		t.Fatalf("embedded %d, want 10", n)
	}

	// A read-only handle, as another process, remembers its own start.
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got := pending(t, ro, "m", 0); len(got) != 0 {
		t.Fatalf("read-only pending = %+v", got)
	}

	// Deleting the session frees the top row ids; new exchanges reuse
	// them and must be pending, in both handles.
	if n, err := db.DeleteSession(ctx, "old"); err != nil || n != 10 {
		t.Fatalf("DeleteSession = %d, %v", n, err)
	}
	commit(t, db, f.batch(exchangeAt("new", hour(2), "new 1", "y"), exchangeAt("new", hour(2), "new 2", "y")))
	for _, h := range []*DB{db, ro} {
		if got := pending(t, h, "m", 0); len(got) != 2 {
			t.Errorf("pending after delete and reuse = %+v, want the 2 new exchanges", got)
		}
		if n := countPending(t, h, "m"); n != 2 {
			t.Errorf("CountPending = %d, want 2", n)
		}
	}
	if n := embedAll(db); n != 2 {
		t.Errorf("embedded %d, want 2", n)
	}
	// Pruning another identity's vectors leaves m's done.
	store(t, db, "other", []int64{rowsOf(t, db)["new 1"]}, 2)
	if _, err := db.PruneVectors(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if got := pendingRows(t, db, "other"); len(got) != 2 {
		t.Errorf("other pending after prune = %v, want 2", got)
	}
	if got := pending(t, db, "m", 0); len(got) != 0 {
		t.Errorf("m pending after pruning others = %+v", got)
	}
}
