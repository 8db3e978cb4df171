// Package watcher tails the conversation logs of a workspace: every
// complete line of every *.jsonl file directly in one folder is handed to a
// Store exactly once, across restarts and crashes, whatever happens to the
// files (appends by several writers, truncation, rename, delete, restore).
//
// The pieces, one file each: fingerprint.go (file identity), tail.go (reading
// complete lines from one file), watcher.go (the folder: which file is which
// generation, when to read), notify.go (fsnotify as a hint; the periodic
// rescan alone guarantees convergence).
package watcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxLineBytes = 1 << 20
	DefaultRescan       = 2 * time.Second
	DefaultGrace        = 3 * time.Second
	DefaultBatchLines   = 2000
	DefaultBatchBytes   = 8 << 20
)

// Config says what to watch and how.
type Config struct {
	Dir          string        // the folder holding the *.jsonl logs
	MaxLineBytes int           // longer lines are skipped (Oversize)
	Rescan       time.Duration // period of the full rescan safety net
	NoNotify     bool          // do not use fsnotify; rely on rescans alone
	// Grace is how long a file whose name left the folder (deleted, renamed
	// away) is still read, for writers that hold it open; then it is closed.
	Grace      time.Duration
	BatchLines int // most lines in one commit
	BatchBytes int // about the most line bytes in one commit
	Logger     *slog.Logger
	// OnCommit, if set, is called after each successful commit.
	OnCommit func(Batch)
}

