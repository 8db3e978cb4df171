package index

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestVectorsPerIdentity(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want int
	}{
		{"builtin:uselite:512#user|ai", 2},
		{"builtin:hash-v2:256#user", 1},
		{"ollama:nomic#user+ai", 1},
		{"m1", 2}, // no recipe: the default one
		{"a#b#user|ai", 2},
	} {
		if got := VectorsPerIdentity(tt.id); got != tt.want {
			t.Errorf("VectorsPerIdentity(%q) = %d, want %d", tt.id, got, tt.want)
		}
	}
}

// floatBlob is a vector as schema versions before 9 stored it.
func floatBlob(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// A version 9 index's float32 vectors are converted by the migration to
// version 10, not dropped: each to the int8 codes and scale that storing it
// now gives (so the space loaded from them is the one built from the
// float32 vectors before), under its embedder's integer key; pending
// counts, the listing by embedder, dropping one embedder's vectors and the
// cascade when an event is deleted work on the converted rows.
func TestMigrateVectorsToInt8(t *testing.T) {
	dir := testDir(t)
	r := rand.New(rand.NewPCG(1, 2))
	randVec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	const two, one = "e:512#user|ai", "h:256#user"
	orig := map[string]map[int64][]float32{two: {}, one: {}}
	var rows []int64
	withMigrations(9, func() {
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
		for i, row := range rows {
			a := randVec(2 * 64)
			if i == 2 {
				clear(a[64:]) // no answer: its vector is zero
			}
			orig[two][row] = a
			if i < 2 {
				orig[one][row] = randVec(32)
			}
		}
		for id, m := range orig {
			for row, v := range m {
				if _, err := db.w.Exec(`INSERT INTO vectors (event, embedder, vec) VALUES (?, ?, ?)`, row, id, floatBlob(v)); err != nil {
					t.Fatal(err)
				}
			}
		}
		db.Close()
	})

	db := openTest(t, dir)
	if v, _ := userVersion(ctx, db.w); v != SchemaVersion() {
		t.Fatalf("user_version %d after migration", v)
	}
	var old int
	db.w.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'vectors_float32'`).Scan(&old)
	if old != 0 {
		t.Errorf("the float32 table is still there")
	}
	for id, m := range orig {
		per := VectorsPerIdentity(id)
		n := 0
		if err := db.EachVector(ctx, id, func(row int64, session string, ts int64, q Quantized) error {
			n++
			v := m[row]
			dim := len(v) / per
			if q.Dim != dim || len(q.Scales) != per {
				t.Fatalf("%s row %d: %d vectors of %d, want %d of %d", id, row, len(q.Scales), q.Dim, per, dim)
			}
			for k := range per {
				want := make([]int8, dim)
				scale := QuantizeUnit(want, v[k*dim:(k+1)*dim])
				if q.Scales[k] != scale || !slices.Equal(q.Codes[k*dim:(k+1)*dim], want) {
					t.Errorf("%s row %d vector %d: scale %g codes %v, want %g %v", id, row, k, q.Scales[k], q.Codes[k*dim : (k+1)*dim][:4], scale, want[:4])
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != len(m) {
			t.Errorf("%s: %d vectors after migration, want %d", id, n, len(m))
		}
	}
	if got := countPending(t, db, one); got != 1 {
		t.Errorf("pending for %s = %d, want 1", one, got)
	}
	if got := pendingRows(t, db, one); !reflect.DeepEqual(got, rows[2:]) {
		t.Errorf("pending rows for %s = %v, want %v", one, got, rows[2:])
	}
	sets, err := db.VectorSets(ctx)
	if want := []VectorSet{{two, 3, 3 * 2 * (4 + 64)}, {one, 2, 2 * (4 + 32)}}; err != nil || !reflect.DeepEqual(sets, want) {
		t.Errorf("VectorSets = %+v, %v; want %+v", sets, err, want)
	}
	// New vectors of a converted embedder go under the same key.
	if err := db.StoreVectors(ctx, one, rows[2:], [][]float32{randVec(32)}); err != nil {
		t.Fatal(err)
	}
	var embedders int
	db.w.QueryRow(`SELECT count(*) FROM embedders`).Scan(&embedders)
	if embedders != 2 {
		t.Errorf("%d embedders, want 2", embedders)
	}
	if n, err := db.DropVectors(ctx, two); err != nil || n != 3 {
		t.Errorf("DropVectors = %d, %v", n, err)
	}
	if st := mustStatus(t, db); !reflect.DeepEqual(st.Vectors, map[string]int64{one: 3}) {
		t.Errorf("Status.Vectors = %v", st.Vectors)
	}
	// Forget: the cascade removes the session's vectors.
	if _, err := db.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if st := mustStatus(t, db); !reflect.DeepEqual(st.Vectors, map[string]int64{one: 1}) {
		t.Errorf("Status.Vectors after forgetting s1 = %v", st.Vectors)
	}
}

// QuantizeUnit is what the space computes: codes at ±127 for the largest
// magnitude, the scale of the unit vector; zero and non-finite vectors
// give scale 0.
func TestQuantizeUnit(t *testing.T) {
	dst := make([]int8, 2)
	if s := QuantizeUnit(dst, []float32{3, -4}); dst[0] != 95 || dst[1] != -127 || math.Abs(float64(s)-4.0/5/127) > 1e-9 {
		t.Errorf("QuantizeUnit(3, -4) = %v, %g", dst, s)
	}
	for _, v := range [][]float32{{0, 0}, {float32(math.Inf(1)), 1}, {float32(math.NaN()), 1}} {
		if s := QuantizeUnit(dst, v); s != 0 || dst[0] != 0 || dst[1] != 0 {
			t.Errorf("QuantizeUnit(%v) = %v, %g", v, dst, s)
		}
	}
}
