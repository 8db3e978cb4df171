package watcher

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// notifier turns fsnotify events into hints for the watcher's loop: which
// files were written (read just those), or that the folder changed (rescan).
// It is only a hint: the periodic rescan alone guarantees convergence, so an
// overflow, an error or a lost watch just asks for a rescan.
type notifier struct {
	fw     *fsnotify.Watcher
	dir    string
	parent string
	log    *slog.Logger
	wake   chan struct{} // one pending wake-up at most

	mu      sync.Mutex
	scan    bool
	names   map[string]bool
	watched fileKey // identity of the folder the watch is on
	done    chan struct{}
}

func startNotifier(ctx context.Context, dir string, log *slog.Logger) (*notifier, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	n := &notifier{
		fw: fw, dir: filepath.Clean(dir), parent: filepath.Dir(filepath.Clean(dir)), log: log,
		wake: make(chan struct{}, 1), names: map[string]bool{}, done: make(chan struct{}),
	}
	// The parent is watched too, to notice the folder being recreated.
	if err := fw.Add(n.parent); err != nil {
		log.Debug("cannot watch parent folder", "dir", n.parent, "err", err)
	}
	n.rewatch()
	go n.loop(ctx)
	return n, nil
}

// rewatch (re)adds the watch on the folder if it is missing or the folder
// was replaced (rm -rf and mkdir).
func (n *notifier) rewatch() {
	var st syscall.Stat_t
	if err := syscall.Stat(n.dir, &st); err != nil {
		return
	}
	k := fileKey{uint64(st.Dev), st.Ino}
	n.mu.Lock()
	same := n.watched == k
	n.mu.Unlock()
	if same {
		return
	}
	_ = n.fw.Remove(n.dir) // the old watch may be gone already
	if err := n.fw.Add(n.dir); err != nil {
		n.log.Warn("cannot watch folder; relying on rescans", "dir", n.dir, "err", err)
		return
	}
	n.mu.Lock()
	n.watched = k
	n.mu.Unlock()
}

func (n *notifier) loop(ctx context.Context) {
	defer close(n.done)
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-n.fw.Events:
			if !ok {
				n.log.Warn("fsnotify stopped; relying on rescans")
				return
			}
			n.event(ev)
		case err, ok := <-n.fw.Errors:
			if !ok {
				n.log.Warn("fsnotify stopped; relying on rescans")
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				n.log.Warn("fsnotify queue overflowed; rescanning")
			} else {
				n.log.Warn("fsnotify error; rescanning", "err", err)
			}
			n.signal(true, "")
		}
	}
}

func (n *notifier) event(ev fsnotify.Event) {
	path := filepath.Clean(ev.Name)
	switch {
	case path == n.dir:
		// The folder itself was created, removed or renamed.
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			n.mu.Lock()
			n.watched = fileKey{}
			n.mu.Unlock()
		}
		n.signal(true, "")
	case filepath.Dir(path) != n.dir:
		// Something else in the parent folder.
	case ev.Op == fsnotify.Write:
		n.signal(false, filepath.Base(path))
	case ev.Op == fsnotify.Chmod:
		// Permissions do not change content; the rescan sees any effect.
	default:
		n.signal(true, "")
	}
}

func (n *notifier) signal(scan bool, name string) {
	n.mu.Lock()
	if scan {
		n.scan = true
	} else {
		n.names[name] = true
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// takeScan reports and clears a pending rescan request.
func (n *notifier) takeScan() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.scan
	n.scan = false
	return s
}

// takeNames returns and clears the names written since the last call.
func (n *notifier) takeNames() map[string]bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	names := n.names
	n.names = map[string]bool{}
	return names
}

func (n *notifier) close() {
	n.fw.Close()
	<-n.done
}
