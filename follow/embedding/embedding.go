// Package embedding is the view that embeds the exchanges: the Worker
// stores each exchange's vectors (by its embedder's text recipe, package
// vectors) in the index's vectors table and adds them to the vector space
// search reads.
package embedding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/vectors"
)

// Worker defaults.
const (
	DefaultBatchSize    = 256
	DefaultMaxTextBytes = 32 << 10
	DefaultMinBackoff   = time.Second
	DefaultMaxBackoff   = time.Minute
	DefaultIdlePoll     = 30 * time.Second
	// drainAttempts is how many times Drain tries a failing step before it
	// gives up (the events stay pending for the next run).
	drainAttempts = 4
)

// Config sets up a Worker.
type Config struct {
	DB *index.DB
	// Embedder embeds the exchanges. A worker without one embeds nothing
	// (its steps fail with ErrNoEmbedder) but forgets: a process that
	// holds the index only to forget or to ingest without vectors.
	Embedder embed.Embedder
	// BatchSize is how many exchanges are embedded and stored at a time.
	BatchSize int
	// MaxTextBytes cuts longer texts (at a rune boundary) before
	// embedding: remote models reject or silently truncate long inputs,
	// and a pasted log says little more at 200 KB than at 32 KB.
	MaxTextBytes int
	// MinBackoff and MaxBackoff bound the wait after a failure, which
	// doubles from one to the next (±25% jitter).
	MinBackoff, MaxBackoff time.Duration
	// IdlePoll is how often an idle worker looks for pending exchanges
	// without being notified: a safety net under Notify.
	IdlePoll time.Duration
	Logger   *slog.Logger
}

var _ follow.View = (*Worker)(nil)

// Worker embeds exchanges in the background. Its queue is durable and
// implicit: the exchanges that have no vector for the embedder's identity
// (index.DB.PendingEmbeddings). So nothing is lost to a crash or an
// embedder outage — an exchange stays pending until its vector is stored
// — and switching embedders makes every exchange pending again: the new
// space fills up while search keeps using BM25 and the part of the new
// space already built, never the old vectors. The vectors of other
// identities are kept (a switch back reuses them at once) until the user
// removes them (index.DB.PruneVectors, DropVectors: 'continuity vectors').
//
// The worker only reads events and writes the vectors table, in short
// transactions; ingestion never waits for an embedder.
type Worker struct {
	db  *index.DB
	emb embed.Embedder
	cfg Config
	log *slog.Logger

	wake  follow.Kick
	space atomic.Pointer[vectors.Space] // nil until the identity is known and loaded

	step    sync.Mutex    // one batch at a time (Run and Drain may overlap)
	pending atomic.Int64  // exchanges without a vector; -1 until counted
	stored  atomic.Int64  // vectors stored by this worker
	rate    atomic.Uint64 // float64 bits: exchanges embedded per second, smoothed; 0 until measured
	lastErr atomic.Pointer[string]

	// The background fills of a large space's codes (fillCodes) live
	// as long as the worker: Close stops them and waits, so none reads
	// the index after its owner closed it.
	fills     sync.WaitGroup
	fillCtx   context.Context
	stopFills context.CancelFunc
}

