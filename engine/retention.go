package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/praxis-os/continuity/index"
)

// Retention: sessions whose latest event is older than a duration are
// forgotten, by hand (forget --older-than) or by the daemon (daemon
// --retain, CONTINUITY_RETAIN). It is a forget like any other (Forget): the
// sessions leave the index and every view of it, and the forget is
// recorded beside the logs, so a rebuild or an import keeps their old
// lines out. A session is forgotten whole once its latest event is older
// than the duration (never cut in the middle); new lines in it later are
// new work, indexed as usual.

// EnvRetain is the environment variable that sets the daemon's retention
// (the --retain flag wins).
const EnvRetain = "CONTINUITY_RETAIN"

// retainPeriod bounds how long the daemon goes without applying its
// retention when no event is stored: retention/24, at least a minute, at
// most an hour.
func retainPeriod(keep time.Duration) time.Duration {
	return min(max(keep/24, time.Minute), time.Hour)
}

// ParseAge reads a duration as users write it: Go's (72h, 90m, 1h30m) or
// whole days and weeks (30d, 2w); it must be positive.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	var err error
	switch {
	case s == "":
		return 0, errors.New("no duration: give one such as 30d, 2w or 72h")
	case strings.HasSuffix(s, "d"), strings.HasSuffix(s, "w"):
		unit := 24 * time.Hour
		if strings.HasSuffix(s, "w") {
			unit *= 7
		}
		n, perr := strconv.Atoi(s[:len(s)-1])
		if perr != nil || n > 100000 {
			err = perr
			if err == nil {
				err = errors.New("too long")
			}
		}
		d = time.Duration(n) * unit
	default:
		d, err = time.ParseDuration(s)
	}
	if err != nil {
		return 0, fmt.Errorf("duration %q: want days (30d), weeks (2w) or hours and minutes (72h, 90m)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("duration %q: must be positive", s)
	}
	return d, nil
}

// MinRetention is the shortest age forget --older-than and daemon
// --retain take: "6m" reads as six months to many, and is six minutes to
// ParseAge; a retention of minutes forgets almost everything, the
// daemon's without asking.
const MinRetention = time.Hour

// ParseRetention is ParseAge for forgetting by age: at least MinRetention.
func ParseRetention(s string) (time.Duration, error) {
	d, err := ParseAge(s)
	if err != nil {
		return 0, err
	}
	if d < MinRetention {
		return 0, fmt.Errorf("duration %q is %v: forgetting by age takes an hour or more (write months as days: 180d; minutes: 90m)", strings.TrimSpace(s), d)
	}
	return d, nil
}

// applyRetention forgets the sessions whose latest event is older than
// keep, now; it logs what it forgot.
func (e *Engine) applyRetention(ctx context.Context, keep time.Duration) error {
	before := time.Now().Add(-keep)
	resp, err := e.Forget(ctx, ForgetRequest{Before: before})
	if err != nil {
		return err
	}
	e.retention.passed(len(resp.Sessions))
	if len(resp.Sessions) > 0 {
		e.log.Info("retention: forgot the sessions whose latest event is older than the retention", "retain", keep,
			"before", before.UTC().Format(time.RFC3339), "sessions", len(resp.Sessions), "events", resp.Events, "recorded", resp.Recorded)
	}
	return nil
}

// retainPoll is how often the daemon looks whether events were stored
// since its last pass: a session older than the retention that arrives
// (an import, a log copied in, the first catch-up) goes within seconds,
// not at the next period.
const retainPoll = 2 * time.Second

// retainPassed, when set (tests), is called after each retention pass,
// before the pass is recorded.
var retainPassed func()

// retain applies the retention at start, whenever events were stored
// since the last pass (looked at every retainPoll), and at least every
// retainPeriod (sessions age) until ctx ends. A failure is logged and
// tried again next time: the daemon keeps running.
func (e *Engine) retain(ctx context.Context) error {
	keep := e.opts.Retain
	period := retainPeriod(keep)
	e.log.Info("retention on: sessions whose latest event is older than this are forgotten", "retain", keep, "every", period)
	t := time.NewTicker(retainPoll)
	defer t.Stop()
	var last index.ChangeMark
	var lastAt time.Time
	for {
		mark, err := e.db.ChangeMark(ctx)
		if err == nil && (lastAt.IsZero() || mark != last || time.Since(lastAt) >= period) {
			if err = e.applyRetention(ctx, keep); err == nil {
				if retainPassed != nil {
					retainPassed()
				}
				// The mark read before the pass: events stored during it
				// (the first catch-up runs beside it) move the mark and
				// bring the next pass. (Read after the pass, it took them
				// in, and an old session stored then stayed up to an hour.)
				// A pass that forgot sessions moves the mark itself: one
				// more pass follows, which finds nothing.
				last, lastAt = mark, time.Now()
			}
		}
		if err != nil && ctx.Err() == nil {
			e.log.Warn("retention: forgetting old sessions failed; will try again", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RetentionStatus is the daemon's retention, for status ("retention_status"
// on the socket): Retain is 0 when it keeps everything.
type RetentionStatus struct {
	Retain time.Duration `json:"retain_ns"`
	// LastPass is when it last looked for old sessions (zero: not yet);
	// Forgotten counts the sessions it forgot since the daemon started.
	LastPass  time.Time `json:"last_pass,omitzero"`
	Forgotten int64     `json:"forgotten_sessions"`
}

// retentionState records the daemon's retention passes.
type retentionState struct {
	mu        sync.Mutex
	lastPass  time.Time
	forgotten int64
}

func (r *retentionState) passed(forgotten int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastPass = time.Now()
	r.forgotten += int64(forgotten)
}

func (r *retentionState) report(keep time.Duration) RetentionStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RetentionStatus{Retain: keep, LastPass: r.lastPass, Forgotten: r.forgotten}
}
