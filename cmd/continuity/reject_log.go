package main

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/praxis-os/continuity/index"
)

// rejectLog writes the daemon's new rejected lines to its log (slog, at
// warn level, with file:line, kind and reason), so that a producer's
// mistakes show where the daemon runs, not only in `continuity rejects`.
// It is rate-limited: at most rejectLogBurst lines per rejectLogWindow;
// the rest are counted and summed up once per window, pointing to
// `continuity rejects`.
type rejectLog struct {
	db   *index.DB
	log  *slog.Logger
	kick chan struct{}
}

const (
	rejectLogBurst  = 20
	rejectLogWindow = time.Minute
)

func newRejectLog(db *index.DB, log *slog.Logger) *rejectLog {
	return &rejectLog{db: db, log: log, kick: make(chan struct{}, 1)}
}

// Notify says lines were committed (maybe rejects). It never blocks.
func (r *rejectLog) Notify() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run logs the rejects recorded after it started, until ctx ends.
func (r *rejectLog) Run(ctx context.Context) error {
	_, last, err := r.db.RejectsSince(ctx, -1, 0)
	if err != nil {
		r.log.Warn("cannot follow rejected lines; they are still listed by `continuity rejects`", "err", err)
		return nil
	}
	windowStart, logged, suppressed := time.Now(), 0, 0
	tick := time.NewTicker(rejectLogWindow / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.kick:
		case <-tick.C:
		}
		if now := time.Now(); now.Sub(windowStart) >= rejectLogWindow {
			if suppressed > 0 {
				r.log.Warn("more lines were rejected than logged; see `continuity rejects`", "not_logged", suppressed, "window", rejectLogWindow)
			}
			windowStart, logged, suppressed = now, 0, 0
		}
		for {
			rs, next, err := r.db.RejectsSince(ctx, last, 500)
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("cannot read rejected lines", "err", err)
				}
				break
			}
			last = next
			for _, rj := range rs {
				if logged >= rejectLogBurst {
					suppressed++
					continue
				}
				logged++
				r.log.Warn("line rejected", "at", rj.File+":"+strconv.FormatInt(rj.Line, 10), "kind", rj.Kind, "reason", rj.Reason)
			}
			if len(rs) < 500 {
				break
			}
		}
	}
}