func (c *Config) setDefaults() {
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = DefaultMaxLineBytes
	}
	if c.Rescan <= 0 {
		c.Rescan = DefaultRescan
	}
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.BatchLines <= 0 {
		c.BatchLines = DefaultBatchLines
	}
	if c.BatchBytes <= 0 {
		c.BatchBytes = DefaultBatchBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

type fileKey struct{ dev, ino uint64 }

// Watcher follows the logs of one folder. It is not safe for concurrent
// use: Run and CatchUp drive it from one goroutine.
type Watcher struct {
	cfg   Config
	store Store
	log   *slog.Logger
	buf   []byte

	missing bool // the folder was missing at the last scan

	tails   map[fileKey]*tail    // open files, by identity
	known   map[int64]Generation // persisted generations with no open file
	skipped map[string]string    // names skipped as a whole, with the reason
	now     func() time.Time
}

// New returns a Watcher for cfg.Dir that checkpoints into store.
func New(cfg Config, store Store) (*Watcher, error) {
	if cfg.Dir == "" {
		return nil, errors.New("watcher: no folder given")
	}
	cfg.setDefaults()
	return &Watcher{
		cfg:     cfg,
		store:   store,
		log:     cfg.Logger,
		buf:     make([]byte, 256<<10),
		tails:   map[fileKey]*tail{},
		skipped: map[string]string{},
		now:     time.Now,
	}, nil
}

// load reads the persisted generations; called once before the first scan.
func (w *Watcher) load(ctx context.Context) error {
	gens, err := w.store.Generations(ctx)
	if err != nil {
		return fmt.Errorf("watcher: load generations: %w", err)
	}
	w.known = make(map[int64]Generation, len(gens))
	for _, g := range gens {
		w.known[g.ID] = g
	}
	return nil
}

// CatchUp reads every complete line of every log once and returns: the
// backfill of `continuity ingest`. Unfinished last lines are left for later.
func (w *Watcher) CatchUp(ctx context.Context) error {
	if err := w.load(ctx); err != nil {
		return err
	}
	defer w.closeAll()
	if err := w.scan(ctx); err != nil {
		return err
	}
	if err := w.drainAll(ctx); err != nil {
		return err
	}
	// Nothing will be read after this: files that left the folder are
	// closed now rather than after a grace period.
	for k, t := range w.tails {
		if !t.vanishedAt.IsZero() {
			w.retire(ctx, k, t)
		}
	}
	return ctx.Err()
}

// Run follows the folder until ctx is cancelled.
func (w *Watcher) Run(ctx context.Context) error {
	if err := os.MkdirAll(w.cfg.Dir, 0o700); err != nil {
		return fmt.Errorf("watcher: create %s: %w", w.cfg.Dir, err)
	}
	if err := w.load(ctx); err != nil {
		return err
	}
	defer w.closeAll()

	var n *notifier
	if !w.cfg.NoNotify {
		var err error
		if n, err = startNotifier(ctx, w.cfg.Dir, w.log); err != nil {
			w.log.Warn("fsnotify unavailable; relying on periodic rescans", "dir", w.cfg.Dir, "err", err)
			n = nil
		} else {
			defer n.close()
		}
	}
	var wake <-chan struct{}
	if n != nil {
		wake = n.wake
	}
	tick := time.NewTicker(w.cfg.Rescan)
	defer tick.Stop()

	full := true
	for {
		if full {
			if n != nil {
				n.rewatch()
			}
			if err := w.scan(ctx); err != nil {
				w.log.Error("scan failed", "dir", w.cfg.Dir, "err", err)
			}
			if err := w.drainAll(ctx); err != nil && ctx.Err() == nil {
				w.log.Error("read failed", "err", err)
			}
			w.expire(ctx)
		} else if n != nil {
			w.drainNames(ctx, n.takeNames())
		}
		// A missing folder (rm -rf, about to be recreated) is looked for
		// more often: a cheap stat, and recovery does not wait a period.
		var retry <-chan time.Time
		if w.missing {
			retry = time.After(w.cfg.Rescan / 10)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			full = true
		case <-retry:
			_, err := os.Stat(w.cfg.Dir)
			full = err == nil
		case <-wake:
			full = n.takeScan()
		}
	}
}

// scan lists the folder and matches every *.jsonl regular file to a
// generation: an open one (same inode: maybe renamed), a persisted one whose
// bytes the file still holds (restart, restore), or a new one.
func (w *Watcher) scan(ctx context.Context) error {
	present, err := w.list(ctx)
	if err != nil {
		return err
	}
	now := w.now()
	// Files already open: renamed, still there, or gone from the folder.
	for _, k := range w.sortedTails() {
		t := w.tails[k]
		name, ok := present[k]
		if !ok {
			if t.vanishedAt.IsZero() {
				t.vanishedAt = now
				w.log.Info("log left the folder; draining", "file", t.name, "generation", t.gen.ID)
				w.drain(ctx, k, t)
			}
			continue
		}
		delete(present, k)
		t.vanishedAt = time.Time{}
		if name != t.name {
			w.log.Info("log renamed", "from", t.name, "to", name, "generation", t.gen.ID)
			t.name, t.gen.Path = name, name
			if err := w.store.UpdateGeneration(ctx, t.gen); err != nil {
				return fmt.Errorf("watcher: record rename of %s: %w", name, err)
			}
		}
	}
	// Files not open yet, in name order for deterministic generations.
	names := make([]string, 0, len(present))
	for _, name := range present {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := w.open(ctx, name); err != nil {
			w.log.Error("cannot follow log", "file", name, "err", err)
		}
	}
	// Persisted generations whose file is nowhere: gone.
	for id, g := range w.known {
		if !g.Gone {
			g.Gone = true
			if err := w.store.UpdateGeneration(ctx, g); err != nil {
				return fmt.Errorf("watcher: mark %s gone: %w", g.Path, err)
			}
			w.known[id] = g
		}
	}
	return nil
}

// list returns the regular *.jsonl files directly in the folder, by
// identity, and records the others as skipped.
func (w *Watcher) list(ctx context.Context) (map[fileKey]string, error) {
	entries, err := os.ReadDir(w.cfg.Dir)
	w.missing = errors.Is(err, fs.ErrNotExist)
	if w.missing {
		entries, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("watcher: list %s: %w", w.cfg.Dir, err)
	}
	present := map[fileKey]string{}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		seen[name] = true
		if reason := skipReason(e.Type()); reason != "" {
			w.skip(ctx, name, reason)
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // raced with a delete: the next scan sees the truth
		}
		if reason := skipReason(info.Mode().Type()); reason != "" {
			w.skip(ctx, name, reason)
			continue
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil, errors.New("watcher: no inode numbers on this platform")
		}
		present[fileKey{uint64(st.Dev), st.Ino}] = name
	}
	files := make(map[string]bool, len(present))
	for _, name := range present {
		files[name] = true
	}
	for name := range w.skipped {
		if !seen[name] || files[name] {
			w.skip(ctx, name, "") // gone, or a regular file again
		}
	}
	return present, nil
}

// skipReason says why a file of this type is not read, or "" for a regular
// file.
func skipReason(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link: not followed (only regular files directly in the folder are read)"
	case m&fs.ModeDir != 0:
		return "directory: subfolders are not read"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO: not a regular file"
	case m&fs.ModeSocket != 0:
		return "socket: not a regular file"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "device: not a regular file"
	case m&fs.ModeIrregular != 0:
		return "not a regular file"
	}
	return ""
}

