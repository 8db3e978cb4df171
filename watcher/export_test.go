package watcher

import "context"

// Step is one pass of Run, for tests that must order what the watcher sees
// against what happens to the files: a scan (renames, files that left,
// new files), every open file read to its end, and those that left the
// folder more than Grace ago closed.
func (w *Watcher) Step(ctx context.Context) error {
	if w.known == nil {
		if err := w.load(ctx); err != nil {
			return err
		}
	}
	if err := w.scan(ctx); err != nil {
		return err
	}
	if err := w.drainAll(ctx); err != nil {
		return err
	}
	w.expire(ctx)
	return nil
}

// Close closes the files a Step opened.
func (w *Watcher) Close() { w.closeAll() }
