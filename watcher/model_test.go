package watcher_test

// A randomised model test of the tailer, after Vector's file source model
// tests: random sequences of what happens to logs (appends of whole and
// partial lines, rotations by rename, gzip of rotated logs, copytruncate,
// truncation, renames inside the folder, edits in place by rename over
// and by rewrite, deletes, restores of deleted logs, and crashes: the
// watcher abandoned mid-work and started again on the same index) are
// played against a Watcher committing into a real index (SQLite), and
// against a model of what protocol.md (section 8) says must then be
// indexed. At every caught-up point the index must hold exactly the
// model's lines: nothing lost, nothing twice (no duplicate skipped, no
// reject), ids and bytes equal.
//
// The test runs a few seeded sequences (a few seconds); a failure prints
// the seed and the operations, and
//
//	CONTINUITY_MODEL_SEED=N go test -tags sqlite_fts5 ./watcher -run TestTailerModel -v
//
// replays one. CONTINUITY_MODEL_RUNS and CONTINUITY_MODEL_STEPS run more
// and longer sequences (random seeds past the fixed ones, printed), and
//
//	go test -tags sqlite_fts5 ./watcher -run '^$' -fuzz FuzzTailerModel -fuzztime 10m
//
// lets the fuzzer choose the operations.

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/watcher"
)

// Operations of the model. Those that destroy bytes the watcher may not
// have read yet (truncate, delete, edits) first wait until it caught up:
// protocol.md promises nothing for lines removed before anyone read them.
const (
	opAppend       = iota // whole lines, one write (a partial line is completed first)
	opPartial             // the first part of a line, no newline
	opComplete            // the rest of the partial line
	opRotate              // mv x.jsonl x.jsonl.N; the next append creates x.jsonl
	opGzip                // gzip x.jsonl.N: x.jsonl.N.gz written, x.jsonl.N removed
	opCopyTruncate        // cp x.jsonl x.jsonl.N && : > x.jsonl
	opTruncate            // : > x.jsonl (after catching up)
	opRename              // mv x.jsonl y.jsonl inside the folder
	opEditRename          // one line changed or removed, the file written anew and renamed over (sed -i)
	opEditInPlace         // the same, rewritten in place (O_TRUNC)
	opDelete              // rm (after catching up)
	opRestore             // a deleted log copied back
	opCrash               // the watcher abandoned mid-work, a new one started
	opCheck               // wait until caught up and compare with the model
	numOps
)

var opNames = [numOps]string{"append", "partial", "complete", "rotate", "gzip", "copytruncate", "truncate",
	"rename", "edit-rename", "edit-in-place", "delete", "restore", "crash", "check"}

// opWeights are the chances of each operation in a random sequence.
var opWeights = [numOps]int{opAppend: 30, opPartial: 8, opComplete: 8, opRotate: 5, opGzip: 4, opCopyTruncate: 3,
	opTruncate: 2, opRename: 4, opEditRename: 3, opEditInPlace: 2, opDelete: 3, opRestore: 2, opCrash: 6, opCheck: 6}

// mfile is what the model knows of a log: its complete lines, in order,
// and the unfinished line after them.
type mfile struct {
	lines   []string // without their "\n"
	partial string   // bytes written of an unfinished line
	rest    string   // what completes it (its "\n" included)
	gz      bool
}

func (f *mfile) content() []byte {
	var b strings.Builder
	for _, l := range f.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(f.partial)
	return []byte(b.String())
}

type model struct {
	t       testing.TB
	rng     *rand.Rand
	dir     string // the logs folder
	idx     string // the index's folder
	notify  bool
	files   map[string]*mfile
	deleted map[string][]string // deleted logs' lines, to restore
	want    map[string]string   // event id -> line, what the index must hold
	next    int                 // the next line's number
	rot     int                 // the next rotation number
	trace   []string

	db     *index.DB
	cancel context.CancelFunc
	done   chan error
}

func newModel(t testing.TB, seed uint64) *model {
	root := t.TempDir()
	m := &model{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), dir: filepath.Join(root, "logs"),
		idx: filepath.Join(root, "index"), notify: seed%2 == 1, files: map[string]*mfile{},
		deleted: map[string][]string{}, want: map[string]string{}, rot: 1}
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m.start()
	t.Cleanup(m.stop)
	return m
}

