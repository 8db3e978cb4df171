package index

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkHeads fails t unless vector_signs holds, for each row of vectors
// and nothing else, the heads derived from its vector.
func checkHeads(t *testing.T, db *DB, when string) {
	t.Helper()
	rows, err := db.w.Query(`SELECT v.event, v.embedder, e.identity, v.vec, s.heads FROM vectors v
		JOIN embedders e ON e.id = v.embedder LEFT JOIN vector_signs s ON s.event = v.event AND s.embedder = v.embedder`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var event, key int64
		var identity string
		var vec, heads []byte
		if err := rows.Scan(&event, &key, &identity, &vec, &heads); err != nil {
			t.Fatal(err)
		}
		want, err := appendHeads(nil, vec, VectorsPerIdentity(identity))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(heads, want) {
			t.Errorf("%s: row %d of %s: heads %x, want %x", when, event, identity, heads, want)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var heads int
	if err := db.w.QueryRow(`SELECT count(*) FROM vector_signs`).Scan(&heads); err != nil {
		t.Fatal(err)
	}
	if heads != n {
		t.Errorf("%s: %d heads for %d vectors", when, heads, n)
	}
}

// The vectors' heads (schema 13) follow the vectors: derived from those a
// version 12 index stored, written with new ones (and replaced with
// them), gone with a dropped embedder's and a forgotten session's; what
// EachVectorHeadIn reads is each vector's scale and SignCode of its codes,
// and VectorCodes reads the codes of the rows asked, skipping the missing.
func TestVectorHeads(t *testing.T) {
	dir := testDir(t)
	r := rand.New(rand.NewPCG(5, 6))
	randVec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	const two, one = "e:512#user|ai", "h:256#user"
	var rows []int64
	withMigrations(12, func() {
		db := openTest(t, dir)
		f := newFeeder(t, db, "a.jsonl")
		commit(t, db, f.batch(
			exchangeAt("s1", hour(1), "first", "one"),
			exchangeAt("s1", hour(2), "second", "two"),
			exchangeAt("s2", hour(3), "third", ""),
		))
		for _, row := range rowsOf(t, db) {
			rows = append(rows, row)
		}
		slices.Sort(rows)
		for _, id := range []string{two, one} {
			if _, err := db.w.Exec(`INSERT INTO embedders (identity) VALUES (?)`, id); err != nil {
				t.Fatal(err)
			}
		}
		for i, row := range rows {
			a := randVec(2 * 64)
			if i == 2 {
				clear(a[64:]) // no answer: its vector is zero
			}
			if _, err := db.w.Exec(`INSERT INTO vectors (event, embedder, vec) VALUES (?, (SELECT id FROM embedders WHERE identity = ?), ?)`, row, two, encodeQuantized(nil, a, 2)); err != nil {
				t.Fatal(err)
			}
			if i < 2 {
				if _, err := db.w.Exec(`INSERT INTO vectors (event, embedder, vec) VALUES (?, (SELECT id FROM embedders WHERE identity = ?), ?)`, row, one, encodeQuantized(nil, randVec(32), 1)); err != nil {
					t.Fatal(err)
				}
			}
		}
		db.Close()
	})

	db := openTest(t, dir)
	checkHeads(t, db, "migrated")
	if err := db.StoreVectors(ctx, one, rows[2:], [][]float32{randVec(32)}); err != nil {
		t.Fatal(err)
	}
	if err := db.StoreVectors(ctx, two, rows[:1], [][]float32{randVec(128)}); err != nil { // replaces
		t.Fatal(err)
	}
	checkHeads(t, db, "stored")

	// What the readers give.
	for _, id := range []string{two, one} {
		per := VectorsPerIdentity(id)
		codes := map[int64]Quantized{}
		if err := db.EachVector(ctx, id, func(row int64, _ string, _ int64, q Quantized) error {
			codes[row] = Quantized{Dim: q.Dim, Codes: slices.Clone(q.Codes), Scales: slices.Clone(q.Scales)}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		dim, err := db.VectorDim(ctx, id)
		if err != nil || dim != codes[rows[0]].Dim {
			t.Errorf("%s: VectorDim %d, %v; want %d", id, dim, err, codes[rows[0]].Dim)
		}
		if n, err := db.CountVectors(ctx, id); err != nil || int(n) != len(codes) {
			t.Errorf("%s: CountVectors %d, %v; want %d", id, n, err, len(codes))
		}
		seen := 0
		if err := db.EachVectorHeadIn(ctx, id, rows[1], rows[2]+1, func(row int64, session string, ts int64, h Heads) error {
			seen++
			q := codes[row]
			if len(h.Scales) != per || h.Words != SignWords(q.Dim) || session == "" || ts == 0 {
				t.Fatalf("%s row %d: %d heads of %d words (%q, %d)", id, row, len(h.Scales), h.Words, session, ts)
			}
			for k := range per {
				want := make([]uint64, h.Words)
				SignCode(want, q.Codes[k*q.Dim:(k+1)*q.Dim])
				if h.Scales[k] != q.Scales[k] || !slices.Equal(h.Signs[k*h.Words:(k+1)*h.Words], want) {
					t.Errorf("%s row %d vector %d: heads differ from the codes'", id, row, k)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if seen != 2 {
			t.Errorf("%s: %d heads in rows %d..%d, want 2", id, seen, rows[1], rows[2])
		}
		var got []int64
		if err := db.VectorCodes(ctx, id, []int64{rows[0], rows[2], rows[2] + 1000}, func(row int64, q Quantized) error {
			got = append(got, row)
			if !slices.Equal(q.Codes, codes[row].Codes) || !slices.Equal(q.Scales, codes[row].Scales) {
				t.Errorf("%s row %d: VectorCodes differ from EachVector's", id, row)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if want := []int64{rows[0], rows[2]}; !slices.Equal(got, want) {
			t.Errorf("%s: VectorCodes gave rows %v, want %v", id, got, want)
		}
	}

	if _, err := db.DropVectors(ctx, two); err != nil {
		t.Fatal(err)
	}
	checkHeads(t, db, "dropped")
	if _, err := db.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	checkHeads(t, db, "forgotten")
	var left int
	db.w.QueryRow(`SELECT count(*) FROM vector_signs`).Scan(&left)
	if left != 1 {
		t.Errorf("%d heads left, want 1 (s2's of %s)", left, one)
	}
}
