package index

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/praxis-os/continuity/watcher"
)

// TestMatchEdit: how a rewritten file's lines are paired with the stored
// ones, and when it is the same log.
func TestMatchEdit(t *testing.T) {
	// old and new are strings of line keys, one letter a line; an upper
	// case letter is a line with an id (its letter), whose content is the
	// digit after it when there is one ("A1": id A, content 1).
	tests := []struct {
		name, old, new              string
		same                        bool
		kept, changed, removed, add int
		keptTo                      int // index of the first new line not kept, -1
	}{
		{"unchanged", "abcdef", "abcdef", true, 6, 0, 0, 0, -1},
		{"one line changed", "abcdefghijkl", "abcXefghijkl", true, 11, 1, 0, 0, 3},
		{"one line removed", "abcdef", "abdef", true, 5, 0, 1, 0, -1},
		{"last lines removed", "abcdef", "abc", true, 3, 0, 3, 0, -1},
		{"lines inserted", "abcdef", "abcXYdef", true, 6, 0, 0, 2, 3},
		{"appended", "abc", "abcdefghij", true, 3, 0, 0, 7, 3},
		{"truncated", "abcdef", "", false, 0, 0, 6, 0, -1},
		{"another log", "abcdef", "uvwxyz", false, 0, 6, 0, 0, 0},
		{"half kept", "abcd", "abXY", true, 2, 2, 0, 0, 2},
		{"a third kept", "abcdef", "abUVWX", false, 2, 4, 0, 0, 2},
		{"pruned to a third", "abcdef", "ab", true, 2, 0, 4, 0, -1},
		{"id edited", "A1B1C1", "A1B2C1", true, 2, 1, 0, 0, 1},
		{"ids reordered", "A1B1C1", "C1A1B1", true, 3, 0, 0, 0, -1},
		{"ids all edited", "A1B1C1", "A2B2C2", false, 0, 3, 0, 0, 0}, // no line unchanged
		{"ids all edited but one", "A1B1C1D1", "A2B2C2D1", true, 1, 3, 0, 0, 0},
		{"nothing stored", "", "abc", false, 0, 0, 0, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, nw := editFixture(tt.old, tt.new)
			pair, s := matchEdit(old, nw)
			if s.Same != tt.same || s.Kept != tt.kept || s.Changed != tt.changed || s.Removed != tt.removed || s.Added != tt.add {
				t.Errorf("summary %+v, want same %v kept %d changed %d removed %d added %d", s, tt.same, tt.kept, tt.changed, tt.removed, tt.add)
			}
			wantTo := int64(-1)
			if tt.keptTo >= 0 {
				wantTo = nw[tt.keptTo].start
			}
			if s.KeptTo != wantTo {
				t.Errorf("KeptTo %d, want %d", s.KeptTo, wantTo)
			}
			checkPairs(t, old, nw, pair, s.Kept)
		})
	}
}

// editFixture builds stored and new lines from key strings (see
// TestMatchEdit), each line 10 bytes.
func editFixture(old, nw string) ([]storedLine, []editLine) {
	parse := func(s string) (keys []int64, ids []string) {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= 'A' && c <= 'Z' {
				content := byte('0')
				if i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
					content = s[i+1]
					i++
				}
				keys = append(keys, int64(c)<<8|int64(content))
				ids = append(ids, string(c))
				continue
			}
			keys = append(keys, int64(c))
			ids = append(ids, "")
		}
		return keys, ids
	}
	// Lines of other keys share no text.
	text := func(k int64) sketch {
		sum := sha256.Sum256([]byte(fmt.Sprint(k)))
		return sketchOf([]byte(hex.EncodeToString(sum[:])))
	}
	var o []storedLine
	ks, ids := parse(old)
	for i, k := range ks {
		o = append(o, storedLine{event: true, row: int64(i + 1), key: k, known: true, id: ids[i], sk: text(k)})
	}
	var n []editLine
	ks, ids = parse(nw)
	for i, k := range ks {
		n = append(n, editLine{start: int64(10 * i), end: int64(10*i + 10), number: int64(i + 1), key: k, id: ids[i], sk: text(k)})
	}
	return o, n
}

// checkPairs checks that kept pairs join equal lines, each line at most
// once, and that there are kept of them.
func checkPairs(t *testing.T, old []storedLine, nw []editLine, pair []int, kept int) {
	t.Helper()
	seen := map[int]bool{}
	n := 0
	for i, j := range pair {
		if j < 0 {
			continue
		}
		n++
		if j >= len(nw) || seen[j] || nw[j].key != old[i].key {
			t.Fatalf("old line %d kept as new line %d: %+v", i, j, pair)
		}
		seen[j] = true
	}
	if n != kept {
		t.Fatalf("%d pairs, %d kept", n, kept)
	}
}

// FuzzMatchEdit: whatever the lines, every old line is kept, changed or
// removed, every new line kept, changed or added, and kept lines are equal.
func FuzzMatchEdit(f *testing.F) {
	f.Add("abcdef", "abXdef")
	f.Add("A1B1C1", "C1A2bb")
	f.Add("aaaa", "aa")
	f.Fuzz(func(t *testing.T, old, nw string) {
		if len(old) > 200 || len(nw) > 200 {
			return
		}
		o, n := editFixture(old, nw)
		pair, s := matchEdit(o, n)
		if s.Kept+s.Changed+s.Removed != len(o) || s.Kept+s.Changed+s.Added != len(n) {
			t.Fatalf("%q -> %q: %+v does not add up to %d and %d lines", old, nw, s, len(o), len(n))
		}
		if s.Matched > len(o) || s.Matched > len(n) || s.Matched < s.Kept {
			t.Fatalf("%q -> %q: matched %d", old, nw, s.Matched)
		}
		checkPairs(t, o, n, pair, s.Kept)
		if old == nw && len(o) > 0 && (!s.Same || s.Kept != len(o)) {
			t.Fatalf("unchanged %q: %+v", old, s)
		}
	})
}