// skip records (or, with reason "", clears) a file skipped as a whole.
func (w *Watcher) skip(ctx context.Context, name, reason string) {
	if w.skipped[name] == reason {
		return
	}
	if reason != "" {
		w.log.Warn("skipping file", "file", name, "reason", reason)
	}
	if err := w.store.SetSkippedFile(ctx, name, reason); err != nil {
		w.log.Error("cannot record skipped file", "file", name, "err", err)
		return
	}
	if reason == "" {
		delete(w.skipped, name)
	} else {
		w.skipped[name] = reason
	}
}

// open starts following a file not open yet.
func (w *Watcher) open(ctx context.Context, name string) error {
	path := filepath.Join(w.cfg.Dir, name)
	// O_NOFOLLOW: a symlink swapped in after listing is refused;
	// O_NONBLOCK: a FIFO swapped in does not block the open.
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if errors.Is(err, syscall.ELOOP) {
			w.skip(ctx, name, skipReason(fs.ModeSymlink))
			return nil
		}
		w.skip(ctx, name, "cannot open: "+err.Error())
		return nil
	}
	f := os.NewFile(uintptr(fd), path)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		f.Close()
		return fmt.Errorf("fstat: %w", err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		f.Close()
		w.skip(ctx, name, "not a regular file")
		return nil
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		f.Close()
		return fmt.Errorf("set blocking: %w", err)
	}
	k := fileKey{uint64(st.Dev), st.Ino}
	if t, ok := w.tails[k]; ok { // renamed between listing and open
		f.Close()
		t.vanishedAt = time.Time{}
		return nil
	}

	t, replaces := w.adopt(ctx, f, k, name)
	if t == nil {
		g := Generation{Path: name, Dev: k.dev, Ino: k.ino}
		id, err := w.store.CreateGeneration(ctx, g, replaces)
		if err != nil {
			f.Close()
			return fmt.Errorf("new generation for %s: %w", name, err)
		}
		g.ID = id
		if replaces != 0 {
			delete(w.known, replaces)
		}
		t = &tail{gen: g, f: f, name: name}
		w.log.Info("following new log", "file", name, "generation", id, "replaces", replaces)
	}
	w.tails[k] = t
	return nil
}

// adopt finds the generation whose committed bytes the file still holds.
// It returns nil when there is none, with the id of the generation the file
// replaces (same inode, other content: truncated or rewritten while nobody
// watched, or an inode reused) or 0.
func (w *Watcher) adopt(ctx context.Context, f *os.File, k fileKey, name string) (*tail, int64) {
	type cand struct {
		g    Generation
		from *tail // an open file whose name left the folder
	}
	var cands []cand
	var replaces int64
	// Same inode first (a restart), then a file that just left the folder
	// (replaced by an identical copy: git checkout), then the same name,
	// then any gone generation (restored under another name).
	for _, g := range w.known {
		if (fileKey{g.Dev, g.Ino}) == k {
			cands = append(cands, cand{g: g})
			if !g.Gone {
				replaces = g.ID
			}
		}
	}
	for _, t := range w.tails {
		if !t.vanishedAt.IsZero() {
			cands = append(cands, cand{g: t.gen, from: t})
		}
	}
	rest := make([]Generation, 0, len(w.known))
	for _, g := range w.known {
		if (fileKey{g.Dev, g.Ino}) != k {
			rest = append(rest, g)
		}
	}
	slices.SortFunc(rest, func(a, b Generation) int {
		if (a.Path == name) != (b.Path == name) {
			if a.Path == name {
				return -1
			}
			return 1
		}
		return int(b.ID - a.ID)
	})
	for _, g := range rest {
		cands = append(cands, cand{g: g})
	}

	head := readUpTo(f, FingerprintSize)
	for _, c := range cands {
		g := c.g
		if g.Offset <= 0 || g.Head.Len > len(head) || sum(head[:g.Head.Len]) != g.Head {
			continue
		}
		g.Path, g.Dev, g.Ino, g.Gone = name, k.dev, k.ino, false
		t, err := openTail(f, name, g)
		if err != nil {
			continue
		}
		if err := w.store.UpdateGeneration(ctx, g); err != nil {
			w.log.Error("cannot record file identity", "file", name, "err", err)
			continue
		}
		if c.from != nil {
			w.log.Info("log replaced by a copy holding the same lines; continuing", "file", name, "generation", g.ID)
			w.closeTail(c.from)
			for ok, ot := range w.tails {
				if ot == c.from {
					delete(w.tails, ok)
				}
			}
		} else {
			delete(w.known, g.ID)
			w.log.Info("resuming log", "file", name, "generation", g.ID, "offset", g.Offset)
		}
		if g.ID == replaces {
			replaces = 0
		}
		return t, 0
	}
	return nil, replaces
}

