// Package rejectlog is the view that writes the daemon's new rejected
// lines to its log (see Log).
package rejectlog

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/index"
)

// Log writes the daemon's new rejected lines to its log (slog, at
// warn level, with file:line, kind and reason), so that a producer's
// mistakes show where the daemon runs, not only in `continuity rejects`.
// It is rate-limited: at most rejectLogBurst lines per rejectLogWindow;
// the rest are counted and summed up once per window, pointing to
// `continuity rejects`. It is a view of the rejects the index records,
// which follows them from where they stood when it started.
type Log struct {
	db   *index.DB
	log  *slog.Logger
	kick follow.Kick

	mu          sync.Mutex // held by a step; guards what follows
	started     bool       // last is known
	off         bool       // the rejects could not be read at the start: not followed
	last        int64      // the last reject read
	windowStart time.Time
	logged      int // lines logged in this window
	suppressed  int // lines not logged in this window
}

const (
	rejectLogBurst  = 20
	rejectLogWindow = time.Minute
	rejectLogPage   = 500
)

var _ follow.View = (*Log)(nil)

func New(db *index.DB, log *slog.Logger) *Log {
	return &Log{db: db, log: log, kick: follow.NewKick()}
}

// Name is the view's name: "rejects".
func (r *Log) Name() string { return "rejects" }

// Notify says lines were committed (maybe rejects). It never blocks.
func (r *Log) Notify() { r.kick.Notify() }

// Run logs the rejects recorded after it started, until ctx ends.
func (r *Log) Run(ctx context.Context) error {
	p := follow.Policy{IdlePoll: rejectLogWindow / 4, MinBackoff: rejectLogWindow / 4, MaxBackoff: rejectLogWindow / 4, KickDuringBackoff: true,
		OnError: func(err error, _ time.Duration, _ int) {
			r.log.Warn("cannot read rejected lines", "err", err)
		}}
	return follow.Loop(ctx, r.kick, p, r.step)
}

// step logs the rejects recorded since the last step, within the rate
// limit; the first step only notes where they stand.
func (r *Log) step(ctx context.Context) (more bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		r.started = true
		if _, r.last, err = r.db.RejectsSince(ctx, -1, 0); err != nil {
			r.off = true
			r.log.Warn("cannot follow rejected lines; they are still listed by `continuity rejects`", "err", err)
		}
		r.windowStart = time.Now()
		return false, nil
	}
	if r.off {
		return false, nil
	}
	if now := time.Now(); now.Sub(r.windowStart) >= rejectLogWindow {
		if r.suppressed > 0 {
			r.log.Warn("more lines were rejected than logged; see `continuity rejects`", "not_logged", r.suppressed, "window", rejectLogWindow)
		}
		r.windowStart, r.logged, r.suppressed = now, 0, 0
	}
	for {
		rs, next, err := r.db.RejectsSince(ctx, r.last, rejectLogPage)
		if err != nil {
			return false, err
		}
		r.last = next
		for _, rj := range rs {
			if rj.Kind == index.KindDuplicate {
				// A producer's retry: listed by `rejects`, no warning.
				r.log.Debug("line replayed; indexed once", "at", rj.File+":"+strconv.FormatInt(rj.Line, 10), "reason", rj.Reason)
				continue
			}
			if r.logged >= rejectLogBurst {
				r.suppressed++
				continue
			}
			r.logged++
			r.log.Warn("line rejected", "at", rj.File+":"+strconv.FormatInt(rj.Line, 10), "kind", rj.Kind, "reason", rj.Reason)
		}
		if len(rs) < rejectLogPage {
			return false, nil
		}
	}
}

// Remove: the index keeps the rejects of forgotten sessions' lines
// (without their text) and moves or deletes an edited log's rejects with
// its lines; the log holds nothing to remove.
func (r *Log) Remove(context.Context, follow.Removal) error { return nil }

// Status is the reject log's state.
type Status struct {
	Following bool `json:"following"`
	Logged    int  `json:"logged"`     // in the current window
	NotLogged int  `json:"not_logged"` // in the current window, over the rate limit
}

// Report is the reject log's state.
func (r *Log) Report(context.Context) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Status{Following: r.started && !r.off, Logged: r.logged, NotLogged: r.suppressed}
}
