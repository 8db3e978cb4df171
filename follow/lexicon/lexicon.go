// Package lexicon is the bm25 engine: the view of the events table that
// ranks plain-word queries by BM25 in memory, exactly as FTS5 does (see
// Engine).
package lexicon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/bm25"
	"github.com/praxis-os/continuity/follow"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
)

// An Engine keeps a bm25.Index (package bm25: FTS5's BM25 computed outside
// SQLite, from its segment files) in step with the index's
// exchanges, so that Search can rank a query of plain words there instead
// of in FTS5, whose bm25() costs hundreds of milliseconds at a million
// exchanges. The engine answers exactly as FTS5 does (the same rows, in
// the same order, with the same scores), provided it holds exactly the
// exchanges FTS5 holds: so Search asks it only when it does (see view),
// and FTS5 (index.DB.Lexical) answers otherwise.
//
// How it stays exact:
//   - It is fed what the full-text indexer gives FTS5: the exchanges in
//     row order, their texts analysed the same way (index.DB.ExchangeDocs).
//     Row ids only grow, so the events above the highest row read (mark)
//     are exactly those it lacks.
//   - Deletions (forget) bump the index's deletion epoch. The engine's
//     identity (index.DB.LexiconIdentity) holds the epoch it was built
//     under: once the index's epoch moves, queries stop using it, and it
//     is dropped (files and all: forget must not leave the forgotten
//     sessions' words on disk) and built again. Forgetting is rare; a
//     rebuild is a few seconds per hundred thousand exchanges, during
//     which FTS5 answers.
//   - Its directory is tied to the index by that identity: bm25.Open
//     clears a directory written under another one (another index.db, an
//     older analysis, an older epoch). On opening, the engine must also
//     hold as many exchanges as the index has up to its watermark; a
//     directory that does not is built again.
//   - In the writing process, a search sees every exchange committed
//     before it (index.DB.Lexical catches FTS5 up when the lag is small);
//     a query catches the engine up likewise, or goes to FTS5.
//
// Only the index's writer (the daemon) keeps a Engine: a read-only
// process cannot follow deletions as they happen, and searches with FTS5.
type Engine struct {
	db  *index.DB
	dir string
	log *slog.Logger
	cfg Config

	kick follow.Kick

	// wmu serialises what writes the engine: feeding, flushing,
	// dropping, closing. life guards the engine's lifetime against the
	// searches using it: they hold it for reading, a swap or a close
	// for writing. Lock order: wmu, then life.
	wmu  sync.Mutex
	life sync.RWMutex
	cur  atomic.Pointer[lexState] // nil while none is open

	// Guarded by wmu.
	unflushed  int       // docs added since the last flush
	dirtySince time.Time // when the first of them was added

	closed atomic.Bool
	held   atomic.Bool // Drop holds the engine closed until Resume

	building   atomic.Bool
	buildStart atomic.Int64 // unix ns of the current build's start, 0 when none
	lastBuild  atomic.Int64 // duration of the last complete build, ns
	lastErr    atomic.Pointer[string]

	// answered and fellBack count the plain-word BM25 queries the engine
	// answered and those FTS5 answered because it was not current.
	answered, fellBack atomic.Int64
}

// lexState is one open engine.
type lexState struct {
	ix    *bm25.Index
	epoch int64        // the index's deletion epoch it was built under
	mark  atomic.Int64 // highest event row id read into it
}

// Engine tuning.
const (
	// lexStep is how many events a feeding step reads.
	lexStep = 4000
	// lexSyncLag: a search in the writing process catches the engine up
	// itself when it lacks this many events or fewer (as
	// index.DB.Lexical does for FTS5); behind more, FTS5 answers.
	lexSyncLag = 5000
	// lexFlushDocs and lexFlushAge: added docs are made durable when
	// this many wait, or when the oldest has waited this long. A crash
	// loses nothing but the time to add them again; each flush seals a
	// segment file, which every search then reads: not too often.
	lexFlushDocs = 50_000
	lexFlushAge  = time.Minute
	// lexIdlePoll: an idle Run looks for new events this often without
	// being notified.
	lexIdlePoll = time.Second
	// lexMaxPause caps the pause after a failed step, which doubles
	// from a second.
	lexMaxPause = 30 * time.Second
)

// DirName is the engine's folder in the cache folder, beside
// index.db and the vector snapshots.
const DirName = "bm25"

