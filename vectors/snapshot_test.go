package vectors

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/indextest"
)

// TestSnapshot: a load writes a snapshot; the next load reads it, plus
// the vectors stored since from the index; a deletion, a corrupt file or
// a file of another identity make the load use the index alone; every
// load answers queries exactly as a load from the index does.
func TestSnapshot(t *testing.T) {
	oldMin, oldRewrite := snapshotMin, snapshotRewrite
	snapshotMin, snapshotRewrite = 50, 20
	t.Cleanup(func() { snapshotMin, snapshotRewrite = oldMin, oldRewrite })

	f := indextest.New(t)
	e := indextest.Hash(t, 64)
	id := SpaceIdentity(e)
	add := func(from, to int) {
		var lines []string
		for i := from; i < to; i++ {
			lines = append(lines, indextest.Exchange(fmt.Sprintf("x%d", i), fmt.Sprintf("s%d", i%5), indextest.At(i),
				fmt.Sprintf("question %d about topic %d and word%d", i, i%17, i%31), "an answer"))
		}
		f.Commit(lines...)
		drain(t, f.DB, e)
	}
	// fromIndex is the reference: the space loaded from SQLite alone.
	fromIndex := func() *Space {
		v := NewSpace(id)
		if _, err := loadRows(ctx, f.DB, v, id, 0); err != nil {
			t.Fatal(err)
		}
		return v
	}
	same := func(what string, got *Space) {
		t.Helper()
		want := fromIndex()
		if got.Len() != want.Len() {
			t.Fatalf("%s: %d vectors, the index has %d", what, got.Len(), want.Len())
		}
		qs, err := e.Embed(ctx, []string{"question about topic 3", "word7 answer", "topic 11"})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			for _, flt := range []Filter{{}, {Sessions: []string{"s2"}}} {
				g, err1 := got.Query(ctx, q, 10, flt)
				w, err2 := want.Query(ctx, q, 10, flt)
				if err1 != nil || err2 != nil || !slices.Equal(g, w) {
					t.Fatalf("%s: %v (%v), from the index %v (%v)", what, g, err1, w, err2)
				}
			}
		}
	}
	path := SnapshotPath(f.DB, id)
	waitFile := func(since time.Time) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			// (File times are coarse: a second of margin.)
			if st, err := os.Stat(path); err == nil && !st.ModTime().Before(since.Add(-time.Second)) {
				if st.Mode().Perm() != 0o600 {
					t.Fatalf("snapshot mode %v, want 0600", st.Mode().Perm())
				}
				return
			}
		}
		t.Fatalf("no snapshot written at %s", path)
	}

	// waitValid waits for the background writer to leave a valid
	// snapshot (and return).
	waitValid := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, _, err := loadSnapshot(ctx, f.DB, id); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}

	add(0, 120)
	start := time.Now()
	v, err := LoadLogged(ctx, f.DB, id, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		t.Fatal(err)
	}
	same("first load", v)
	waitFile(start)
	time.Sleep(20 * time.Millisecond) // the writer has renamed; let it return

	v, upTo, err := loadSnapshot(ctx, f.DB, id)
	if err != nil {
		t.Fatalf("snapshot not usable: %v", err)
	}
	if v.Len() != 120 || upTo == 0 {
		t.Fatalf("snapshot of %d vectors up to row %d", v.Len(), upTo)
	}
	if v, err = Load(ctx, f.DB, id); err != nil {
		t.Fatal(err)
	}
	same("from the snapshot", v)

	// Vectors stored since: read from the index after the snapshot.
	add(120, 130)
	if v, err = Load(ctx, f.DB, id); err != nil {
		t.Fatal(err)
	}
	same("snapshot plus newer vectors", v)

	// Forget removes it (it holds the sessions' ids and vectors).
	if err := RemoveSnapshots(f.DB); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("snapshot still there after RemoveSnapshots: %v", err)
	}
	if v, err = Load(ctx, f.DB, id); err != nil {
		t.Fatal(err)
	}
	same("after the snapshot was removed", v)
	waitValid("no snapshot written again")

	// A deleted session makes the snapshot stale.
	if _, err := f.DB.DeleteSession(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadSnapshot(ctx, f.DB, id); err == nil {
		t.Fatal("a snapshot taken before a deletion was used")
	}
	if v, err = Load(ctx, f.DB, id); err != nil {
		t.Fatal(err)
	}
	same("after a deletion", v)
	waitValid("no snapshot after the deletion")

	// A flipped byte in the body: the checksum refuses it.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadSnapshot(ctx, f.DB, id); err != nil {
		t.Fatalf("fresh snapshot not usable: %v", err)
	}
	data[len(data)-3] ^= 0x40
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadSnapshot(ctx, f.DB, id); err == nil {
		t.Fatal("a corrupt snapshot was used")
	}
	if v, err = Load(ctx, f.DB, id); err != nil {
		t.Fatal(err)
	}
	same("after corruption", v)
	waitValid("the corrupt snapshot was not replaced")

	// Read-only processes read snapshots but never write them.
	ro, err := index.Open(filepath.Dir(f.DB.Path()), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	os.Remove(path)
	// load counts the snapshot writer it starts: once the count is back
	// to zero, any writer a read-only load wrongly started has finished.
	var writers sync.WaitGroup
	if _, err := load(ctx, ro, id, nil, &writers); err != nil {
		t.Fatal(err)
	}
	writers.Wait()
	if _, err := os.Stat(path); err == nil {
		t.Error("a read-only load wrote a snapshot")
	}
}

// RemoveSnapshotTemps clears a killed process's temporary snapshot file.
func TestRemoveSnapshotTemps(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, ".vectors-123.tmp")
	if err := os.WriteFile(name, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := RemoveSnapshotTemps(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", name, err)
	}
}