// readUpTo returns the first n bytes of f, fewer if it is shorter or
// unreadable.
func readUpTo(f *os.File, n int) []byte {
	buf := make([]byte, n)
	m, _ := f.ReadAt(buf, 0)
	return buf[:m]
}

func (w *Watcher) sortedTails() []fileKey {
	keys := make([]fileKey, 0, len(w.tails))
	for k := range w.tails {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b fileKey) int { return int(w.tails[a].gen.ID - w.tails[b].gen.ID) })
	return keys
}

// drainAll reads every open file to its end.
func (w *Watcher) drainAll(ctx context.Context) error {
	for _, k := range w.sortedTails() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if t, ok := w.tails[k]; ok {
			w.drain(ctx, k, t)
		}
	}
	return nil
}

// drainNames reads the open files with these names (fsnotify write hints).
func (w *Watcher) drainNames(ctx context.Context, names map[string]bool) {
	for _, k := range w.sortedTails() {
		if t, ok := w.tails[k]; ok && names[t.name] {
			w.drain(ctx, k, t)
		}
	}
}

// drain reads one file to its end and commits what it read. Errors are
// logged: the next pass tries again from the committed offset.
func (w *Watcher) drain(ctx context.Context, k fileKey, t *tail) {
	for ctx.Err() == nil {
		if err := t.check(); err != nil {
			if !errors.Is(err, errRewritten) {
				w.log.Error("cannot check log", "file", t.name, "err", err)
				return
			}
			if err := w.restart(ctx, t); err != nil {
				w.log.Error("cannot start new generation", "file", t.name, "err", err)
				return
			}
		}
		b, more, err := t.readBatch(w.buf, w.cfg.MaxLineBytes, w.cfg.BatchLines, w.cfg.BatchBytes)
		if err != nil {
			w.log.Error("cannot read log", "file", t.name, "err", err)
			w.reload(t)
			return
		}
		if b.Gen.Offset == t.gen.Offset {
			return // nothing complete yet
		}
		if err := w.store.Commit(ctx, b); err != nil {
			if ctx.Err() == nil {
				w.log.Error("cannot commit lines", "file", t.name, "from", t.gen.Offset, "to", b.Gen.Offset, "err", err)
			}
			w.reload(t)
			return
		}
		t.gen = b.Gen
		if w.cfg.OnCommit != nil {
			w.cfg.OnCommit(b)
		}
		if !more {
			return
		}
	}
}

// reload forgets uncommitted reads of t after a failure.
func (w *Watcher) reload(t *tail) {
	if err := t.load(); err != nil {
		w.log.Warn("log changed under a failed read", "file", t.name, "err", err)
	}
}

// restart ends t's generation (the file was truncated or rewritten) and
// starts a new one from offset 0 on the same file.
func (w *Watcher) restart(ctx context.Context, t *tail) error {
	old := t.gen
	g := Generation{Path: t.name, Dev: old.Dev, Ino: old.Ino}
	id, err := w.store.CreateGeneration(ctx, g, old.ID)
	if err != nil {
		return err
	}
	g.ID = id
	w.log.Warn("log truncated or rewritten; reading it again from the start", "file", t.name,
		"old_generation", old.ID, "old_offset", old.Offset, "generation", id)
	t.gen = g
	return t.load()
}

// expire closes files that left the folder more than Grace ago.
func (w *Watcher) expire(ctx context.Context) {
	now := w.now()
	for k, t := range w.tails {
		if !t.vanishedAt.IsZero() && now.Sub(t.vanishedAt) >= w.cfg.Grace {
			w.drain(ctx, k, t)
			w.retire(ctx, k, t)
		}
	}
}

// retire closes a file that left the folder and records its generation as
// gone, so that a restored copy is recognised.
func (w *Watcher) retire(ctx context.Context, k fileKey, t *tail) {
	g := t.gen
	g.Gone = true
	if err := w.store.UpdateGeneration(ctx, g); err != nil {
		w.log.Error("cannot mark log gone", "file", t.name, "err", err)
		return
	}
	w.closeTail(t)
	delete(w.tails, k)
	w.known[g.ID] = g
	w.log.Info("closed log that left the folder", "file", t.name, "generation", g.ID, "offset", g.Offset)
}

func (w *Watcher) closeTail(t *tail) {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

func (w *Watcher) closeAll() {
	for k, t := range w.tails {
		w.closeTail(t)
		delete(w.tails, k)
	}
}