// Dir is the engine's folder for db.
func Dir(db *index.DB) string {
	return filepath.Join(filepath.Dir(db.Path()), DirName)
}

// Config sets up a Engine.
type Config struct {
	// DB is the index, open for writing.
	DB     *index.DB
	Logger *slog.Logger
	// Dir is the engine's folder; "" means Dir(DB), where the
	// daemon keeps it and forget removes it.
	Dir string
	// FlushDocs: added exchanges are made durable when this many wait
	// (or after lexFlushAge); 0 means 50,000.
	FlushDocs int
	// StepPause is a pause after each feeding step of a long catch-up:
	// for the tests that stop a daemon while it builds the engine.
	StepPause time.Duration
}

// New returns a Engine; it opens nothing until Run or CatchUp.
func New(cfg Config) (*Engine, error) {
	if cfg.DB == nil || cfg.DB.ReadOnly() {
		return nil, errors.New("lexicon: the bm25 engine needs the index open for writing")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.FlushDocs <= 0 {
		cfg.FlushDocs = lexFlushDocs
	}
	if cfg.Dir == "" {
		cfg.Dir = Dir(cfg.DB)
	}
	return &Engine{db: cfg.DB, dir: cfg.Dir, log: cfg.Logger, cfg: cfg, kick: follow.NewKick()}, nil
}

var _ follow.View = (*Engine)(nil)

// Name is the view's name: "bm25".
func (l *Engine) Name() string { return "bm25" }

// Notify tells the Engine that events were committed (or deleted). It
// never blocks.
func (l *Engine) Notify() { l.kick.Notify() }

// Run keeps the engine up to date until ctx ends: it opens it, catches up
// with the index, then follows new events as Notify reports them (or
// every second), flushing on the way (lexFlushDocs, lexFlushAge). When
// ctx ends it flushes and closes the engine, and returns nil. A failing
// step is logged and retried with a growing pause; searches meanwhile go
// to FTS5.
func (l *Engine) Run(ctx context.Context) error {
	defer func() {
		if err := l.Close(); err != nil {
			l.log.Error("bm25 engine: close", "err", err)
		}
	}()
	p := follow.Policy{IdlePoll: lexIdlePoll, MinBackoff: time.Second, MaxBackoff: lexMaxPause, KickDuringBackoff: true,
		OnError: func(err error, retryIn time.Duration, _ int) {
			l.setErr(err)
			l.log.Error("bm25 engine: catching up failed; searches use FTS5 meanwhile", "err", err, "retry_in", retryIn)
		}}
	return follow.Loop(ctx, l.kick, p, l.step)
}

// step makes the engine current: built again if its folder was deleted,
// fed every committed event, flushed when due.
func (l *Engine) step(ctx context.Context) (more bool, err error) {
	err = l.checkDir()
	if err == nil {
		err = l.CatchUp(ctx)
	}
	if err == nil {
		err = l.flushIfDue(false)
	}
	if err == nil {
		l.lastErr.Store(nil)
	}
	return false, err
}

// Remove removes the engine's files, which hold the words of the deleted
// events (a forgotten session's, the old text of an edited log's lines),
// and lets Run build it again from the index (whose deletion epoch
// moved: it would not be used meanwhile). Tombstones (bm25.Index.Delete)
// would be cheaper, but would leave those words in the segment files.
func (l *Engine) Remove(ctx context.Context, _ follow.Removal) error {
	if err := l.Drop(); err != nil {
		return err
	}
	l.Resume()
	return nil
}

// Report is the engine's state, a Status (Status).
func (l *Engine) Report(ctx context.Context) any { return l.Status(ctx) }

func (l *Engine) setErr(err error) {
	s := err.Error()
	l.lastErr.Store(&s)
}

// CatchUp opens the engine if needed (building it again when the index's
// deletion epoch moved) and feeds it every event committed before the
// call. It takes the writer's lock one step at a time, so that a forget
// (Drop) or a search's own catch-up never waits for a whole build. A long
// catch-up (a build) reads and analyses the next step while the engine
// adds the last one: the two take about as long.
func (l *Engine) CatchUp(ctx context.Context) error {
	m, err := l.db.ChangeMark(ctx)
	if err != nil {
		return err
	}
	l.wmu.Lock()
	st, done, err := l.prepareLocked(ctx, m.Seq)
	l.wmu.Unlock()
	if err != nil || done {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type step struct {
		from, last int64
		docs       []index.ExchangeDoc
		err        error
	}
	steps := make(chan step, 1)
	go func() {
		defer close(steps)
		from := st.mark.Load()
		for {
			docs, last, err := l.db.ExchangeDocs(rctx, from, lexStep)
			select {
			case steps <- step{from, last, docs, err}:
			case <-rctx.Done():
				return
			}
			if err != nil || last == from {
				return
			}
			from = last
		}
	}()
	for x := range steps {
		if x.err != nil {
			return x.err
		}
		l.wmu.Lock()
		done, err := l.applyLocked(st, m.Seq, x.from, x.last, x.docs)
		l.wmu.Unlock()
		if err != nil || done {
			return err
		}
		if l.cfg.StepPause > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(l.cfg.StepPause):
			}
		}
	}
	return ctx.Err()
}

