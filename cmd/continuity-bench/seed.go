package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/internal/embedcache"
	"github.com/praxis-os/continuity/vectors"
	"github.com/praxis-os/continuity/workspace"
)

// seedReport says where the vectors of a query bench came from.
type seedReport struct {
	Identity  string        // the space the daemon will search
	Exchanges int64         // vectors stored
	Distinct  int           // distinct texts they came from
	Embedded  int           // texts the model embedded in this run (cache misses)
	Took      time.Duration // seeding time, embedding included
	Cache     string        // the cache file
}

func (r seedReport) String() string {
	return fmt.Sprintf("vectors SEEDED, not embedded by the daemon: %d exchanges of %s from %d distinct texts (%d embedded now, the rest from the cache %s), in %s",
		r.Exchanges, r.Identity, r.Distinct, r.Embedded, r.Cache, r.Took.Round(time.Millisecond))
}

// seedVectors gives every exchange of the index in dir its vector for the
// embedder the daemon will use (the default one, or what the
// CONTINUITY_EMBED_* variables select), embedding each distinct text once:
// the bench repeats a limited pool of texts (the LongMemEval conversations,
// 24.6k exchanges), and a sentence model embeds ~100 texts a second on
// these machines, so embedding 100k or 1M exchanges one by one would take
// hours to measure what a search costs, which does not depend on how the
// vectors were made. Vectors are remembered in the development tools'
// embedding cache (internal/embedcache, shared with continuity-eval).
//
// The product's pipeline stores them (engine.Open and Embed, with the
// cached embedder), so the text embedded and the space identity are
// exactly the daemon's, and the daemon starts with a complete space:
// nothing pending, nothing to re-embed. ws is the workspace; no daemon
// may run on it.
func seedVectors(ctx context.Context, ws string, progress io.Writer) (seedReport, error) {
	var rep seedReport
	cfg, err := embed.ConfigFromEnv()
	if err != nil {
		return rep, err
	}
	e, err := embed.New(cfg)
	if err != nil {
		return rep, err
	}
	if _, err := embed.Resolve(ctx, e); err != nil {
		return rep, err
	}
	if seedHashed {
		return seedHashedVectors(ctx, ws, e)
	}
	if embedcache.Disabled() {
		return rep, fmt.Errorf("seeding vectors needs the embedding cache (%s=off)", embedcache.EnvDir)
	}
	cdir, err := embedcache.DefaultDir()
	if err != nil {
		return rep, err
	}
	ce, err := embedcache.New(e, cdir)
	if err != nil {
		return rep, err
	}
	// The daemon's embedder carries no recipe: the default one.
	emb, err := vectors.WithTextRecipe(ce, vectors.DefaultText)
	if err != nil {
		return rep, err
	}
	rep.Identity, rep.Cache = vectors.SpaceIdentity(emb), ce.Path()
	if want := vectors.SpaceIdentity(e); want != rep.Identity {
		return rep, fmt.Errorf("seeded space %s is not the daemon's %s", rep.Identity, want)
	}
	eng, err := engine.Open(workspace.At(ws), engine.Options{Embedder: emb, EmbedBatch: 1024})
	if err != nil {
		return rep, err
	}
	defer eng.Close()
	w := eng.Worker()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := eng.Embed(ctx, nil)
		done <- err
	}()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err = <-done:
		case <-tick.C:
			st, cs := w.Status(), ce.Stats()
			fmt.Fprintf(progress, "seeding vectors: %d stored, %d pending, %d distinct texts (%d embedded now)\n", st.Stored, st.Pending, cs.Distinct, cs.Misses)
			continue
		}
		break
	}
	if err != nil {
		return rep, fmt.Errorf("seed vectors: %w", err)
	}
	cs := ce.Stats()
	rep.Exchanges, rep.Distinct, rep.Embedded, rep.Took = w.Status().Stored, cs.Distinct, cs.Misses, time.Since(start)
	if n, err := eng.DB().CountPending(ctx, rep.Identity); err != nil || n != 0 {
		return rep, fmt.Errorf("seed vectors: %d exchanges still pending (%v)", n, err)
	}
	return rep, nil
}
