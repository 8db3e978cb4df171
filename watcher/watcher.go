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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/praxis-os/continuity/logformat"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxLineBytes = 1 << 20
	DefaultRescan       = 2 * time.Second
	DefaultGrace        = 3 * time.Second
	DefaultBatchLines   = 2000
	DefaultBatchBytes   = 8 << 20
	DefaultSettle       = time.Second
)

// maxPending bounds how long a file stays pending (see Config.Settle) while
// it keeps changing size: past it, it is read as a new log.
const maxPending = 30 * time.Second

// Config says what to watch and how.
type Config struct {
	Dir          string        // the folder holding the *.jsonl logs
	MaxLineBytes int           // longer lines are skipped (Oversize)
	Rescan       time.Duration // period of the full rescan safety net
	NoNotify     bool          // do not use fsnotify; rely on rescans alone
	// Grace is how long a file whose name left the folder (deleted, renamed
	// away) is still read, for writers that hold it open; then it is closed.
	Grace time.Duration
	// Settle is how long a file that starts like an indexed log but holds
	// fewer bytes than were indexed from it (a copy still being written by
	// cp or git checkout, or an older, shorter version) must keep the same
	// size before it is judged: until then it is not read at all. A copy
	// that reaches the indexed size is recognised at once.
	Settle     time.Duration
	BatchLines int // most lines in one commit
	BatchBytes int // about the most line bytes in one commit
	// MaxGzipBytes bounds a compressed rotated log once decompressed
	// (it is read into memory whole); a larger one is skipped, with the
	// reason.
	MaxGzipBytes int64
	Logger       *slog.Logger
	// OnCommit, if set, is called after each successful commit.
	OnCommit func(Batch)
	// OnEdit, if set, is called after the store recorded an edit of a
	// log in place (see Editor).
	OnEdit func(Edit)
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
	if c.Settle <= 0 {
		c.Settle = DefaultSettle
	}
	if c.BatchLines <= 0 {
		c.BatchLines = DefaultBatchLines
	}
	if c.BatchBytes <= 0 {
		c.BatchBytes = DefaultBatchBytes
	}
	if c.MaxGzipBytes <= 0 {
		c.MaxGzipBytes = DefaultMaxGzipBytes
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
	badGz   map[string]badGzip   // compressed logs that could not be read, as they were
	pending map[string]*pendingFile
	// failing counts commits failed in a row; failLogged is when the
	// last of them was logged (see commitFailed).
	failing    int
	failLogged time.Time
	// firsts are the fingerprints of the first line of generations whose
	// file this process has read (see firstLine), to tell at once that a
	// new file shorter than a generation's head is not a copy of it.
	firsts map[int64]Fingerprint
	now    func() time.Time
}

// pendingFile is a file whose identity is not decided yet: it starts like
// an indexed generation but holds fewer bytes than were indexed from it.
// It is not read until it reaches that size (a copy being written: then it
// is recognised) or its size settles (then it is read as a new log).
type pendingFile struct {
	key   fileKey
	size  int64
	since time.Time // when size last changed
	first time.Time // when first seen
	like  int64     // the generation it starts like
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
		badGz:   map[string]badGzip{},
		pending: map[string]*pendingFile{},
		firsts:  map[int64]Fingerprint{},
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
	// Files that may be copies still being written are judged once they
	// are whole or their size settles.
	for len(w.pending) > 0 || w.rewritesHeld() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(w.cfg.Settle / 4):
		}
		w.openPending(ctx, nil)
		for _, k := range w.sortedTails() {
			if t := w.tails[k]; t != nil && t.held != nil {
				w.drain(ctx, k, t)
			}
		}
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
		var retry, settle <-chan time.Time
		if w.missing {
			retry = time.After(w.cfg.Rescan / 10)
		}
		// Pending files (copies being written) are looked at again soon.
		if len(w.pending) > 0 || w.rewritesHeld() {
			settle = time.After(w.cfg.Settle / 4)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			full = true
		case <-retry:
			_, err := os.Stat(w.cfg.Dir)
			full = err == nil
		case <-settle:
			w.openPending(ctx, nil)
			for _, k := range w.sortedTails() {
				if t := w.tails[k]; t != nil && t.held != nil {
					w.drain(ctx, k, t)
				}
			}
			full = false
			continue
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
	// Files not open yet, in name order for deterministic generations,
	// a log's rotated files before it, oldest first (x.jsonl.2.gz,
	// x.jsonl.1, x.jsonl): a backfill reads its history in order. But
	// first the files that are still a known generation's own (the same
	// inode: a restart): a copy of one made while no daemon ran (cp
	// before copytruncate) would otherwise take that generation by its
	// content, and the log itself be read again as a new one (its valid
	// lines duplicates, its invalid ones rejected twice); opened after
	// its log, the copy is recognised as one (rotatedCopy).
	own := map[fileKey]bool{}
	for _, g := range w.known {
		own[fileKey{g.Dev, g.Ino}] = true
	}
	names := make([]string, 0, len(present))
	ownNames := map[string]bool{}
	for k, name := range present {
		names = append(names, name)
		ownNames[name] = own[k]
	}
	slices.SortFunc(names, func(a, b string) int {
		if ownNames[a] != ownNames[b] {
			if ownNames[a] {
				return -1
			}
			return 1
		}
		return compareLogNames(a, b)
	})
	for name, p := range w.pending {
		if k, ok := namesKey(present, name); !ok || k != p.key {
			delete(w.pending, name) // gone, or another file now
		}
	}
	for _, name := range names {
		if err := w.open(ctx, name); err != nil {
			w.log.Error("cannot follow log", "file", name, "err", err)
		}
	}
	// Persisted generations whose file is nowhere: gone. Not those a
	// pending file may be (an edited copy is judged against them), nor
	// those a pending file may be an edit of (its name's, its inode's:
	// rewritten while nobody watched, held because it may also be a copy
	// of another log; once judged, see editCandidates).
	like := map[int64]bool{}
	held := map[fileKey]bool{}
	for _, p := range w.pending {
		like[p.like] = true
		held[p.key] = true
	}
	for id, g := range w.known {
		_, heldName := w.pending[g.Path]
		if !g.Gone && !like[id] && !held[fileKey{g.Dev, g.Ino}] && !heldName {
			if w.handOver(ctx, g) {
				delete(w.known, id)
				continue
			}
			g.Gone = true
			if err := w.store.UpdateGeneration(ctx, g); err != nil {
				return fmt.Errorf("watcher: mark %s gone: %w", g.Path, err)
			}
			w.known[id] = g
		}
	}
	return nil
}

// compareLogNames orders file names by their log's base name, then oldest
// first (logformat.LogName.Age), then by name.
func compareLogNames(a, b string) int {
	la, _ := logformat.ParseLogName(a)
	lb, _ := logformat.ParseLogName(b)
	if c := strings.Compare(la.Base, lb.Base); c != 0 {
		return c
	}
	if c := lb.Age() - la.Age(); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// rewritesHeld reports whether an open file is being rewritten in place
// (see rewriting).
func (w *Watcher) rewritesHeld() bool {
	for _, t := range w.tails {
		if t.held != nil {
			return true
		}
	}
	return false
}

// namesKey finds the identity of the file called name in present.
func namesKey(present map[fileKey]string, name string) (fileKey, bool) {
	for k, n := range present {
		if n == name {
			return k, true
		}
	}
	return fileKey{}, false
}

// openPending tries again to identify the pending files (those in names
// only, when names is not nil) and reads those it could.
func (w *Watcher) openPending(ctx context.Context, names map[string]bool) {
	var todo []string
	for name := range w.pending {
		if names == nil || names[name] {
			todo = append(todo, name)
		}
	}
	slices.Sort(todo)
	for _, name := range todo {
		if err := w.open(ctx, name); err != nil {
			w.log.Error("cannot follow log", "file", name, "err", err)
			continue
		}
		for k, t := range w.tails {
			if t.name == name && t.vanishedAt.IsZero() {
				w.drain(ctx, k, t)
			}
		}
	}
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
		if _, ok := logformat.ParseLogName(name); !ok {
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
		if !seen[name] {
			delete(w.badGz, name)
		}
		_, bad := w.badGz[name]
		if !seen[name] || files[name] && !bad {
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
	held := false // pending after this call; else no longer
	defer func() {
		if !held {
			delete(w.pending, name)
		}
	}()
	f, k, size, err := w.openFile(ctx, name)
	if f == nil || err != nil {
		return err
	}
	if t, ok := w.tails[k]; ok { // renamed between listing and open
		f.Close()
		t.vanishedAt = time.Time{}
		return nil
	}

	t, replaces, wait := w.adopt(ctx, f, k, name, size)
	if wait {
		f.Close() // not read until its identity is decided
		held = true
		return nil
	}
	if t == nil {
		// The log edited (a new version renamed over it, or rewritten
		// while nobody watched): its index follows the edit.
		for _, c := range w.editCandidates(name, k, replaces) {
			p, err := w.reconcile(ctx, f, k, name, c.g)
			if err != nil {
				f.Close()
				return err
			}
			if p != nil {
				if c.from != nil {
					w.closeTail(w.tails[*c.from])
					delete(w.tails, *c.from)
				}
				w.tails[k] = p
				return nil
			}
		}
	}
	if t == nil {
		// The generation this file replaces (the same inode, other
		// lines: rewritten while nobody watched, or a deleted log's
		// inode number reused) is kept, gone, not ended: its
		// fingerprints must still recognise a backup of it restored
		// later (protocol.md, section 8, Restore), as they do when the
		// daemon saw the old file leave.
		// But when a rotated copy holds its lines (emptied by
		// copytruncate while nobody watched, the copy already followed),
		// they are the copy's, as when the daemon sees the log emptied.
		if old, ok := w.known[replaces]; ok && replaces != 0 && !old.Gone && w.handOver(ctx, old) {
			delete(w.known, replaces)
		} else if ok && replaces != 0 && !old.Gone {
			old.Gone = true
			if err := w.store.UpdateGeneration(ctx, old); err != nil {
				f.Close()
				return fmt.Errorf("mark the generation %s replaces gone: %w", name, err)
			}
			w.known[replaces] = old
		}
		g := Generation{Path: name, Dev: k.dev, Ino: k.ino}
		id, err := w.store.CreateGeneration(ctx, g, 0)
		if err != nil {
			f.Close()
			return fmt.Errorf("new generation for %s: %w", name, err)
		}
		g.ID = id
		t = &tail{gen: g, f: f, name: name}
		w.log.Info("following new log", "file", name, "generation", id, "replaces", replaces)
	}
	w.tails[k] = t
	return nil
}

// openFile opens the file called name for reading: its content, identity
// and size. f is nil (and the reason recorded, see skip) when it is not a
// regular file, cannot be opened, or is a compressed log that cannot be
// read yet (being written, too large, damaged).
func (w *Watcher) openFile(ctx context.Context, name string) (f source, k fileKey, size int64, err error) {
	path := filepath.Join(w.cfg.Dir, name)
	// O_NOFOLLOW: a symlink swapped in after listing is refused;
	// O_NONBLOCK: a FIFO swapped in does not block the open.
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ENOENT):
		case errors.Is(err, syscall.ELOOP):
			w.skip(ctx, name, skipReason(fs.ModeSymlink))
		default:
			w.skip(ctx, name, "cannot open: "+err.Error())
		}
		return nil, k, 0, nil
	}
	file := os.NewFile(uintptr(fd), path)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		file.Close()
		return nil, k, 0, fmt.Errorf("fstat: %w", err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		file.Close()
		w.skip(ctx, name, "not a regular file")
		return nil, k, 0, nil
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		file.Close()
		return nil, k, 0, fmt.Errorf("set blocking: %w", err)
	}
	k = fileKey{uint64(st.Dev), st.Ino}
	if ln, _ := logformat.ParseLogName(name); !ln.Compressed {
		return plainFile{file}, k, st.Size, nil
	}
	fi, err := file.Stat() // the modification time, portably (Stat_t names it per system)
	if err != nil {
		file.Close()
		return nil, k, 0, fmt.Errorf("stat: %w", err)
	}
	bad := badGzip{key: k, size: st.Size, mtime: fi.ModTime().UnixNano()}
	if w.badGz[name] == bad {
		file.Close() // as it was: the reason is recorded
		return nil, k, 0, nil
	}
	gz, err := openGz(file, w.cfg.MaxGzipBytes)
	if err != nil {
		file.Close()
		w.badGz[name] = bad
		w.skip(ctx, name, "compressed log: "+err.Error())
		return nil, k, 0, nil
	}
	if _, ok := w.badGz[name]; ok {
		delete(w.badGz, name)
		w.skip(ctx, name, "")
	}
	return gz, k, gz.size, nil
}

// badGzip is a compressed log that could not be read, as it was then: it
// is tried again once it changes.
type badGzip struct {
	key   fileKey
	size  int64
	mtime int64 // nanoseconds since 1970
}

// adopt finds the generation whose committed bytes the file still holds.
// It returns nil when there is none, with the id of the generation the file
// replaces (same inode, other content: truncated or rewritten while nobody
// watched, or an inode reused) or 0. wait is true when the file is pending:
// it may be a copy of a generation still being written (it starts like it
// but is shorter), so it must not be read yet (see Config.Settle).
func (w *Watcher) adopt(ctx context.Context, f source, k fileKey, name string, size int64) (*tail, int64, bool) {
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
	first, hasFirst := firstLine(head)
	maybe := int64(0) // a generation this file may be an unfinished copy of
	for _, c := range cands {
		g := c.g
		if g.Offset <= 0 {
			continue
		}
		if g.Head.Len > len(head) {
			// Too short to compare heads: a copy being written, or
			// another file. A known, different first line settles it.
			fp, known := w.firsts[g.ID]
			if c.from != nil {
				fp, known = firstLine(c.from.head)
			}
			if !(known && hasFirst && fp != first) && maybe == 0 {
				maybe = g.ID
			}
			continue
		}
		if sum(head[:g.Head.Len]) != g.Head {
			continue
		}
		if size < g.Offset {
			// Starts alike but holds less than was indexed: being
			// written, or an older version.
			if maybe == 0 {
				maybe = g.ID
			}
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
		return t, 0, false
	}
	t, like := w.rotatedCopy(ctx, f, k, name, head, size)
	if t != nil {
		return t, 0, false
	}
	if maybe == 0 {
		maybe = like
	}
	if maybe != 0 {
		if w.hold(name, k, size, maybe) {
			return nil, 0, true
		}
		if _, isEditor := w.store.(Editor); isEditor {
			if len(w.editCandidates(name, k, replaces)) > 0 {
				return nil, replaces, false // an edit that made it shorter: open judges it
			}
		}
		if t := w.olderVersion(ctx, f, k, name, maybe, replaces); t != nil {
			return t, 0, false
		}
		w.log.Warn("log starts like an indexed one but holds less than was indexed from it, and other lines: reading it as a new log",
			"file", name, "size", size, "like_generation", maybe)
	}
	return nil, replaces, false
}

// hold records the file as pending and reports whether it should stay so:
// until its size has not changed for Settle (or it has been pending for
// maxPending), after which it is read as a new log.
func (w *Watcher) hold(name string, k fileKey, size int64, like int64) bool {
	now := w.now()
	p := w.pending[name]
	if p == nil || p.key != k {
		w.pending[name] = &pendingFile{key: k, size: size, since: now, first: now, like: like}
		w.log.Info("new log starts like an indexed one but is shorter: waiting for it to be written whole",
			"file", name, "size", size, "like_generation", like)
		return true
	}
	if !w.settled(p, size) {
		return true
	}
	delete(w.pending, name)
	return false
}

// settled records the size of a pending file and reports whether it is
// time to judge it: its size has not changed for Settle, or it has been
// pending for maxPending.
func (w *Watcher) settled(p *pendingFile, size int64) bool {
	now := w.now()
	if size != p.size {
		p.size, p.since = size, now
	}
	return now.Sub(p.since) >= w.cfg.Settle || now.Sub(p.first) >= maxPending
}

// rewriting is called when an open file no longer holds its generation's
// committed bytes. A file rewritten in place with the same start (cp of a
// backup over it, an editor saving without renaming) holds fewer bytes
// while it is written: it is left alone (wait) until it holds the
// committed bytes again (same: read on) or its size settles (neither: a
// new generation starts).
func (w *Watcher) rewriting(t *tail) (wait, same bool) {
	size, err := t.f.Size()
	if err != nil {
		return false, false
	}
	g := t.gen
	if size >= g.Offset {
		t.held = nil
		return false, t.load() == nil
	}
	head := readUpTo(t.f, FingerprintSize)
	if len(head) >= g.Head.Len {
		if sum(head[:g.Head.Len]) != g.Head {
			t.held = nil
			return false, false
		}
	} else if fp, ok := firstLine(t.head); ok {
		if nfp, nok := firstLine(head); nok && nfp != fp {
			t.held = nil
			return false, false
		}
	}
	if t.held == nil {
		now := w.now()
		t.held = &pendingFile{size: size, since: now, first: now}
		w.log.Info("log shrank but starts as before: waiting for it to be rewritten whole",
			"file", t.name, "generation", g.ID, "size", size, "offset", g.Offset)
		return true, false
	}
	if !w.settled(t.held, size) {
		return true, false
	}
	t.held = nil
	return false, false
}

// firstLine fingerprints the first line of a file from its head: the bytes
// up to and including the first newline, or the whole head when it is full
// (FingerprintSize bytes) without one. ok is false when the head holds no
// complete first line yet.
func firstLine(head []byte) (Fingerprint, bool) {
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		return sum(head[:i+1]), true
	}
	if len(head) >= FingerprintSize {
		return sum(head[:FingerprintSize]), true
	}
	return Fingerprint{}, false
}

// readUpTo returns the first n bytes of f, fewer if it is shorter or
// unreadable.
func readUpTo(f io.ReaderAt, n int) []byte {
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
	w.openPending(ctx, names)
}

// drain reads one file to its end and commits what it read. Errors are
// logged: the next pass tries again from the committed offset.
func (w *Watcher) drain(ctx context.Context, k fileKey, t *tail) {
	gz, compressed := t.f.(*gzFile)
	if compressed {
		if t.sealed && !gz.changed() {
			return // read to its end, and unchanged
		}
		t.sealed = false
		// Read to its end: the content is released until it changes.
		defer func() {
			if t.f == gz && !t.sealed && t.pos == gz.size && t.gen.Offset == t.lineStart {
				t.sealed = true
				gz.release()
			}
		}()
	}
	for ctx.Err() == nil {
		if err := t.check(); err != nil {
			if !errors.Is(err, errRewritten) {
				w.log.Error("cannot check log", "file", t.name, "err", err)
				return
			}
			wait, same := w.rewriting(t)
			if wait {
				return
			}
			if same {
				w.log.Info("log rewritten in place with the same lines; continuing", "file", t.name, "generation", t.gen.ID)
				continue
			}
			if err := w.restart(ctx, t); err != nil {
				w.log.Error("cannot start new generation", "file", t.name, "err", err)
				return
			}
			// Checked again: an edit followed may have been changed
			// again since it was compared (reconcile).
			continue
		}
		t.held = nil
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
				w.commitFailed(t, b, err)
			}
			w.reload(t)
			return
		}
		if w.failing > 0 {
			w.log.Info("commits work again", "failed_attempts", w.failing)
			w.failing, w.failLogged = 0, time.Time{}
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

// commitFailed logs a failed commit (a full disk, a locked database): the
// first at once, then at most one every failLogEvery with the count, as
// every write to a log retries while the cause lasts. The lines stay in
// the logs and are read again from the committed offset.
func (w *Watcher) commitFailed(t *tail, b Batch, err error) {
	w.failing++
	now := w.now()
	if !w.failLogged.IsZero() && now.Sub(w.failLogged) < failLogEvery {
		return
	}
	w.failLogged = now
	w.log.Error("cannot commit lines; they stay in the log and are read again (retrying)", "file", t.name,
		"from", t.gen.Offset, "to", b.Gen.Offset, "failed_attempts", w.failing, "err", err)
}

// failLogEvery spaces the logs of commits failing in a row.
const failLogEvery = 30 * time.Second

// reload forgets uncommitted reads of t after a failure.
func (w *Watcher) reload(t *tail) {
	if err := t.load(); err != nil {
		w.log.Warn("log changed under a failed read", "file", t.name, "err", err)
	}
}

// restart ends t's generation (the file was truncated or rewritten): the
// same log edited goes on as the edit says (reconcile), another log starts
// a new generation from offset 0 on the same file.
func (w *Watcher) restart(ctx context.Context, t *tail) error {
	old := t.gen
	if p, err := w.reconcile(ctx, t.f, fileKey{old.Dev, old.Ino}, t.name, old); err != nil {
		return err
	} else if p != nil {
		p.vanishedAt = t.vanishedAt
		*t = *p
		return nil
	}
	// A store that cannot follow edits: an older copy written over it
	// (cp of a backup) holds lines that were indexed; only what comes
	// after them is new. (For an Editor, such a copy is an edit.)
	if _, editor := w.store.(Editor); !editor {
		if p := w.olderVersion(ctx, t.f, fileKey{old.Dev, old.Ino}, t.name, old.ID, old.ID); p != nil {
			p.vanishedAt = t.vanishedAt
			*t = *p
			return nil
		}
	}
	// Emptied by copytruncate (cp x.jsonl x.jsonl.1 && : > x.jsonl): the
	// copy holds the old lines now.
	w.handOver(ctx, old)
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
	if w.handOver(ctx, g) {
		w.closeTail(t)
		delete(w.tails, k)
		return
	}
	g.Gone = true
	if err := w.store.UpdateGeneration(ctx, g); err != nil {
		w.log.Error("cannot mark log gone", "file", t.name, "err", err)
		return
	}
	if fp, ok := firstLine(t.head); ok {
		w.firsts[g.ID] = fp
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