// stepLocked runs one step towards making the engine current up to row
// seq (every event committed when seq was read): it opens the engine if
// needed, then reads up to lexStep events. done is true when the engine
// is current (or closed, or held by Drop). Callers hold wmu.
func (l *Engine) stepLocked(ctx context.Context, seq int64) (done bool, err error) {
	st, done, err := l.prepareLocked(ctx, seq)
	if err != nil || done {
		return done, err
	}
	from := st.mark.Load()
	docs, last, err := l.db.ExchangeDocs(ctx, from, lexStep)
	if err != nil {
		return false, err
	}
	return l.applyLocked(st, seq, from, last, docs)
}

// prepareLocked returns the engine to feed up to row seq, opening it if
// needed; done is true when there is nothing to feed (it is current, or
// closed, or held by Drop). Callers hold wmu.
func (l *Engine) prepareLocked(ctx context.Context, seq int64) (st *lexState, done bool, err error) {
	if l.closed.Load() || l.held.Load() {
		return nil, true, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if st, err = l.openLocked(ctx); err != nil {
		return nil, false, err
	}
	from := st.mark.Load()
	if from >= seq {
		return st, true, l.builtLocked(st)
	}
	if l.buildStart.Load() == 0 && seq-from > lexSyncLag {
		l.buildStart.Store(time.Now().UnixNano())
		l.building.Store(true)
		l.log.Info("bm25 engine: catching up with the index; searches use FTS5 until it has", "from_row", from, "to_row", seq)
	}
	return st, false, nil
}

// applyLocked adds to st the exchanges docs read from the events in
// (from, last], and moves its mark; done is true when it is current up
// to seq, or when the engine changed since the events were read (closed,
// dropped, or fed by someone else): the caller then stops. Callers hold
// wmu.
func (l *Engine) applyLocked(st *lexState, seq, from, last int64, docs []index.ExchangeDoc) (done bool, err error) {
	if l.closed.Load() || l.held.Load() || l.cur.Load() != st || st.mark.Load() != from {
		return true, nil
	}
	if len(docs) > 0 {
		bd := make([]bm25.Doc, len(docs))
		for i, d := range docs {
			bd[i] = bm25.Doc{Row: d.Row, Session: d.Session, TS: d.TS, User: d.User, AI: d.AI}
		}
		if err := st.ix.Add(bd); err != nil {
			return false, fmt.Errorf("bm25 engine: add rows %d..%d: %w", docs[0].Row, docs[len(docs)-1].Row, err)
		}
		if l.unflushed == 0 {
			l.dirtySince = time.Now()
		}
		l.unflushed += len(docs)
	}
	if last == from {
		// Nothing above the mark: every event committed before seq was
		// read has been read (rows above it come from later commits,
		// and are read next time).
		st.mark.Store(max(from, seq))
	} else {
		st.mark.Store(last)
	}
	if l.unflushed >= l.cfg.FlushDocs {
		if err := l.flushLocked(); err != nil {
			return false, err
		}
	}
	if st.mark.Load() >= seq {
		return true, l.builtLocked(st)
	}
	return false, nil
}

// builtLocked ends a build once the engine is current: it is logged and
// flushed. Callers hold wmu.
func (l *Engine) builtLocked(st *lexState) error {
	if !l.building.Load() {
		return nil
	}
	took := time.Duration(time.Now().UnixNano() - l.buildStart.Load())
	l.lastBuild.Store(int64(took))
	l.buildStart.Store(0)
	l.building.Store(false)
	l.log.Info("bm25 engine: caught up; searches of plain words use it", "docs", st.ix.Len(), "took", took.Round(time.Millisecond))
	err := l.flushLocked()
	// A build went through the texts of every exchange: give the memory
	// it used back to the system now rather than over minutes (docs/performance.md,
	// "Figures behind design choices": continuity-bench query's RSS).
	debug.FreeOSMemory()
	return err
}

// openLocked returns the open engine, opening it (or building it anew,
// after a deletion) when there is none or the index's deletion epoch
// moved. Callers hold wmu.
func (l *Engine) openLocked(ctx context.Context) (*lexState, error) {
	identity, epoch, err := l.db.LexiconIdentity(ctx)
	if err != nil {
		return nil, err
	}
	st := l.cur.Load()
	if st != nil && st.epoch == epoch {
		return st, nil
	}
	if st != nil {
		// Events were deleted since it was built: what it holds of them
		// must go, from memory and from disk.
		l.log.Info("bm25 engine: events were deleted (forget); building it again", "epoch", epoch)
		if err := l.dropLocked(); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	ix, err := bm25.Open(l.dir, identity)
	if err != nil {
		return nil, fmt.Errorf("bm25 engine: open %s: %w", l.dir, err)
	}
	if why := ix.Reset(); why != nil {
		l.log.Info("bm25 engine: its files were not usable; building it anew", "why", why)
	}
	// A directory of this identity holds the exchanges up to its
	// watermark, less none: one that does not (damaged, half-copied) is
	// built again.
	w := ix.Watermark()
	if w > 0 {
		n, err := l.db.ExchangesUpTo(ctx, w)
		if err != nil {
			ix.Close()
			return nil, err
		}
		if int64(ix.Len()) != n {
			l.log.Warn("bm25 engine: its files do not match the index; building it again", "docs", ix.Len(), "exchanges", n, "up_to_row", w)
			ix.Close()
			if err := os.RemoveAll(l.dir); err != nil {
				return nil, fmt.Errorf("bm25 engine: remove %s: %w", l.dir, err)
			}
			if ix, err = bm25.Open(l.dir, identity); err != nil {
				return nil, fmt.Errorf("bm25 engine: open %s: %w", l.dir, err)
			}
			w = 0
		}
	}
	st = &lexState{ix: ix, epoch: epoch}
	st.mark.Store(w)
	l.unflushed = 0
	l.life.Lock()
	l.cur.Store(st)
	l.life.Unlock()
	l.log.Info("bm25 engine: opened", "dir", l.dir, "docs", ix.Len(), "watermark", w, "took", time.Since(start).Round(time.Millisecond))
	return st, nil
}

// dropLocked closes the engine and removes its files. Callers hold wmu.
func (l *Engine) dropLocked() error {
	l.life.Lock()
	st := l.cur.Swap(nil)
	var err error
	if st != nil {
		err = st.ix.Close()
	}
	l.life.Unlock()
	l.unflushed = 0
	l.buildStart.Store(0)
	l.building.Store(false)
	if rerr := os.RemoveAll(l.dir); rerr != nil {
		return fmt.Errorf("bm25 engine: remove %s: %w", l.dir, rerr)
	}
	if err != nil {
		return fmt.Errorf("bm25 engine: close: %w", err)
	}
	return nil
}

// checkDir drops the open engine when its folder was deleted under it
// (rm -r of the folder): it would go on answering from memory, but could
// not flush; the next step builds it again.
func (l *Engine) checkDir() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.cur.Load() == nil {
		return nil
	}
	if _, err := os.Stat(l.dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l.log.Warn("bm25 engine: its folder was deleted; building it again (FTS5 answers meanwhile)", "dir", l.dir)
	return l.dropLocked()
}

// Drop closes the engine and removes its files, and keeps it closed
// (searches use FTS5) until Resume: forget calls it before removing
// what else the index keeps of the forgotten sessions, so that no engine
// file outlives the forget.
func (l *Engine) Drop() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.held.Store(true)
	return l.dropLocked()
}

// Resume lets a dropped engine be built again, in Run's next step.
func (l *Engine) Resume() {
	l.wmu.Lock()
	l.held.Store(false)
	l.wmu.Unlock()
	l.Notify()
}

// Flush makes everything added so far durable.
func (l *Engine) Flush() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return l.flushLocked()
}

