package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/praxis-os/continuity/workspace"
)

// lockPoll is how often Serve tries the lock while another process holds
// the workspace (WaitLock).
const lockPoll = time.Second

// Serve is the daemon: it opens the engine on ws and runs it until ctx
// ends (a normal end: nil). When the cache folder is deleted or replaced
// under it, it starts again on fresh files, rebuilding a deleted index
// from the logs, at most maxCacheRestarts times a minute. When another
// process holds the workspace, it fails (ErrLocked), or with waitLock
// waits and takes over when that process exits.
func Serve(ctx context.Context, ws workspace.Layout, opts Options, waitLock bool) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	log := opts.Logger
	waiting := false
	var restarts []time.Time // when the cache was found deleted, recently
	for {
		e, err := Open(ws, opts)
		if err == nil {
			if waiting {
				log.Info("took over the workspace")
			}
			err = e.Run(ctx)
			if !errors.Is(err, ErrCacheGone) {
				return err
			}
			// The cache folder (index, lock or socket) was deleted or
			// replaced: start again on fresh files. A deleted index is
			// rebuilt from the logs, which hold every line.
			now := time.Now()
			restarts = append(restarts, now)
			for len(restarts) > 0 && now.Sub(restarts[0]) > time.Minute {
				restarts = restarts[1:]
			}
			if len(restarts) > maxCacheRestarts {
				return fmt.Errorf("%w; it happened %d times within a minute: stopping", err, len(restarts))
			}
			log.Error("the daemon's files were deleted or replaced under it; starting again (a deleted index is rebuilt from the logs)", "why", err)
			continue
		}
		if len(restarts) > 0 && errors.Is(err, ErrLocked) {
			return fmt.Errorf("the cache folder was deleted under this daemon and another process took over the workspace since: this daemon stops, the other one serves (%w)", err)
		}
		if !waitLock || !errors.Is(err, ErrLocked) {
			return err
		}
		if !waiting {
			waiting = true
			log.Info("waiting for the workspace: another process indexes it", "why", err)
		}
		select {
		case <-ctx.Done():
			return nil // stopped while waiting: a normal end
		case <-time.After(lockPoll):
		}
	}
}