// start opens the index and runs a watcher on it.
func (m *model) start() {
	db, err := index.Open(m.idx, index.Options{NoRedaction: true})
	if err != nil {
		m.fail("open the index: %v", err)
	}
	// Settle is short, to play many holds; Grace keeps its default: an
	// edit renamed over a log is one while the old file is still
	// followed (protocol.md: "within a few seconds"), and a loaded
	// machine must not turn it into a restore.
	w, err := watcher.New(watcher.Config{Dir: m.dir, Rescan: 10 * time.Millisecond, NoNotify: !m.notify,
		Grace: watcher.DefaultGrace, Settle: 100 * time.Millisecond, BatchLines: 3, Logger: modelLogger()}, db)
	if err != nil {
		m.fail("watcher: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.db, m.cancel, m.done = db, cancel, make(chan error, 1)
	go func() { m.done <- w.Run(ctx) }()
}

// modelLogger is the watcher's logger: its log on standard error with
// CONTINUITY_MODEL_LOG=1 (to follow a replayed seed), else none.
func modelLogger() *slog.Logger {
	if os.Getenv("CONTINUITY_MODEL_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// stop abandons the watcher wherever it is (a commit in flight is rolled
// back, as after kill -9: nothing else of the process is durable) and
// closes the index.
func (m *model) stop() {
	if m.db == nil {
		return
	}
	m.cancel()
	if err := <-m.done; err != nil && !errors.Is(err, context.Canceled) {
		m.t.Errorf("watcher: %v", err)
	}
	m.db.Close()
	m.db = nil
}

func (m *model) fail(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("%s\noperations:\n  %s", fmt.Sprintf(format, args...), strings.Join(m.trace, "\n  "))
}

func (m *model) logf(format string, args ...any) {
	m.trace = append(m.trace, fmt.Sprintf(format, args...))
}

// line returns a new valid exchange line with its id, without "\n".
func (m *model) line() (id, line string) {
	m.next++
	id = "L" + strconv.Itoa(m.next)
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	var text strings.Builder
	for range 1 + m.rng.IntN(12) {
		text.WriteString(words[m.rng.IntN(len(words))])
		text.WriteByte(' ')
	}
	return id, fmt.Sprintf(`{"type":"exchange","session_id":"m","id":%q,"user":"question %d: %s","ai":"answer %d"}`, id, m.next, text.String(), m.next)
}

// names returns the model's log names matching keep, sorted.
func (m *model) names(keep func(name string, f *mfile) bool) []string {
	var out []string
	for n, f := range m.files {
		if keep(n, f) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func (m *model) pick(names []string) string { return names[m.rng.IntN(len(names))] }

func isLive(name string, f *mfile) bool {
	ln, ok := logformat.ParseLogName(name)
	return ok && ln.Rotation == 0 && !ln.Compressed
}

// write appends p to the log with one write on an O_APPEND descriptor,
// as `>>` does.
func (m *model) write(name, p string) {
	f, err := os.OpenFile(filepath.Join(m.dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		m.fail("%v", err)
	}
	if _, err := f.WriteString(p); err != nil {
		m.fail("%v", err)
	}
	f.Close()
}

func (m *model) file(name string) *mfile {
	f := m.files[name]
	if f == nil {
		f = &mfile{}
		m.files[name] = f
	}
	return f
}

// completion returns what ends f's partial line, and takes the line into
// the model.
func (m *model) completion(f *mfile) string {
	if f.partial == "" {
		return ""
	}
	s := f.rest
	l := f.partial + strings.TrimSuffix(s, "\n")
	f.lines = append(f.lines, l)
	m.want[lineID(l)] = l
	f.partial, f.rest = "", ""
	return s
}

func lineID(l string) string {
	i := strings.Index(l, `"id":"`)
	rest := l[i+6:]
	return rest[:strings.IndexByte(rest, '"')]
}

// liveName is a live log to write to: an existing one mostly, else new.
func (m *model) liveName() string {
	if live := m.names(isLive); len(live) > 0 && m.rng.IntN(4) > 0 {
		return m.pick(live)
	}
	return fmt.Sprintf("x%d.jsonl", m.rng.IntN(4))
}

// step plays op (a random one when op < 0).
func (m *model) step(op int) {
	m.t.Helper()
	switch op {
	case opAppend:
		name := m.liveName()
		f := m.file(name)
		p := m.completion(f)
		n := 1 + m.rng.IntN(4)
		for range n {
			_, l := m.line()
			f.lines = append(f.lines, l)
			m.want[lineID(l)] = l
			p += l + "\n"
		}
		m.write(name, p)
		m.logf("append %d lines to %s", n, name)
	case opPartial:
		name := m.liveName()
		f := m.file(name)
		if f.partial != "" {
			return
		}
		_, l := m.line()
		l += "\n"
		cut := 1 + m.rng.IntN(len(l)-1)
		f.partial, f.rest = l[:cut], l[cut:]
		m.write(name, f.partial)
		m.logf("partial line (%d of %d bytes) to %s", cut, len(l), name)
	case opComplete:
		names := m.names(func(_ string, f *mfile) bool { return f.partial != "" })
		if len(names) == 0 {
			return
		}
		name := m.pick(names)
		m.write(name, m.completion(m.files[name]))
		m.logf("complete the partial line of %s", name)
	case opRotate:
		names := m.names(isLive)
		if len(names) == 0 {
			return
		}
		name := m.pick(names)
		m.finish(name)
		to := fmt.Sprintf("%s.%d", name, m.rot)
		m.rot++
		m.rename(name, to)
		m.logf("rotate %s to %s", name, to)
	case opGzip:
		names := m.names(func(n string, f *mfile) bool { return !f.gz && !isLive(n, f) })
		if len(names) == 0 {
			return
		}
		name := m.pick(names)
		f := m.files[name]
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(f.content())
		zw.Close()
		// gzip writes the compressed file, then removes the original.
		if err := os.WriteFile(filepath.Join(m.dir, name+".gz"), b.Bytes(), 0o600); err != nil {
			m.fail("%v", err)
		}
		if err := os.Remove(filepath.Join(m.dir, name)); err != nil {
			m.fail("%v", err)
		}
		delete(m.files, name)
		m.files[name+".gz"] = &mfile{lines: f.lines, gz: true}
		m.logf("gzip %s", name)
	case opCopyTruncate:
		names := m.names(isLive)
		if len(names) == 0 {
			return
		}
		name := m.pick(names)
		m.finish(name)
		f := m.files[name]
		to := fmt.Sprintf("%s.%d", name, m.rot)
		m.rot++
		if err := os.WriteFile(filepath.Join(m.dir, to), f.content(), 0o600); err != nil {
			m.fail("%v", err)
		}
		if err := os.Truncate(filepath.Join(m.dir, name), 0); err != nil {
			m.fail("%v", err)
		}
		m.files[to] = &mfile{lines: f.lines}
		m.files[name] = &mfile{}
		m.logf("copytruncate %s to %s", name, to)
		// The copy is known as the log's by its name (x.jsonl.N beside
		// x.jsonl): renamed to another log's name before anyone looked,
		// it would be another log, its lines read again (duplicates).
		m.caughtUp()
	case opTruncate:
		names := m.names(func(n string, f *mfile) bool { return isLive(n, f) && len(f.lines) > 0 })
		if len(names) == 0 {
			return
		}
		name := m.pick(names)
		m.caughtUp()
		if err := os.Truncate(filepath.Join(m.dir, name), 0); err != nil {
			m.fail("%v", err)
		}
		m.files[name] = &mfile{}
		m.logf("truncate %s", name)
	case opRename:
		names := m.names(isLive)
		if len(names) == 0 {
			return
		}
		name := m.pick(names)
		to := fmt.Sprintf("r%d.jsonl", m.rng.IntN(1000))
		if m.files[to] != nil {
			return
		}
		m.rename(name, to)
		m.logf("rename %s to %s", name, to)
	case opEditRename, opEditInPlace:
		// An edit keeps most lines: the log is then the same log,
		// edited (docs/edits.md).
		names := m.names(func(n string, f *mfile) bool { return isLive(n, f) && len(f.lines) >= 4 && f.partial == "" })
		if len(names) == 0 {
			return
		}
		name := m.pick(names)
		m.caughtUp()
		f := m.files[name]
		i := m.rng.IntN(len(f.lines))
		old := f.lines[i]
		id := lineID(old)
		what := "remove"
		if m.rng.IntN(2) == 0 {
			what = "change"
			f.lines[i] = strings.Replace(old, `"ai":"answer`, `"ai":"edited answer`, 1)
			m.want[id] = f.lines[i]
		} else {
			f.lines = slices.Delete(f.lines, i, i+1)
			delete(m.want, id)
		}
		path := filepath.Join(m.dir, name)
		if op == opEditRename {
			tmp := filepath.Join(m.dir, ".sed-tmp")
			if err := os.WriteFile(tmp, f.content(), 0o600); err != nil {
				m.fail("%v", err)
			}
			if err := os.Rename(tmp, path); err != nil {
				m.fail("%v", err)
			}
		} else if err := os.WriteFile(path, f.content(), 0o600); err != nil {
			m.fail("%v", err)
		}
		m.logf("%s: %s line %d (%s) of %s", opNames[op], what, i+1, id, name)
		// Seen under its name, it is the log edited; renamed away (or
		// rotated) before anyone looked, it would be another log, read
		// whole as new, its lines duplicates of the old (section 8).
		m.caughtUp()
	case opDelete:
		names := m.names(func(string, *mfile) bool { return true })
		if len(names) == 0 {
			return
		}
		name := m.pick(names)
		m.caughtUp()
		if err := os.Remove(filepath.Join(m.dir, name)); err != nil {
			m.fail("%v", err)
		}
		f := m.files[name]
		delete(m.files, name)
		if !f.gz {
			m.deleted[name] = f.lines // a partial line is lost with the file
		}
		m.logf("delete %s", name)
	case opRestore:
		var names []string
		for n := range m.deleted {
			if m.files[n] == nil {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return
		}
		slices.Sort(names)
		name := m.pick(names)
		lines := m.deleted[name]
		delete(m.deleted, name)
		// Its lines were indexed (a delete waits for that) and may have
		// been edited away since; the restore brings none back.
		f := &mfile{lines: lines}
		if err := os.WriteFile(filepath.Join(m.dir, name), f.content(), 0o600); err != nil {
			m.fail("%v", err)
		}
		m.files[name] = f
		m.logf("restore %s (%d lines)", name, len(lines))
	case opCrash:
		m.stop()
		m.start()
		m.logf("crash and restart")
	case opCheck:
		m.check()
	}
}

// finish completes a partial line before a rotation: a writer that
// appends by name would glue the rest onto another file.
func (m *model) finish(name string) {
	if f := m.files[name]; f.partial != "" {
		m.write(name, m.completion(f))
		m.logf("complete the partial line of %s", name)
	}
}

func (m *model) rename(from, to string) {
	if err := os.Rename(filepath.Join(m.dir, from), filepath.Join(m.dir, to)); err != nil {
		m.fail("%v", err)
	}
	m.files[to] = m.files[from]
	delete(m.files, from)
}

// caughtUp waits until every log of the folder is followed, under its
// name now, by a generation of the index committed to its last complete
// line (of its content, for a compressed log): the watcher has then read
// everything there is to read, and seen every log where it is.
//
// The name matters. A log is known by its inode while its file is there,
// but once a new file replaces it (an edit renamed over it, a delete and
// a restore) the old inode is gone, and what the watcher can still tell
// is the name it last saw the log under: an edit is a new file that
// takes the name of a log that just left the folder (protocol.md,
// section 8). A rename the watcher did not see (mv x r, then sed -i r
// before the next scan, or while no watcher ran) leaves it, when it
// looks, with x gone and a new r holding most of x's lines: read as
// another log (its lines duplicates of x's) or, shorter, as an older copy
// of x restored under another name (nothing leaves the index). Neither
// can be told from what the folder shows then, and neither loses a line;
// so operations that need the watcher to know a log as it is (edits,
// truncate, delete) wait until its generation carries its name, as
// they wait until its bytes are read.
func (m *model) caughtUp() {
	m.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		behind := m.behind()
		if behind == "" {
			return
		}
		if time.Now().After(deadline) {
			m.fail("not caught up in 20 s: %s", behind)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// behind says which log the index does not follow to its end yet, "" when
// none.
func (m *model) behind() string {
	gens, err := m.db.Generations(context.Background())
	if err != nil {
		return err.Error()
	}
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return err.Error()
	}
	for _, e := range entries {
		ln, ok := logformat.ParseLogName(e.Name())
		if !ok {
			continue
		}
		path := filepath.Join(m.dir, e.Name())
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			return err.Error()
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err.Error()
		}
		if ln.Compressed {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				return e.Name() + ": " + err.Error()
			}
			if data, err = io.ReadAll(zr); err != nil {
				return e.Name() + ": " + err.Error()
			}
		}
		end := int64(bytes.LastIndexByte(data, '\n') + 1)
		followed := false
		for _, g := range gens {
			if !g.Gone && g.Dev == uint64(st.Dev) && g.Ino == st.Ino && g.Offset == end && g.Path == e.Name() {
				followed = true
			}
		}
		if !followed {
			return fmt.Sprintf("%s (%d complete bytes) not followed under its name to its end: generations %+v", e.Name(), end, gens)
		}
	}
	return ""
}

// check waits until the watcher caught up, then compares the index with
// the model: every line the model wants, with its id and bytes, once;
// nothing else; no duplicate skipped, no reject.
func (m *model) check() {
	m.t.Helper()
	m.caughtUp()
	ctx := context.Background()
	raws, err := m.db.RawLines(ctx)
	if err != nil {
		m.fail("%v", err)
	}
	got := map[string]string{}
	var problems []string
	for _, r := range raws {
		if _, ok := got[r.EventID]; ok {
			problems = append(problems, "indexed twice: "+r.EventID)
		}
		got[r.EventID] = string(r.Raw)
	}
	for id, l := range m.want {
		switch g, ok := got[id]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("lost: %s", l))
		case g != l:
			problems = append(problems, fmt.Sprintf("%s indexed as %s, want %s", id, g, l))
		}
	}
	for id, g := range got {
		if _, ok := m.want[id]; !ok {
			problems = append(problems, fmt.Sprintf("indexed, not in the model: %s", g))
		}
	}
	st, err := m.db.Status(ctx)
	if err != nil {
		m.fail("%v", err)
	}
	if st.DuplicatesSkipped != 0 || st.Rejects != 0 {
		problems = append(problems, fmt.Sprintf("%d duplicates skipped, %d rejects", st.DuplicatesSkipped, st.Rejects))
		rejects, _ := m.db.Rejects(ctx, 0)
		for _, r := range rejects {
			problems = append(problems, fmt.Sprintf("reject: %s line %d (generation %d, offset %d): %s: %.60s", r.File, r.Line, r.Generation, r.Offset, r.Reason, r.Excerpt))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		m.fail("the index is not the model (%d lines wanted, %d indexed):\n  %s", len(m.want), len(got), strings.Join(problems, "\n  "))
	}
	m.logf("check: %d lines", len(m.want))
}

// randomOp draws an operation by opWeights.
func (m *model) randomOp() int {
	total := 0
	for _, w := range opWeights {
		total += w
	}
	r := m.rng.IntN(total)
	for op, w := range opWeights {
		if r < w {
			return op
		}
		r -= w
	}
	return opCheck
}

// run plays steps random operations (or the script's, one a byte), then
// a crash and a last check.
func (m *model) run(steps int, script []byte) {
	m.t.Helper()
	if script != nil {
		for _, b := range script {
			m.step(int(b) % numOps)
		}
	} else {
		for range steps {
			m.step(m.randomOp())
		}
	}
	m.step(opCrash)
	m.step(opCheck)
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// TestTailerModel plays seeded random sequences against the model (see
// the top of the file): 4 sequences of 60 operations by default.
func TestTailerModel(t *testing.T) {
	steps := envInt(t, "CONTINUITY_MODEL_STEPS", 60)
	var seeds []uint64
	if s := os.Getenv("CONTINUITY_MODEL_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CONTINUITY_MODEL_SEED=%q: %v", s, err)
		}
		seeds = []uint64{seed}
	} else {
		seeds = []uint64{1, 2, 3, 4}
		for i := len(seeds); i < envInt(t, "CONTINUITY_MODEL_RUNS", len(seeds)); i++ {
			seeds = append(seeds, rand.Uint64())
		}
	}
	for _, seed := range seeds {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("replay: CONTINUITY_MODEL_SEED=%d CONTINUITY_MODEL_STEPS=%d go test -tags sqlite_fts5 ./watcher -run TestTailerModel -v", seed, steps)
				}
			}()
			newModel(t, seed).run(steps, nil)
		})
	}
}

// FuzzTailerModel lets the fuzzer choose the operations, one a byte of
// script (their details follow from seed).
func FuzzTailerModel(f *testing.F) {
	f.Add(uint64(1), []byte{opAppend, opPartial, opCrash, opComplete, opRotate, opAppend, opGzip, opCheck})
	f.Add(uint64(2), []byte{opAppend, opAppend, opCopyTruncate, opAppend, opEditRename, opCrash, opRename, opDelete, opRestore, opCheck})
	f.Add(uint64(3), []byte{opAppend, opAppend, opAppend, opEditInPlace, opPartial, opTruncate, opAppend, opCrash, opCheck})
	f.Fuzz(func(t *testing.T, seed uint64, script []byte) {
		if len(script) > 200 {
			script = script[:200]
		}
		newModel(t, seed).run(0, script)
	})
}