func (l *Engine) flushIfDue(force bool) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.unflushed == 0 || !force && l.unflushed < l.cfg.FlushDocs && time.Since(l.dirtySince) < lexFlushAge {
		return nil
	}
	return l.flushLocked()
}

func (l *Engine) flushLocked() error {
	st := l.cur.Load()
	if st == nil || l.unflushed == 0 {
		return nil
	}
	if err := st.ix.Flush(); err != nil {
		return fmt.Errorf("bm25 engine: flush: %w", err)
	}
	l.unflushed = 0
	return nil
}

// Close flushes and closes the engine; the Engine is unusable after.
func (l *Engine) Close() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.closed.Swap(true) {
		return nil
	}
	ferr := l.flushLocked()
	l.life.Lock()
	st := l.cur.Swap(nil)
	l.life.Unlock()
	if st == nil {
		return ferr
	}
	if err := st.ix.Close(); err != nil {
		return fmt.Errorf("bm25 engine: close: %w", err)
	}
	return ferr
}

// lexView is the engine as one search uses it (an index.Lexical):
// current (it holds every exchange FTS5 holds for this search) and kept
// open until release; or, st nil, not current: FTS5 must answer.
type lexView struct {
	l  *Engine
	st *lexState
}

var _ index.Lexical = (*lexView)(nil)

