package follow

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      Policy
		want   []time.Duration // exact waits, without jitter
		capped time.Duration   // with jitter: the wait after 12 failures is at least this
	}{
		{"doubling to the cap", Policy{MinBackoff: time.Second, MaxBackoff: 30 * time.Second},
			[]time.Duration{1, 2, 4, 8, 16, 30, 30}, 0},
		{"one wait", Policy{MinBackoff: 15 * time.Second, MaxBackoff: 15 * time.Second},
			[]time.Duration{15, 15, 15}, 0},
		{"jittered", Policy{MinBackoff: time.Second, MaxBackoff: time.Minute, Jitter: 0.25}, nil, 45 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &backoff{p: tc.p}
			for i, w := range tc.want {
				if d := b.next(); d != w*time.Second {
					t.Errorf("failure %d: wait %s, want %s", i+1, d, w*time.Second)
				}
			}
			if tc.capped == 0 {
				return
			}
			prev := time.Duration(0)
			for i := range 12 {
				d := b.next()
				if d < tc.p.MinBackoff || d > tc.p.MaxBackoff {
					t.Fatalf("failure %d: %s out of [%s, %s]", i+1, d, tc.p.MinBackoff, tc.p.MaxBackoff)
				}
				if i < 5 && d < prev/2 {
					t.Errorf("failure %d: %s after %s, not growing", i+1, d, prev)
				}
				prev = d
			}
			if prev < tc.capped {
				t.Errorf("after 12 failures the wait is %s, want near the cap", prev)
			}
			b.reset()
			if d := b.next(); d > 1250*time.Millisecond {
				t.Errorf("after reset: %s", d)
			}
		})
	}
}

// script is a Step that plays a list of outcomes, then reports caught up;
// each call is recorded.
type script struct {
	mu    sync.Mutex
	plays []outcome
	calls int
	seen  chan struct{} // a value per call
}

type outcome struct {
	more bool
	err  error
}

func newScript(plays ...outcome) *script {
	return &script{plays: plays, seen: make(chan struct{}, 100)}
}

func (s *script) step(context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.seen <- struct{}{}
	if len(s.plays) == 0 {
		return false, nil
	}
	o := s.plays[0]
	s.plays = s.plays[1:]
	return o.more, o.err
}

func (s *script) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.seen:
	case <-time.After(10 * time.Second):
		t.Fatalf("no step: %s", what)
	}
}

// quiet checks that no step comes for a while.
func (s *script) quiet(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.seen:
		t.Fatalf("a step came: %s", what)
	case <-time.After(50 * time.Millisecond):
	}
}

var errStep = errors.New("disk full")

// TestLoop: steps at once while there is more, and on a kick; after a failure, waits the backoff
// (which a kick ends only when the policy says so); returns nil when ctx
// ends.
func TestLoop(t *testing.T) {
	for _, kickEnds := range []bool{false, true} {
		var mu sync.Mutex
		var failures []int
		p := Policy{IdlePoll: time.Hour, MinBackoff: time.Hour, MaxBackoff: time.Hour, KickDuringBackoff: kickEnds,
			OnError: func(err error, retryIn time.Duration, attempt int) {
				mu.Lock()
				failures = append(failures, attempt)
				mu.Unlock()
			}}
		s := newScript(outcome{more: true}, outcome{more: true}, outcome{}, outcome{err: errStep}, outcome{})
		kick := NewKick()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- Loop(ctx, kick, p, s.step) }()
		for i := range 3 {
			s.wait(t, "more to do: at once, step "+string(rune('1'+i)))
		}
		s.quiet(t, "caught up, IdlePoll is an hour")
		kick.Notify()
		s.wait(t, "kicked")
		s.quiet(t, "failed, backing off")
		kick.Notify()
		if kickEnds {
			s.wait(t, "a kick ends the backoff")
		} else {
			s.quiet(t, "a kick does not end the backoff")
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Loop: %v", err)
		}
		mu.Lock()
		if len(failures) != 1 || failures[0] != 1 {
			t.Errorf("OnError heard %v, want one first failure", failures)
		}
		mu.Unlock()
	}
}

// TestKick: kicks before the loop looks count as one, and never block.
func TestKick(t *testing.T) {
	k := NewKick()
	for range 3 {
		k.Notify()
	}
	if len(k) != 1 {
		t.Errorf("%d kicks pending, want 1", len(k))
	}
}

// TestLoopIdlePoll: a caught-up loop steps again after IdlePoll without
// a kick, and after a failure once the backoff is over.
func TestLoopIdlePoll(t *testing.T) {
	p := Policy{IdlePoll: 5 * time.Millisecond, MinBackoff: 5 * time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	s := newScript(outcome{}, outcome{err: errStep}, outcome{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Loop(ctx, NewKick(), p, s.step)
	for _, what := range []string{"first", "after IdlePoll", "after the backoff"} {
		s.wait(t, what)
	}
}

// TestLoopUntil: once finish is closed, the loop completes what is in
// progress and returns; an error then is returned, not retried.
func TestLoopUntil(t *testing.T) {
	p := Policy{IdlePoll: time.Hour, MinBackoff: time.Hour, MaxBackoff: time.Hour, KickDuringBackoff: true}
	for _, tc := range []struct {
		name  string
		plays []outcome
		err   error
		calls int
	}{
		{"caught up", nil, nil, 2},
		{"more after the close", []outcome{{}, {more: true}, {more: true}}, nil, 4},
		{"fails after the close", []outcome{{}, {err: errStep}}, errStep, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(tc.plays...)
			finish := make(chan struct{})
			done := make(chan error)
			go func() { done <- LoopUntil(context.Background(), NewKick(), p, s.step, finish) }()
			s.wait(t, "first step")
			close(finish)
			if err := <-done; !errors.Is(err, tc.err) {
				t.Errorf("LoopUntil: %v, want %v", err, tc.err)
			}
			if s.calls != tc.calls {
				t.Errorf("%d steps, want %d", s.calls, tc.calls)
			}
		})
	}
}

// TestDrain: steps until caught up; a failure is retried up to attempts
// steps in a row, then returned.
func TestDrain(t *testing.T) {
	p := Policy{MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	for _, tc := range []struct {
		name  string
		plays []outcome
		err   error
		calls int
	}{
		{"caught up", []outcome{{more: true}, {more: true}}, nil, 3},
		{"recovers", []outcome{{err: errStep}, {err: errStep}, {more: true}, {err: errStep}}, nil, 5},
		{"gives up", []outcome{{err: errStep}, {err: errStep}, {err: errStep}, {err: errStep}}, errStep, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(tc.plays...)
			if err := Drain(context.Background(), p, 4, s.step); !errors.Is(err, tc.err) {
				t.Errorf("Drain: %v, want %v", err, tc.err)
			}
			if s.calls != tc.calls {
				t.Errorf("%d steps, want %d", s.calls, tc.calls)
			}
		})
	}
}
