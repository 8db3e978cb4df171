// Package follow keeps the derived views of the event store up to date.
//
// The index's events table is continuity's source of truth; everything
// else it keeps is derived from it and follows it: the FTS5 full-text
// index (follow/fulltext), the bm25 engine (follow/lexicon), the vectors
// (follow/embedding) and the daemon's log of rejected lines
// (follow/rejectlog), assembled by the engine in one place
// (engine/views.go, which says how to add one). Each is
// a View: told when events are committed (Notify), it takes them in one
// step at a time (Loop), removes what it holds of events the index
// deleted (Remove: the sessions `forget` removed, the lines an edit of a
// log changed or removed), and says how it stands (Report). The daemon
// runs every view the same way, and forget and edits go through every
// view, so a new view cannot be left out of any of them.
package follow

import (
	"context"
	"math/rand/v2"
	"time"
)

// A View is something derived from the index's events table that follows
// it.
type View interface {
	// Name names the view in logs and on the daemon's socket, where its
	// Report answers the call "<Name>_status".
	Name() string
	// Notify says that events were committed or deleted: the view takes
	// them in soon. It never blocks.
	Notify()
	// Run follows the events table until ctx ends, then returns nil; an
	// error means the view cannot go on.
	Run(ctx context.Context) error
	// Remove removes what the view holds of events the index has just
	// deleted (see Removal): at once, or in its next step.
	Remove(ctx context.Context, r Removal) error
	// Report is how the view stands (what it holds, how far behind it
	// is, its last failure), JSON-encodable.
	Report(ctx context.Context) any
}

// Removal is what the index deleted, for the views to follow.
type Removal struct {
	// Sessions were forgotten (`continuity forget`): every event of
	// theirs is gone, and so must be every trace of them a view keeps,
	// in memory and in its files.
	Sessions []string
	// Rows are the row ids of events deleted because the lines they were
	// read from were changed or removed by an edit of their log (the
	// changed lines come back as new events): their text, words and
	// vectors must leave the view.
	Rows []int64
}

// Kick wakes a Loop up; any number of Notify calls before the Loop
// looks count as one. Make it with NewKick.
type Kick chan struct{}

// NewKick returns a Kick.
func NewKick() Kick { return make(Kick, 1) }

// Notify wakes the Loop up. It never blocks.
func (k Kick) Notify() {
	select {
	case k <- struct{}{}:
	default:
	}
}

// Step takes the next events into a view. more is true when there may be
// more to do at once; false when it is caught up (or did all it can for
// now).
type Step func(ctx context.Context) (more bool, err error)

// Policy says when a Loop steps.
type Policy struct {
	// IdlePoll: a caught-up view steps this often without a kick, a
	// safety net under Notify.
	IdlePoll time.Duration
	// MinBackoff and MaxBackoff bound the wait after a failed step,
	// which doubles from one failure to the next; a success resets it.
	MinBackoff, MaxBackoff time.Duration
	// Jitter spreads each wait after a failure by up to ± this fraction
	// of it (0.25: ±25%), within [MinBackoff, MaxBackoff].
	Jitter float64
	// KickDuringBackoff lets a kick end a wait after a failure early (a
	// local failure, such as a full disk, may be gone by the next
	// commit); without it, a failing remote server is not asked again
	// before the wait is over, however many commits come.
	KickDuringBackoff bool
	// OnError hears each failure, before the wait: the step's error, the
	// wait, and how many failures in a row this is.
	OnError func(err error, retryIn time.Duration, attempt int)
}

// Loop runs step until ctx ends, then returns nil: at once while it
// reports more, else when kicked or after IdlePoll, and after a failure
// with a growing pause (Policy).
func Loop(ctx context.Context, kick Kick, p Policy, step Step) error {
	return LoopUntil(ctx, kick, p, step, nil)
}

// LoopUntil is Loop until finish is closed (nil: never): it then steps
// until a step begun after the close reports nothing more, and returns
// nil, or the first error once finish is closed (no retry). A backfill
// closes finish after its last commit, so that what is in progress is
// completed rather than thrown away.
func LoopUntil(ctx context.Context, kick Kick, p Policy, step Step, finish <-chan struct{}) error {
	b := backoff{p: p}
	for {
		finishing := closed(finish)
		more, err := step(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if closed(finish) && (err != nil || finishing && !more) {
			return err
		}
		wait, wake := p.IdlePoll, kick
		switch {
		case err != nil:
			wait = b.next()
			if p.OnError != nil {
				p.OnError(err, wait, b.attempt)
			}
			if !p.KickDuringBackoff {
				wake = nil
			}
		case more:
			b.reset()
			continue
		default:
			b.reset()
		}
		if !sleep(ctx, wait, wake, finish) {
			return nil
		}
	}
}

// Drain runs step until it reports nothing more, for a one-shot catch-up.
// A failed step is retried after the Policy's pause, up to attempts steps
// in a row in all; then, or when ctx ends, Drain returns the error.
func Drain(ctx context.Context, p Policy, attempts int, step Step) error {
	b := backoff{p: p}
	for {
		more, err := step(ctx)
		switch {
		case err != nil:
			if ctx.Err() != nil || b.attempt+1 >= attempts {
				return err
			}
			d := b.next()
			if p.OnError != nil {
				p.OnError(err, d, b.attempt)
			}
			if !sleep(ctx, d, nil, nil) {
				return ctx.Err()
			}
		case more:
			b.reset()
		default:
			return nil
		}
	}
}

// backoff is the growing pause after failures: MinBackoff, doubling up to
// MaxBackoff, with the Policy's jitter.
type backoff struct {
	p       Policy
	attempt int // failures in a row
}

func (b *backoff) next() time.Duration {
	lo, hi := b.p.MinBackoff, b.p.MaxBackoff
	d := lo << min(b.attempt, 30)
	if d > hi || d <= 0 {
		d = hi
	}
	b.attempt++
	if b.p.Jitter > 0 {
		d = time.Duration(float64(d) * (1 - b.p.Jitter + 2*b.p.Jitter*rand.Float64()))
		d = min(max(d, lo), hi)
	}
	return d
}

func (b *backoff) reset() { b.attempt = 0 }

// sleep waits for d, a kick (nil: none), finish (nil: never) or the end of
// ctx; it reports whether ctx is still alive.
func sleep(ctx context.Context, d time.Duration, kick Kick, finish <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-kick:
	case <-finish:
	case <-ctx.Done():
		return false
	}
	return true
}

// closed reports whether c is closed (a nil c never is).
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