// View returns the engine as one search uses it, and its release (see
// view).
func (l *Engine) View(ctx context.Context) (index.Lexical, func()) {
	if l == nil {
		return nil, func() {}
	}
	v := l.view(ctx)
	return v, v.release
}

// view returns the engine for one search, catching it up first when it
// lacks few events; one that is not current (st nil) when FTS5 must
// answer. It must be released.
func (l *Engine) view(ctx context.Context) *lexView {
	m, err := l.db.ChangeMark(ctx)
	if err != nil {
		return &lexView{l: l}
	}
	st := l.cur.Load()
	if st == nil || st.epoch != m.Epoch {
		return &lexView{l: l}
	}
	if mark := st.mark.Load(); mark < m.Seq {
		if m.Seq-mark > lexSyncLag {
			return &lexView{l: l}
		}
		l.wmu.Lock()
		var err error
		for i, done := 0, false; !done && err == nil && i < 2*lexSyncLag/lexStep+2; i++ {
			done, err = l.stepLocked(ctx, m.Seq)
		}
		l.wmu.Unlock()
		if err != nil {
			l.log.Warn("bm25 engine: catching up for a search failed; FTS5 answers", "err", err)
			return &lexView{l: l}
		}
	}
	l.life.RLock()
	st = l.cur.Load()
	if st == nil || st.epoch != m.Epoch || st.mark.Load() < m.Seq {
		l.life.RUnlock()
		return &lexView{l: l}
	}
	return &lexView{l: l, st: st}
}

func (v *lexView) release() {
	if v.st != nil {
		v.l.life.RUnlock()
	}
}

// Rank answers q when its terms are all single index terms (plain words:
// not a CJK phrase or prefix) and the engine is current; ok is false
// otherwise, or when the engine fails: FTS5 answers then. Of the queries
// of plain words, it counts those it answered and those it left to FTS5
// (Status).
func (v *lexView) Rank(_ context.Context, q index.LexicalQuery) ([]index.LexicalHit, bool, error) {
	keys, ok := singleTerms(q.Terms)
	if !ok {
		return nil, false, nil
	}
	if v.st != nil {
		hits, ok, err := v.search(keys, q.Weights, q.Filter, q.Limit)
		if err == nil && ok {
			v.l.answered.Add(1)
			return hits, true, nil
		}
		if err != nil {
			v.l.log.Warn("bm25 engine failed; FTS5 answers", "err", err)
		}
	}
	v.l.fellBack.Add(1)
	return nil, false, nil
}

// TermDocs counts the stems' documents when the engine is current; ok is
// false otherwise, or when a stem is not one index term.
func (v *lexView) TermDocs(_ context.Context, stems []string) (map[string]int64, int64, bool, error) {
	if v.st == nil {
		return nil, 0, false, nil
	}
	docs, total, err := v.docFreq(stems)
	if err != nil {
		return nil, 0, false, nil
	}
	return docs, total, true, nil
}

// singleTerms returns the index terms of terms (their Key) when each is
// exactly one index term, the quoted stem, as analyze.MatchAny gives it to
// FTS5; ok is false when one is not (a CJK phrase of bigrams, a prefix
// query) or there are none.
func singleTerms(terms []analyze.Term) (keys []string, ok bool) {
	if len(terms) == 0 {
		return nil, false
	}
	keys = make([]string, len(terms))
	for i, t := range terms {
		if t.Key == "" || strings.ContainsAny(t.Key, "\" \t\n") || t.Expr != `"`+t.Key+`"` {
			return nil, false
		}
		keys[i] = t.Key
	}
	return keys, true
}

