// Package cores runs the in-process embedders' work (embed/uselite,
// embed/hf) on every core, and lets search queries go first.
//
// Where the time goes (pprof, 4,000 short texts of about 20 tokens in
// batches of 256, GOMAXPROCS 1 and 2; the same shares for hf's
// bge-small-shaped model): the matrix kernel takes 80–83 % of the CPU,
// attention, layer norms, softmax, the activation and the bias adds the
// rest. Shared among goroutines inside each matrix product, as the
// embedders did, only the kernel's part runs in parallel: that is at most
// 1.7× on 2 cores and 4–5× on 16 (Amdahl), less the forking and joining
// of every product, whose static split waits for the slowest goroutine
// (one without a core, on a busy machine). Short texts make small
// matrices: a product of a batch of 512 tokens lasts a few milliseconds.
//
// So a large call is cut into shards, runs of whole sequences of a few
// hundred tokens, which goroutines (as many as the embedder's threads)
// claim one at a time and run through the whole model on one core each,
// with their own scratch memory: everything runs in parallel, and a core
// that another process takes only slows its own shard. Each sequence's
// vector is computed the same way whatever shard it is in (the kernel
// computes each row of a product on its own, attention runs per
// sequence), so the vectors are those of one forward pass, bit for bit.
// A small call (a query) runs as before: one forward pass whose products
// are shared among the threads.
//
// Queries first: a call whose context is marked by Query (embed.EmbedQueries
// marks it) holds the gate while it runs; the products of every other call
// wait at the gate between two panels (tens of microseconds of work) while
// a query runs, so a query gets every core within a panel's time however
// much background embedding is going on.
package cores

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

type (
	queryKey   struct{}
	ungatedKey struct{}
)

// Query returns ctx marked as a search query's: the in-process embedders
// let it go first (background work waits while it runs).
func Query(ctx context.Context) context.Context {
	return context.WithValue(ctx, queryKey{}, true)
}

// IsQuery reports whether ctx was marked by Query.
func IsQuery(ctx context.Context) bool {
	q, _ := ctx.Value(queryKey{}).(bool)
	return q
}

// Ungated returns ctx marked for work that does not wait for queries:
// what every call did before the gate, for benchmarks that measure what
// the gate spares queries.
func Ungated(ctx context.Context) context.Context {
	return context.WithValue(ctx, ungatedKey{}, true)
}

func isUngated(ctx context.Context) bool {
	u, _ := ctx.Value(ungatedKey{}).(bool)
	return u
}

// Gate lets queries go first: a query holds it (Enter) while it runs, and
// background work calls Wait at short intervals, which blocks while any
// query holds it. The zero Gate is open.
type Gate struct {
	active atomic.Int32 // queries holding the gate; read without the lock by Wait's fast path
	mu     sync.Mutex
	open   chan struct{} // closed when the last query leaves; nil while none holds the gate
}

// Enter holds the gate until the returned function is called (once).
func (g *Gate) Enter() (leave func()) {
	g.mu.Lock()
	if g.active.Add(1) == 1 {
		g.open = make(chan struct{})
	}
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			if g.active.Add(-1) == 0 {
				close(g.open)
				g.open = nil
			}
			g.mu.Unlock()
		})
	}
}

// Held reports whether a query holds the gate.
func (g *Gate) Held() bool { return g.active.Load() > 0 }