// TestApplyEdit: an edit is applied in one transaction (a failure in the
// middle leaves everything as it was), keeps the unchanged events (same
// rows), deletes the others with their links, and recounts the sessions.
func TestApplyEdit(t *testing.T) {
	db := openTest(t, testDir(t))
	f := newFeeder(t, db, "a.jsonl")
	lines := []string{exchange("s1", "", "one"), exchange("s1", "", "two"), `{"type":"session_resume","previous_session":"s0","new_session":"s1"}`,
		exchange("s1", "", "three"), "{bad"}
	commit(t, db, f.batch(lines...))
	before := rawTexts(t, db)

	edited := []string{lines[0], exchange("s1", "", "TWO"), lines[3], "{bad"} // line 2 changed, the resume removed
	plan := func() *editPlan {
		nf := &feeder{gen: watcher.Generation{Path: "a.jsonl", Dev: 1, Ino: 43}}
		b := nf.batch(edited...)
		p, err := db.PlanEdit(ctx, f.gen, "a.jsonl", func(yield func([]watcher.Line) error) error { return yield(b.Lines) })
		if err != nil {
			t.Fatal(err)
		}
		return p.(*editPlan)
	}
	p := plan()
	if s := p.Summary(); !s.Same || s.Kept != 3 || s.Changed != 1 || s.Removed != 1 || s.KeptTo != int64(len(lines[0])+1) {
		t.Fatalf("summary %+v", s)
	}
	w, err := db.writer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, `CREATE TEMP TRIGGER boom BEFORE DELETE ON session_links BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatal(err)
	}
	g := watcher.Generation{Path: "a.jsonl", Dev: 1, Ino: 43, Offset: p.sum.KeptTo, Line: 1}
	if _, _, err := p.Apply(ctx, g); err == nil {
		t.Fatal("Apply with a failing delete succeeded")
	}
	if _, err := w.ExecContext(ctx, `DROP TRIGGER temp.boom`); err != nil {
		t.Fatal(err)
	}
	if got := rawTexts(t, db); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("a failed edit changed the events: %q", got)
	}
	if links, _ := db.AllLinks(ctx); len(links) != 1 {
		t.Fatalf("a failed edit changed the links: %+v", links)
	}

	p = plan()
	id, removed, err := p.Apply(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 {
		t.Errorf("removed rows %v, want the changed line's and the resume's", removed)
	}
	if links, _ := db.AllLinks(ctx); len(links) != 0 {
		t.Errorf("the removed resume's link stays: %+v", links)
	}
	ss, err := db.Sessions(ctx)
	if err != nil || len(ss) != 1 || ss[0].Exchanges != 2 || ss[0].Events != 2 {
		t.Errorf("sessions after the edit: %+v %v", ss, err)
	}
	// The changed line is read again by Commit; the kept ones are skipped.
	nf := &feeder{gen: g}
	nf.gen.ID = id
	commit(t, db, nf.batch(edited[1:]...))
	if got := rawTexts(t, db); len(got) != 3 {
		t.Errorf("events after the edit: %q", got)
	}
	if rs, _ := db.Rejects(ctx, 0); len(rs) != 1 || rs[0].Generation != id || rs[0].Line != 4 {
		t.Errorf("the kept reject: %+v", rs)
	}
}

// TestSketchSimilar: a line edited by a substitution is similar to what
// it was; another line of the same format is not.
func TestSketchSimilar(t *testing.T) {
	line := func(user, ai string) []byte {
		return []byte(fmt.Sprintf(`{"type":"exchange","user":%q,"ai":%q}`, user, ai))
	}
	tests := []struct {
		name    string
		a, b    []byte
		similar bool
	}{
		{"word inserted", line("question 3: Sessions or JWT?", "answer 3"), line("question 3: Sessions or JWT tokens?", "answer 3"), true},
		{"secret removed", line("my key is hunter2-very-long-password, why does login fail?", "check the config"),
			line("my key is [removed], why does login fail?", "check the config"), true},
		{"two words replaced", line("the build fails on the CI runner because cgo needs gcc installed", "install gcc"),
			line("the build fails on the CI machine because cgo needs clang installed", "install gcc"), true},
		{"another exchange", line("question 3: Sessions or JWT?", "answer 3"), line("how do I rotate the logs?", "use logrotate"), false},
		{"another short exchange", line("hi", "hello"), line("ok", "fine"), false},
		{"same shape, other texts", line("why does the build fail?", "cgo needs gcc"), line("what does the daemon log?", "its rejects"), false},
		{"too short to tell", []byte(`{"a":1}`), []byte(`{"a":1}`), false},
	}
	for _, tt := range tests {
		a, b := sketchOf(tt.a), sketchOf(tt.b)
		if got := a.similar(&b); got != tt.similar {
			t.Errorf("%s: similar %v, want %v", tt.name, got, tt.similar)
		}
	}
}
