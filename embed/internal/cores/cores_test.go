package cores

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestGate: an open gate lets Wait through; while one or more queries
// hold it, Wait returns only after the last has left (the waiters check
// that the leave came first: no timing involved); leaving twice counts
// once; a cancelled context ends a wait with its error.
func TestGate(t *testing.T) {
	var g Gate
	ctx := context.Background()
	if g.Held() || g.Wait(ctx) != nil {
		t.Fatal("the zero gate is not open")
	}
	for _, queries := range []int{1, 3} {
		leaves := make([]func(), queries)
		for i := range leaves {
			leaves[i] = g.Enter()
		}
		if !g.Held() {
			t.Fatal("not held after Enter")
		}
		var allLeft atomic.Bool
		var early atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err := g.Wait(ctx); err != nil {
					t.Errorf("Wait: %v", err)
				}
				if !allLeft.Load() {
					early.Add(1)
				}
			})
		}
		for i, leave := range leaves {
			if i == len(leaves)-1 {
				allLeft.Store(true)
			}
			leave()
			leave() // again: no effect
			if i < len(leaves)-1 && !g.Held() {
				t.Fatalf("%d queries, %d left: the gate opened", queries, i+1)
			}
		}
		wg.Wait()
		if n := early.Load(); n > 0 {
			t.Fatalf("%d queries: %d waits returned while a query held the gate", queries, n)
		}
		if g.Held() || g.Wait(ctx) != nil {
			t.Fatalf("%d queries: the gate stays closed after they left", queries)
		}
	}
	leave := g.Enter()
	defer leave()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := g.Wait(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context while held: %v", err)
	}
}

// call is what one forward call of Run was given.
type call struct {
	lo, hi, threads int
	yield, held     bool // a yield function; the gate held during the call
}

// record runs job through run on g and returns the forward calls, in
// the order of their ranges.
func record(t *testing.T, ctx context.Context, g *Gate, job Job) ([]call, error) {
	t.Helper()
	var mu sync.Mutex
	var calls []call
	err := run(ctx, g, job, func(x Exec, lo, hi int) {
		if x.Yield != nil {
			x.Yield() // open gate: returns
		}
		mu.Lock()
		calls = append(calls, call{lo, hi, x.Threads, x.Yield != nil, g.Held()})
		mu.Unlock()
	})
	slices.SortFunc(calls, func(a, b call) int { return a.lo - b.lo })
	return calls, err
}

// TestRun: which calls are sharded, how, and what each forward call gets.
func TestRun(t *testing.T) {
	short := slices.Repeat([]int{20}, 256) // a worker batch of short texts: 5,120 tokens
	cases := []struct {
		name    string
		lengths []int
		threads int
		query   bool
		sharded bool
		limit   int // most tokens a call may get (unless one sequence is longer)
	}{
		{"background, 2 threads", short, 2, false, true, 200},
		{"background, 16 threads: at least 64 tokens a shard", short, 16, false, true, 200},
		{"background, 1 thread", short, 1, false, false, 512},
		{"background, too small to shard", []int{20, 20, 20, 20, 20, 20}, 4, false, false, 512},
		{"background, one sequence", []int{128}, 4, false, false, 512},
		{"background, long sequences, one a shard", []int{512, 512, 300, 512}, 2, false, true, 200},
		{"query, batch", short, 2, true, false, 512},
		{"query, one text", []int{14}, 2, true, false, 512},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var g Gate
			ctx := context.Background()
			if tc.query {
				ctx = Query(ctx)
			}
			job := Job{Lengths: tc.lengths, Threads: tc.threads, BatchTokens: 512, ShardTokens: 200}
			calls, err := record(t, ctx, &g, job)
			if err != nil {
				t.Fatal(err)
			}
			next := 0
			for _, c := range calls {
				if c.lo != next || c.hi <= c.lo {
					t.Fatalf("calls %v: do not cover the %d sequences in order, once each", calls, len(tc.lengths))
				}
				next = c.hi
				tokens := 0
				for _, n := range tc.lengths[c.lo:c.hi] {
					tokens += n
				}
				if tokens > tc.limit && c.hi-c.lo > 1 {
					t.Errorf("call [%d, %d): %d tokens, limit %d", c.lo, c.hi, tokens, tc.limit)
				}
				if tc.sharded && tokens < minShardTokens && c.hi < len(tc.lengths) {
					t.Errorf("shard [%d, %d): %d tokens, under %d", c.lo, c.hi, tokens, minShardTokens)
				}
				wantThreads := tc.threads
				if tc.sharded {
					wantThreads = 1
				}
				if c.threads != wantThreads {
					t.Errorf("call [%d, %d): %d threads, want %d", c.lo, c.hi, c.threads, wantThreads)
				}
				if c.yield == tc.query || c.held != tc.query {
					t.Errorf("call [%d, %d): yield %v, gate held %v; a query holds the gate and never yields, other work yields", c.lo, c.hi, c.yield, c.held)
				}
			}
			if next != len(tc.lengths) {
				t.Fatalf("calls cover %d of %d sequences", next, len(tc.lengths))
			}
			if tc.sharded && len(calls) < 2 {
				t.Errorf("%d calls: not sharded", len(calls))
			}
			if !tc.sharded && len(calls) > 1 && len(calls) != len(batches(tc.lengths, 512)) {
				t.Errorf("%d calls, want batches of 512 tokens", len(calls))
			}
			if g.Held() {
				t.Error("the gate is still held")
			}
		})
	}
}

// TestRunWaitsForQueries: background work does not start while a query
// holds the gate, and a cancelled context ends its wait.
func TestRunWaitsForQueries(t *testing.T) {
	for _, lengths := range [][]int{{20}, slices.Repeat([]int{20}, 100)} { // one batch; shards
		var g Gate
		leave := g.Enter()
		var left atomic.Bool
		done := make(chan error)
		var early atomic.Int32
		go func() {
			done <- run(context.Background(), &g, Job{Lengths: lengths, Threads: 2, BatchTokens: 512, ShardTokens: 200}, func(Exec, int, int) {
				if !left.Load() {
					early.Add(1)
				}
			})
		}()
		left.Store(true)
		leave()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if early.Load() > 0 {
			t.Fatalf("%d sequences: background work ran while a query held the gate", len(lengths))
		}

		// Ungated work does not wait.
		leave = g.Enter()
		var n atomic.Int64
		if err := run(Ungated(context.Background()), &g, Job{Lengths: lengths, Threads: 2, BatchTokens: 512, ShardTokens: 200}, func(x Exec, lo, hi int) {
			if x.Yield != nil {
				t.Error("ungated work got a yield function")
			}
			n.Add(int64(hi - lo))
		}); err != nil || n.Load() != int64(len(lengths)) {
			t.Fatalf("ungated: %v, %d of %d sequences", err, n.Load(), len(lengths))
		}

		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			done <- run(ctx, &g, Job{Lengths: lengths, Threads: 2, BatchTokens: 512, ShardTokens: 200}, func(Exec, int, int) {
				t.Error("background work ran while a query held the gate")
			})
		}()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled while waiting: %v", err)
		}
		leave()
	}
}