// Wait returns at once when no query holds the gate, else when none
// does any more or ctx is done (then with its error).
func (g *Gate) Wait(ctx context.Context) error {
	for g.active.Load() > 0 {
		g.mu.Lock()
		open := g.open
		g.mu.Unlock()
		if open == nil {
			continue // the last query left between the load and the lock
		}
		select {
		case <-open:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// gate is the process's: the cores are the process's, whichever embedder
// uses them.
var gate Gate

// Exec is how one forward pass runs its matrix products: shared among
// Threads goroutines, calling Yield (when not nil) between panels.
type Exec struct {
	Threads int
	Yield   func()
}

// Job is a call's work: the token counts of its sequences, in order.
type Job struct {
	// Lengths are the sequences' token counts.
	Lengths []int
	// Threads is how many cores the call may use (the embedder's
	// Threads option).
	Threads int
	// BatchTokens bounds the tokens of one forward pass of a call that
	// is not sharded (the embedder's batch, as before).
	BatchTokens int
	// ShardTokens bounds the tokens of a shard (a shard holds at least
	// one sequence, however long): it bounds each goroutine's scratch
	// memory, ShardTokens times the model's bytes per token.
	ShardTokens int
}

// ShardBytes is what an embedder may give each goroutine of a sharded
// call as scratch memory: its Job.ShardTokens is ShardBytes over its
// bytes per token (a shard holds at least one sequence, however long).
// With more than about 250 tokens a shard, the kernel gains little
// (uselite: 3.0 ms of CPU a short text in forward passes of 264 tokens,
// 3.0 at 528, 3.3 at 132).
const ShardBytes = 6 << 20

// minShardTokens: a shard smaller than this wastes more on fixed costs
// (reading every weight matrix once per product) than a larger one loses
// to imbalance. A call of fewer than 2 such shards is not sharded.
const minShardTokens = 64

// shardsPerWorker: the shards are made small enough for each goroutine
// to get about this many (within ShardTokens and minShardTokens), so that
// the last ones end together.
const shardsPerWorker = 3

// Run runs job: forward(x, lo, hi) computes sequences [lo, hi) with the
// products run as x says; it is called for disjoint ranges that cover
// every sequence, concurrently when the call is sharded (each call then
// needs its own scratch memory). A call marked by Query holds the gate
// and runs as before sharding: forward passes of up to BatchTokens
// tokens one after the other, each product shared among Threads
// goroutines. Any other call waits at the gate between panels and, when
// it has enough tokens and Threads > 1, is sharded. Run returns ctx's
// error if ctx is done before every sequence is computed.
func Run(ctx context.Context, job Job, forward func(x Exec, lo, hi int)) error {
	return run(ctx, &gate, job, forward)
}

func run(ctx context.Context, g *Gate, job Job, forward func(x Exec, lo, hi int)) error {
	query := IsQuery(ctx)
	yields := !query
	switch {
	case query:
		defer g.Enter()()
	case isUngated(ctx):
		g, yields = new(Gate), false // never held
	}
	threads := max(job.Threads, 1)
	if shards := plan(job, threads); !query && len(shards) > 1 {
		return runShards(ctx, g, shards, min(threads, len(shards)), forward, yields)
	}
	x := Exec{Threads: threads}
	if yields {
		x.Yield = yielder(ctx, g)
	}
	for _, b := range batches(job.Lengths, max(job.BatchTokens, 1)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !query {
			if err := g.Wait(ctx); err != nil {
				return err
			}
		}
		forward(x, b[0], b[1])
	}
	return ctx.Err()
}

// runShards runs the shards on workers goroutines (the caller's one of
// them), each claiming the next shard when done with one.
func runShards(ctx context.Context, g *Gate, shards [][2]int, workers int, forward func(x Exec, lo, hi int), yields bool) error {
	var next atomic.Int64
	work := func() {
		x := Exec{Threads: 1}
		if yields {
			x.Yield = yielder(ctx, g)
		}
		for {
			i := int(next.Add(1)) - 1
			if i >= len(shards) || ctx.Err() != nil || g.Wait(ctx) != nil {
				return
			}
			forward(x, shards[i][0], shards[i][1])
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return ctx.Err()
}

// yieldsPerGosched: a background goroutine lets the Go scheduler run
// other goroutines every this many yields (panels, tens of microseconds
// of work each): a query's goroutine woken by a timer or the network
// while background work holds every P would otherwise wait for the
// scheduler's preemption (10 ms) before it even starts.
const yieldsPerGosched = 16

// yielder returns the Yield of a background goroutine's products: wait
// at g while a query holds it, and now and then let the scheduler run
// what is waiting for a P.
func yielder(ctx context.Context, g *Gate) func() {
	var n atomic.Int32 // a product's goroutines may share it
	return func() {
		g.Wait(ctx) // a cancelled ctx ends the wait; the next check between shards returns its error
		if n.Add(1)%yieldsPerGosched == 0 {
			runtime.Gosched()
		}
	}
}

// batches cuts the sequences into runs of at most limit tokens (at least
// one sequence each), in order.
func batches(lengths []int, limit int) [][2]int {
	var out [][2]int
	for lo := 0; lo < len(lengths); {
		hi, n := lo, 0
		for hi < len(lengths) && (hi == lo || n+lengths[hi] <= limit) {
			n += lengths[hi]
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// plan cuts a call into shards for threads goroutines: nil when it is
// not worth sharding (one thread, too few tokens for two shards of
// minShardTokens).
func plan(job Job, threads int) [][2]int {
	total := 0
	for _, n := range job.Lengths {
		total += n
	}
	if threads < 2 || len(job.Lengths) < 2 || total < 2*minShardTokens {
		return nil
	}
	size := (total + threads*shardsPerWorker - 1) / (threads * shardsPerWorker)
	size = min(max(size, minShardTokens), max(job.ShardTokens, 1))
	return batches(job.Lengths, size)
}
