package vectors

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/praxis-os/continuity/index"
)

// loadMin is the number of rows from which Load reads on several cores
// (10k: at 20k exchanges on 2 cores, BenchmarkLoadWorkspace 190–260 ms
// against 250–320 on one; docs/performance.md).
const loadMin = 10_000

// Load builds the space of identity from the vectors stored in db, without
// re-embedding. It is the daemon's start-to-ready. The index stores the
// vectors as the space keeps them (int8 codes and a scale each,
// index/vectorcodec.go): they are copied in, in as many row ranges as
// there are cores when they are many (each on its own read connection,
// staged outside the space's lock). When the codes do not fit MemoryCodes
// only the vectors' heads are read (scales and sign codes: disk.go), and
// FillCodes reads the codes that fit later. Vector snapshot files, which
// earlier versions wrote beside the index, are removed (when db is
// writable): the index is the one copy.
func Load(ctx context.Context, db *index.DB, identity string) (*Space, error) {
	return LoadLogged(ctx, db, identity, nil)
}

// LoadLogged is Load with a logger.
func LoadLogged(ctx context.Context, db *index.DB, identity string, log *slog.Logger) (*Space, error) {
	return load(ctx, db, identity, log)
}

// load is LoadLogged.
func load(ctx context.Context, db *index.DB, identity string, log *slog.Logger) (*Space, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	if !db.ReadOnly() {
		if err := RemoveSnapshots(db); err != nil {
			log.Warn("old vector snapshots not removed", "err", err)
		}
	}
	v := NewSpace(identity)
	v.src = db
	fits, err := codesFit(ctx, db, v, identity)
	if err != nil {
		return nil, fmt.Errorf("vectors: load vectors of %s: %w", identity, err)
	}
	// Every code, or the heads alone when the codes do not fit
	// MemoryCodes: they stay in the index, and FillCodes reads those
	// that fit later (disk.go).
	read, err := loadRows(ctx, db, v, identity, 0, math.MaxInt64, !fits)
	if err != nil {
		return nil, fmt.Errorf("vectors: load vectors of %s: %w", identity, err)
	}
	log.Debug("vector space loaded", "identity", identity, "exchanges", read, "vectors", len(v.rows), "codes in memory", v.inMem, "took", time.Since(start).Round(time.Millisecond))
	return v, nil
}

// codesFit reports whether the codes of identity's vectors fit
// MemoryCodes; when they do not, it sets v's dimension.
func codesFit(ctx context.Context, db *index.DB, v *Space, identity string) (bool, error) {
	exchanges, err := db.CountVectors(ctx, identity)
	if err != nil || exchanges == 0 {
		return true, err
	}
	dim, err := db.VectorDim(ctx, identity)
	if err != nil || dim <= 0 {
		return true, err
	}
	if int(exchanges)*max(v.per, 1)*dim <= v.budget {
		return true, nil
	}
	v.dim, v.words = dim, index.SignWords(dim)
	return false, nil
}

// loadRows adds to v the vectors of the rows from <= row < to (their
// heads alone when heads is set), and returns how many it read.
func loadRows(ctx context.Context, db *index.DB, v *Space, identity string, from, to int64, heads bool) (int, error) {
	lo, hi, err := db.VectorRows(ctx, identity)
	if err != nil || hi < from || lo >= to {
		return 0, err
	}
	lo, hi = max(lo, from), min(hi, to-1)
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
			b = to
		}
		wg.Go(func() {
			if heads {
				counts[p], errs[p] = loadHeadsRange(gctx, db, v, identity, a, b)
			} else {
				counts[p], errs[p] = loadRange(gctx, db, v, identity, a, b)
			}
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
	var slab []int8 // codes are copied out of the row into slabs: one allocation for many rows
	err := db.EachVectorIn(ctx, identity, from, to, func(row int64, session string, ts int64, q index.Quantized) error {
		n++
		// An exchange's vectors, one after the other (VectorsPer).
		if len(q.Scales) != per {
			return fmt.Errorf("vectors of row %d: %d vectors, want %d", row, len(q.Scales), per)
		}
		if len(slab) < len(q.Codes) {
			slab = make([]int8, max(len(q.Codes), 1<<16))
		}
		codes := slab[:len(q.Codes):len(q.Codes)]
		slab = slab[len(q.Codes):]
		copy(codes, q.Codes)
		dim := q.Dim
		for k := range per {
			batch = append(batch, vectorDoc{row: row, session: session, ts: ts, code: codes[k*dim : (k+1)*dim : (k+1)*dim], scale: q.Scales[k], slot: k})
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

// loadHeadsRange is loadRange for vectors whose codes stay in the index:
// it reads their heads.
func loadHeadsRange(ctx context.Context, db *index.DB, v *Space, identity string, from, to int64) (int, error) {
	n := 0
	per := max(v.per, 1)
	dim := v.dim // set by load, never changed
	var st staged
	flush := func() error {
		err := v.addStaged(st)
		st = staged{}
		return err
	}
	err := db.EachVectorHeadIn(ctx, identity, from, to, func(row int64, session string, ts int64, h index.Heads) error {
		n++
		if len(h.Scales) != per || h.Words != index.SignWords(dim) {
			return fmt.Errorf("heads of row %d: %d vectors of %d words, want %d of %d", row, len(h.Scales), h.Words, per, index.SignWords(dim))
		}
		stageHeads(&st, row, session, ts, h, dim)
		if st.offered >= 1024 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, flush()
}
