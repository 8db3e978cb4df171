package vectors

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/praxis-os/continuity/index"
)

// loadMin is the number of rows from which Load reads on several cores.
const loadMin = 50_000

// Load builds the space of identity from the vectors stored in db, without
// re-embedding. It is the daemon's start-to-ready. A valid snapshot
// (snapshot.go) gives the space up to its largest row in one sequential
// read; the rest comes from SQLite: 2 KB float32 blobs read and quantised,
// in as many row ranges as there are cores when they are many (each on its
// own read connection, quantised outside the space's lock by stage). When
// that was many vectors, and db is writable, a new snapshot is written in
// the background (until ctx ends); log (nil: none) hears how it went.
func Load(ctx context.Context, db *index.DB, identity string) (*Space, error) {
	return LoadLogged(ctx, db, identity, nil)
}

// LoadLogged is Load with a logger for the snapshot's fate.
func LoadLogged(ctx context.Context, db *index.DB, identity string, log *slog.Logger) (*Space, error) {
	return load(ctx, db, identity, log, nil)
}

// load is LoadLogged; the snapshot writer, when one starts, is counted in
// writers (nil: not counted), so that its owner can wait for it before it
// exits: a process that exits while the writer runs leaves its temporary
// file (hundreds of MB at a million exchanges) until the next snapshot.
func load(ctx context.Context, db *index.DB, identity string, log *slog.Logger, writers *sync.WaitGroup) (*Space, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	v, upTo, err := loadSnapshot(ctx, db, identity)
	fromSnapshot := err == nil
	switch {
	case fromSnapshot:
		log.Debug("vector snapshot read", "identity", identity, "vectors", v.Len(), "took", time.Since(start).Round(time.Millisecond))
	case errors.Is(err, fs.ErrNotExist):
		v, upTo = NewSpace(identity), 0
	default:
		log.Info("vector snapshot not used; loading from the index", "identity", identity, "reason", err)
		v, upTo = NewSpace(identity), 0
	}
	read, err := loadRows(ctx, db, v, identity, upTo+1)
	if err != nil {
		return nil, fmt.Errorf("vectors: load vectors of %s: %w", identity, err)
	}
	if !db.ReadOnly() && v.Len() >= snapshotMin && (!fromSnapshot || read >= snapshotRewrite) {
		if writers != nil {
			writers.Add(1)
		}
		go func() {
			if writers != nil {
				defer writers.Done()
			}
			snapshotStarting()
			s := time.Now()
			if err := writeSnapshot(ctx, db, v); err != nil {
				if ctx.Err() != nil {
					// Stopping: not a fault.
					log.Info("vector snapshot left unfinished (stopping); the next start loads from the index", "identity", identity)
					return
				}
				log.Warn("vector snapshot not written; the next start loads from the index", "identity", identity, "err", err)
				return
			}
			log.Info("vector snapshot written", "identity", identity, "vectors", v.Len(), "took", time.Since(s).Round(time.Millisecond))
		}()
	}
	return v, nil
}

// loadRows adds to v the vectors of the rows from `from` on, and returns
// how many it read.
func loadRows(ctx context.Context, db *index.DB, v *Space, identity string, from int64) (int, error) {
	lo, hi, err := db.VectorRows(ctx, identity)
	if err != nil || hi < from {
		return 0, err
	}
	lo = max(lo, from)
	parts := 1
	if hi-lo >= loadMin {
		parts = runtime.GOMAXPROCS(0)
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, parts)
	counts := make([]int, parts)
	var wg sync.WaitGroup
	for p := range parts {
		a := lo + (hi-lo+1)*int64(p)/int64(parts)
		b := lo + (hi-lo+1)*int64(p+1)/int64(parts)
		if p == parts-1 {
			b = math.MaxInt64
		}
		wg.Go(func() {
			counts[p], errs[p] = loadRange(gctx, db, v, identity, a, b)
			if errs[p] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	n := 0
	for p, err := range errs {
		if err != nil {
			return 0, err
		}
		n += counts[p]
	}
	return n, nil
}

// loadRange adds the vectors of rows [from, to) to v and returns how many
// it read.
func loadRange(ctx context.Context, db *index.DB, v *Space, identity string, from, to int64) (int, error) {
	n := 0
	batch := make([]vectorDoc, 0, 1024)
	flush := func() error {
		st, err := stage(batch)
		batch = batch[:0]
		if err != nil {
			return err
		}
		return v.addStaged(st)
	}
	per := max(v.per, 1)
	err := db.EachVectorIn(ctx, identity, from, to, func(row int64, session string, ts int64, vec []float32) error {
		n++
		// An exchange's vectors, one after the other (VectorsPer).
		if len(vec)%per != 0 {
			return fmt.Errorf("vectors of row %d: %d components are not %d vectors of one dimension", row, len(vec), per)
		}
		dim := len(vec) / per
		for k := range per {
			batch = append(batch, vectorDoc{row: row, session: session, ts: ts, vec: vec[k*dim : (k+1)*dim : (k+1)*dim], slot: k})
		}
		if len(batch) >= cap(batch)-per {
			return flush()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, flush()
}