// New returns a worker; call Run (daemon) or Drain (one-shot).
func New(cfg Config) (*Worker, error) {
	if cfg.DB == nil {
		return nil, errors.New("vectors: worker needs an index")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.MaxTextBytes <= 0 {
		cfg.MaxTextBytes = DefaultMaxTextBytes
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.IdlePoll <= 0 {
		cfg.IdlePoll = DefaultIdlePoll
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Worker{db: cfg.DB, emb: cfg.Embedder, cfg: cfg, log: cfg.Logger, wake: follow.NewKick()}
	w.pending.Store(-1)
	w.fillCtx, w.stopFills = context.WithCancel(context.Background())
	return w, nil
}

// Close stops the background reading of vector codes into memory and
// waits for it; call it before closing the index. The worker's space
// stays usable (codes not read are read from the index by each search).
func (w *Worker) Close() {
	w.stopFills()
	w.fills.Wait()
}

// Space returns the current vector space, nil until the embedder's
// identity is known and its stored vectors are loaded. It is meant for
// search.Config.Vectors.
func (w *Worker) Space() *vectors.Space { return w.space.Load() }

// Embedder is the worker's embedder; nil for a worker that only forgets.
func (w *Worker) Embedder() embed.Embedder { return w.emb }

// Notify wakes the worker up: new exchanges were committed. It never
// blocks; call it from the watcher's OnCommit.
func (w *Worker) Notify() { w.wake.Notify() }

// Status is the embedding progress, for status displays.
type Status struct {
	Identity string // "" until known
	Ready    bool   // the vector space is loaded
	Vectors  int    // searchable vectors in the space
	Pending  int64  // exchanges without a vector; -1 until counted
	Stored   int64  // vectors stored since start
	LastErr  string // the last failure, "" after a success
	// Rate is the embedding speed in exchanges per second, smoothed over
	// the last batches; 0 until a batch was embedded.
	Rate float64
}

// ETA is how long the pending exchanges should take at the current rate,
// 0 when nothing is pending or the rate is unknown.
func (s Status) ETA() time.Duration {
	if s.Pending <= 0 || s.Rate <= 0 {
		return 0
	}
	return time.Duration(float64(s.Pending) / s.Rate * float64(time.Second))
}

// Status reports the worker's progress.
func (w *Worker) Status() Status {
	st := Status{Pending: w.pending.Load(), Stored: w.stored.Load(), Rate: math.Float64frombits(w.rate.Load())}
	if v := w.space.Load(); v != nil {
		st.Identity, st.Ready, st.Vectors = v.Identity(), true, v.Len()
	}
	if e := w.lastErr.Load(); e != nil {
		st.LastErr = *e
	}
	return st
}

// Run embeds pending exchanges until ctx is done, then returns nil. After
// a failure (embedder down, database busy) it waits MinBackoff, doubling
// up to MaxBackoff, and tries again; a success resets the wait. Commits
// during the wait do not end it: a server that is down is not asked
// again sooner.
func (w *Worker) Run(ctx context.Context) error {
	return follow.Loop(ctx, w.wake, w.policy(), w.Step)
}

// Drain embeds until nothing is pending. It retries a failing step a few times with backoff, then
// returns the error; what was not embedded stays pending.
func (w *Worker) Drain(ctx context.Context) error {
	return follow.Drain(ctx, w.policy(), drainAttempts, w.Step)
}

// policy is how the worker's loop waits: IdlePoll when nothing is
// pending, a jittered backoff after a failure.
func (w *Worker) policy() follow.Policy {
	return follow.Policy{IdlePoll: w.cfg.IdlePoll, MinBackoff: w.cfg.MinBackoff, MaxBackoff: w.cfg.MaxBackoff, Jitter: 0.25,
		OnError: func(err error, retryIn time.Duration, attempt int) {
			w.log.Warn("embedding failed; will retry", "err", err, "retry_in", retryIn.Round(time.Millisecond), "attempt", attempt)
		}}
}

// Name is the view's name: "embed".
func (w *Worker) Name() string { return "embed" }

// Remove removes the vectors of the deleted events (forgotten sessions,
// an edited log's old lines) from the space in memory (the index deleted
// its own with their events) and deletes any snapshot file an earlier
// version left, which would hold them too.
func (w *Worker) Remove(ctx context.Context, r follow.Removal) error {
	if v := w.space.Load(); v != nil {
		for _, s := range r.Sessions {
			v.RemoveSession(s)
		}
		v.RemoveRows(r.Rows)
		w.fillCodes(v) // a fill stopped at a deleted row goes on
	}
	return vectors.RemoveSnapshots(w.db)
}

// fillCodes reads into memory, in the background, the codes of v that
// fit (vectors.FillCodes: a large space is loaded with its codes in the
// index, and answers meanwhile with the same results, more slowly). The
// fill outlives the call that starts it (a load, a forget's request) but
// not the worker (Close).
func (w *Worker) fillCodes(v *vectors.Space) {
	if in, all := v.CodesInMemory(); in == all {
		return
	}
	w.fills.Go(func() {
		start := time.Now()
		if err := v.FillCodes(w.fillCtx); err != nil {
			if w.fillCtx.Err() == nil { // not at Close
				w.log.Warn("vector codes not read into memory; searches read them from the index", "err", err)
			}
			return
		}
		in, all := v.CodesInMemory()
		w.log.Debug("vector codes read into memory", "in_memory", in, "vectors", all, "took", time.Since(start).Round(time.Millisecond))
	})
}

// Progress is the worker's progress as a running daemon tells it
// (Report), and which embedder it embeds with.
type Progress struct {
	// Identity is the loaded space's identity; "" until it is loaded.
	Identity string  `json:"identity"`
	Pending  int64   `json:"pending"`
	Rate     float64 `json:"rate"` // exchanges per second, 0 until measured
	// Space is the space identity of the worker's embedder
	// (KnownSpaceIdentity), known before the space loads; "" while a
	// remote embedder has not learned its dimension, or without an
	// embedder.
	Space string `json:"space,omitempty"`
	// SpacePattern is Space, or while a remote embedder has not learned
	// its dimension, its identity with "?" for it (vectors.SpacePattern):
	// which stored vectors may be its own.
	SpacePattern string `json:"space_pattern,omitempty"`
	// Embedder describes the worker's embedder (nil without one): its
	// provider, model and, for a remote one, the server's URL.
	Embedder *embed.Description `json:"embedder,omitempty"`
	// Ready: the space is loaded. Stored counts the vectors stored since
	// the daemon started. LastError is the last failure (an embedder
	// server that cannot be reached), "" after a success.
	Ready     bool   `json:"ready"`
	Stored    int64  `json:"stored"`
	LastError string `json:"last_error,omitempty"`
	// Vectors is how many vectors the loaded space holds, CodesInMemory
	// how many of them have their int8 codes in memory (the others are
	// read from the index by the searches that score them), within
	// MemoryBytes (vectors.MemoryCodes, daemon --vector-memory).
	Vectors       int `json:"vectors,omitempty"`
	CodesInMemory int `json:"codes_in_memory,omitempty"`
	MemoryBytes   int `json:"memory_bytes,omitempty"`
}

// Report is the worker's Progress. It never blocks on the embedder: a
// remote one's identity is given once its dimension is known.
func (w *Worker) Report(context.Context) any {
	st := w.Status()
	p := Progress{Identity: st.Identity, Pending: st.Pending, Rate: st.Rate, Ready: st.Ready, Stored: st.Stored, LastError: st.LastErr}
	if v := w.space.Load(); v != nil {
		p.CodesInMemory, p.Vectors = v.CodesInMemory()
		p.MemoryBytes = v.MemoryBudget()
	}
	if w.emb != nil {
		d := embed.Describe(w.emb)
		p.Embedder = &d
		p.Space, _ = vectors.KnownSpaceIdentity(w.emb)
		p.SpacePattern = vectors.SpacePattern(w.emb)
	}
	return p
}

// Step embeds and stores one batch of pending exchanges, making sure the
// space is ready first; more is true when it took care of some (there may
// be more).
func (w *Worker) Step(ctx context.Context) (more bool, err error) {
	n, err := w.once(ctx)
	return n > 0, err
}

// ErrNoEmbedder is the error of a step of a worker without an embedder.
var ErrNoEmbedder = errors.New("vectors: no embedder configured")

// once makes sure the space is ready, then embeds and stores one batch;
// n is the number of exchanges it took care of, 0 when none was pending.
func (w *Worker) once(ctx context.Context) (n int, err error) {
	if w.emb == nil {
		return 0, ErrNoEmbedder
	}
	w.step.Lock()
	defer w.step.Unlock()
	// The error is published as the step ends; a success clears it
	// before the step publishes what it stored (below), so that Status
	// never shows new vectors with the error of the step before.
	defer func() {
		if err != nil {
			s := err.Error()
			w.lastErr.Store(&s)
		} else {
			w.lastErr.Store(nil)
		}
	}()
	v := w.space.Load()
	if v == nil {
		if v, err = w.prepare(ctx); err != nil {
			return 0, err
		}
	}
	id := v.Identity()
	items, err := w.db.PendingEmbeddings(ctx, id, w.cfg.BatchSize)
	if err != nil {
		return 0, fmt.Errorf("vectors: pending embeddings: %w", err)
	}
	if len(items) < w.cfg.BatchSize {
		// This batch is all there is (until the next commit).
		w.pending.Store(int64(len(items)))
	} else if w.pending.Load() < int64(len(items)) {
		// More than we knew of: count again (rarely: this runs once per
		// backlog, not per batch).
		if n, err := w.db.CountPending(ctx, id); err == nil {
			w.pending.Store(n)
		}
	}
	if len(items) == 0 {
		return 0, nil
	}
	rows := make([]int64, len(items))
	for i, it := range items {
		rows[i] = it.Row
	}
	// The events give the text to embed (embedText), and the session and
	// time the vector space filters on.
	evs, err := w.db.EventsByRows(ctx, rows)
	if err != nil {
		return 0, fmt.Errorf("vectors: read %d exchanges to embed: %w", len(rows), err)
	}
	recipe := vectors.RecipeOf(w.emb)
	var prev map[int64]string
	if recipe == vectors.TextUserPrev {
		if prev, err = w.db.PreviousUserTexts(ctx, rows); err != nil {
			return 0, fmt.Errorf("vectors: read the context of %d exchanges to embed: %w", len(rows), err)
		}
	}
	// Each exchange's texts (EmbedTexts), the non-empty ones embedded
	// in one call; slot k of exchange i is vector i·per+k.
	per := vectors.VectorsPer(recipe)
	var texts []string
	var slots []int // the slot of each text
	docs := make([]vectors.Entry, 0, per*len(rows))
	for _, r := range rows {
		e, ok := evs[r]
		if !ok {
			continue // deleted since PendingEmbeddings
		}
		for k, t := range vectors.EmbedTexts(recipe, e, prev[r]) {
			if k == 0 || t != "" {
				texts = append(texts, truncate(t, w.cfg.MaxTextBytes))
				slots = append(slots, len(docs))
			}
			docs = append(docs, vectors.Entry{Row: r, Session: e.SessionID, TS: e.Timestamp.UnixNano(), Slot: k})
		}
	}
	if len(docs) == 0 {
		return len(rows), nil
	}
	start := time.Now()
	vecs, err := w.embed(ctx, texts)
	if err != nil {
		return 0, fmt.Errorf("vectors: embed %d exchanges for %s: %w", len(docs)/per, id, err)
	}
	w.observeRate(len(docs)/per, time.Since(start))
	for i, v := range vecs {
		docs[slots[i]].Vec = v
	}
	// What the index stores of an exchange: its vectors one after the
	// other (zeros for a slot without text).
	dim := len(vecs[0])
	rows = rows[:0]
	stored := make([][]float32, 0, len(docs)/per)
	for i := 0; i < len(docs); i += per {
		blob := make([]float32, per*dim)
		for k := range per {
			if d := &docs[i+k]; d.Vec == nil {
				d.Vec = blob[k*dim : (k+1)*dim] // zero: similar to nothing
			} else {
				copy(blob[k*dim:], d.Vec)
			}
		}
		rows = append(rows, docs[i].Row)
		stored = append(stored, blob)
	}
	if err := w.db.StoreVectors(ctx, id, rows, stored); err != nil {
		return 0, fmt.Errorf("vectors: store %d vectors: %w", len(rows), err)
	}
	w.lastErr.Store(nil) // a success: before its vectors are counted
	w.stored.Add(int64(len(rows)))
	w.pending.Store(max(0, w.pending.Load()-int64(len(items))))
	// Stored: a failure to add them to the in-memory space only delays
	// their search to the next start (Load).
	if err := v.Add(docs); err != nil {
		w.log.Error("vectors stored but not searchable until restart", "err", err)
	}
	return len(items), nil
}

// observeRate folds one batch's speed into the smoothed rate (weight 0.3
// for the newest batch).
func (w *Worker) observeRate(n int, d time.Duration) {
	if n == 0 || d <= 0 {
		return
	}
	r := float64(n) / d.Seconds()
	if old := math.Float64frombits(w.rate.Load()); old > 0 {
		r = 0.7*old + 0.3*r
	}
	w.rate.Store(math.Float64bits(r))
}

// prepare resolves the embedder's identity (a remote embedder may need to
// reach its server to learn its dimension), loads the stored vectors of
// that identity and counts what is pending.
func (w *Worker) prepare(ctx context.Context) (*vectors.Space, error) {
	if _, err := embed.Resolve(ctx, w.emb); err != nil {
		return nil, fmt.Errorf("vectors: embedder identity: %w", err)
	}
	id := vectors.SpaceIdentity(w.emb)
	start := time.Now()
	v, err := vectors.LoadLogged(ctx, w.db, id, w.log)
	if err != nil {
		return nil, err
	}
	n, err := w.db.CountPending(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("vectors: count pending embeddings: %w", err)
	}
	w.pending.Store(n)
	w.space.Store(v)
	w.fillCodes(v)
	w.log.Info("vector space loaded", "identity", id, "exchanges", v.Len(), "vectors", v.Vectors(), "pending", n, "took", time.Since(start).Round(time.Millisecond))
	return v, nil
}

// embed embeds texts. If the embedder rejects the batch as a bad request
// (HTTP 400, 413, 422: typically one text too long for the model), the
// texts are embedded one by one, and those rejected on their own get a
// zero vector (stored, so they stop blocking the queue; similar to
// nothing, so never found by vectors — BM25 still finds them), provided
// at least one text of the batch went through; otherwise the error is the
// embedder's or its configuration's, and is returned.
func (w *Worker) embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := w.emb.Embed(ctx, texts)
	if err == nil || !rejected(err) || len(texts) == 1 {
		return vecs, err
	}
	vecs = make([][]float32, len(texts))
	var bad []int
	ok := false
	for i, t := range texts {
		v, err := w.emb.Embed(ctx, []string{t})
		switch {
		case err == nil:
			vecs[i], ok = v[0], true
		case rejected(err):
			bad = append(bad, i)
		default:
			return nil, err
		}
	}
	if !ok {
		return nil, err
	}
	dim := w.emb.Dimension()
	for _, i := range bad {
		w.log.Warn("embedder rejected an exchange; it will be found by BM25 only", "bytes", len(texts[i]))
		vecs[i] = make([]float32, dim)
	}
	return vecs, nil
}

// rejected reports whether err is a server's refusal of the input itself.
func rejected(err error) bool {
	var se *embed.StatusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// truncate cuts s to at most n bytes at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
