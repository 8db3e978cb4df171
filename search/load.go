package search

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/praxis-os/continuity/index"
)

// loadMin is the number of rows from which Load reads on several cores.
const loadMin = 50_000

// Load builds the space of identity from the vectors stored in db, without
// re-embedding. It is the daemon's start-to-ready: reading 2 KB float32
// blobs from SQLite (about 60% of the time once quantize is cheap) and
// quantising them. Large spaces are read in as many row ranges as there
// are cores, each on its own read connection, and quantised in parallel
// (stage); only the copy into the blocks takes the space's lock.
func Load(ctx context.Context, db *index.DB, identity string) (*Vectors, error) {
	v := NewVectors(identity)
	lo, hi, err := db.VectorRows(ctx, identity)
	if err != nil {
		return nil, fmt.Errorf("search: load vectors of %s: %w", identity, err)
	}
	parts := 1
	if hi-lo >= loadMin {
		parts = runtime.GOMAXPROCS(0)
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		from := lo + (hi-lo+1)*int64(p)/int64(parts)
		to := lo + (hi-lo+1)*int64(p+1)/int64(parts)
		if p == parts-1 {
			to = math.MaxInt64
		}
		if p == 0 {
			from = 0
		}
		wg.Go(func() {
			errs[p] = loadRange(gctx, db, v, identity, from, to)
			if errs[p] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("search: load vectors of %s: %w", identity, err)
		}
	}
	return v, nil
}

// loadRange adds the vectors of rows [from, to) to v.
func loadRange(ctx context.Context, db *index.DB, v *Vectors, identity string, from, to int64) error {
	batch := make([]vectorDoc, 0, 1024)
	flush := func() error {
		st, err := stage(batch)
		batch = batch[:0]
		if err != nil {
			return err
		}
		return v.addStaged(st)
	}
	err := db.EachVectorIn(ctx, identity, from, to, func(row int64, session string, ts int64, vec []float32) error {
		batch = append(batch, vectorDoc{row: row, session: session, ts: ts, vec: vec})
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