// search is index.DB.Lexical for an OR of single index terms (stems, in
// query order). ok is false when the filter is one the engine cannot
// express exactly; FTS5 must answer then.
func (v *lexView) search(terms []string, weights [2]float64, f index.Filter, limit int) (hits []index.LexicalHit, ok bool, err error) {
	if f.Types != nil && !slices.Contains(f.Types, logformat.TypeExchange) {
		return nil, true, nil // it holds exchanges only, as FTS5
	}
	for _, w := range weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, false, nil // FTS5 says why
		}
	}
	var bf bm25.Filter
	if f.Sessions != nil {
		bf.Sessions = f.Sessions
		if len(f.Sessions) == 0 {
			return nil, true, nil
		}
	}
	if !f.Since.IsZero() {
		if bf.Since = f.Since.UnixNano(); bf.Since == 0 {
			return nil, false, nil // 0 means unbounded to the engine
		}
	}
	if !f.Until.IsZero() {
		if bf.Until = f.Until.UnixNano(); bf.Until == 0 {
			return nil, false, nil
		}
	}
	if weights == [2]float64{} {
		weights = [2]float64{1, 1}
	}
	bh, err := v.st.ix.Search(terms, weights, bf, limit)
	if errors.Is(err, bm25.ErrNotOneTerm) {
		return nil, false, nil // a term FTS5 reads as a phrase: it answers
	}
	if err != nil {
		return nil, false, err
	}
	hits = make([]index.LexicalHit, len(bh))
	for i, h := range bh {
		hits[i] = index.LexicalHit{Row: h.Row, Score: h.Score}
	}
	return hits, true, nil
}

// docFreq is index.DB.TermDocs from the engine; it fails (bm25.ErrNotOneTerm)
// when a term is not one index term to FTS5 either.
func (v *lexView) docFreq(terms []string) (map[string]int64, int64, error) {
	n, total, err := v.st.ix.DocFreq(terms)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]int64, len(terms))
	for i, t := range terms {
		if n[i] > 0 {
			out[t] = n[i]
		}
	}
	return out, total, nil
}

// Status is the engine's state, for `continuity status`.
type Status struct {
	// State is "ready" (searches of plain words use it), "building"
	// (catching up with the index: FTS5 answers meanwhile), "opening",
	// "dropped" (a forget is removing it) or "closed".
	State     string `json:"state"`
	Docs      int    `json:"docs"`      // exchanges it holds
	Watermark int64  `json:"watermark"` // highest event row read into it
	// Behind counts the events it has not read yet (exchanges or not).
	Behind int64 `json:"behind"`
	// BuildSeconds is how long its last build (a catch-up of more than
	// a few thousand events) took, 0 when none.
	BuildSeconds float64 `json:"build_seconds,omitempty"`
	// Answered and FellBack count the plain-word BM25 queries it
	// answered, and those FTS5 answered because it was not current, since
	// the daemon started.
	Answered int64  `json:"answered"`
	FellBack int64  `json:"fell_back"`
	Error    string `json:"error,omitempty"` // its last failure, until a step succeeds
}

// Status reports the engine's state.
func (l *Engine) Status(ctx context.Context) Status {
	var s Status
	if e := l.lastErr.Load(); e != nil {
		s.Error = *e
	}
	s.Answered, s.FellBack = l.answered.Load(), l.fellBack.Load()
	if d := l.lastBuild.Load(); d > 0 {
		s.BuildSeconds = time.Duration(d).Seconds()
	}
	m, err := l.db.ChangeMark(ctx)
	if err != nil && s.Error == "" {
		s.Error = err.Error()
	}
	l.life.RLock()
	defer l.life.RUnlock()
	st := l.cur.Load()
	switch {
	case st == nil:
		s.State = "opening"
		if l.closed.Load() {
			s.State = "closed"
		} else if l.held.Load() {
			s.State = "dropped"
		}
		return s
	case st.epoch != m.Epoch:
		s.State = "building"
	case st.mark.Load() >= m.Seq:
		s.State = "ready"
	default:
		s.State = "building"
	}
	s.Docs, s.Watermark = st.ix.Len(), st.mark.Load()
	if st.epoch == m.Epoch {
		s.Behind = max(0, m.Seq-s.Watermark)
	}
	return s
}
