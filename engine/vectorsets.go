package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
)

// Each embedder's vectors are kept in the index (the vectors table
// records the embedder of each row) until the user removes them: trying
// another embedder and going back costs nothing, and the disk they take is
// listed ('continuity vectors', status) beside the command that frees it.

// VectorSets lists the vectors the index stores, by embedder, and which
// embedder is in use (the daemon's, else the one configured here).
type VectorSets struct {
	InUse string            `json:"in_use"`
	Sets  []index.VectorSet `json:"sets"`
}

// DropVectorsRequest asks to remove one embedder's stored vectors.
type DropVectorsRequest struct {
	Embedder string `json:"embedder"`
}

// DropVectorsResponse says what was removed.
type DropVectorsResponse struct {
	Embedder string `json:"embedder"`
	Vectors  int64  `json:"vectors"`
}

// dropVectors removes the stored vectors of another embedder than the one
// in use (inUse), and its vector snapshot. The one in use is refused:
// search reads them, and they would all be computed again at once.
func dropVectors(ctx context.Context, db *index.DB, inUse string, req DropVectorsRequest) (DropVectorsResponse, error) {
	resp := DropVectorsResponse{Embedder: req.Embedder}
	if req.Embedder == "" {
		return resp, server.BadRequest(errors.New("which embedder's vectors? name one as 'continuity vectors' lists it"))
	}
	if req.Embedder != inUse {
		sets, err := db.VectorSets(ctx)
		if err != nil {
			return resp, err
		}
		id, err := resolveVectorSet(req.Embedder, sets)
		if err != nil {
			return resp, server.BadRequest(err)
		}
		req.Embedder, resp.Embedder = id, id
	}
	if req.Embedder == inUse {
		return resp, server.BadRequest(fmt.Errorf("%s is the embedder in use: search reads its vectors, and they would all be computed again; "+
			"switch embedders first (its vectors are kept until you drop them)", req.Embedder))
	}
	if vectors.SpaceMayBe(inUse, req.Embedder) {
		// A remote embedder whose server has not answered: these are
		// probably its own vectors.
		return resp, server.BadRequest(fmt.Errorf("%s may be the vectors of the embedder in use (%s: its server has not answered yet, so its dimension is not known): "+
			"search reads them once it answers, and they would all be computed again; drop them once it answers and runs with another dimension, or switch embedders first", req.Embedder, inUse))
	}
	n, err := db.DropVectors(ctx, req.Embedder)
	if err != nil {
		return resp, err
	}
	if n == 0 {
		return resp, server.BadRequest(fmt.Errorf("the index holds no vectors of %q (see 'continuity vectors')", req.Embedder))
	}
	resp.Vectors = n
	if err := os.Remove(vectors.SnapshotPath(db, req.Embedder)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return resp, fmt.Errorf("drop vectors: remove the snapshot of %s: %w", req.Embedder, err)
	}
	return resp, nil
}

// resolveVectorSet is the identity of the stored vector set that name
// names: the identity itself, or a unique beginning of one, also without
// the "builtin:" of the embedders in the binary ("uselite", "hash",
// "hf:bge"), as a user types the embedder's name. None or several: an
// error that lists the identities held.
func resolveVectorSet(name string, sets []index.VectorSet) (string, error) {
	var held, match []string
	for _, s := range sets {
		if s.Identity == name {
			return name, nil
		}
		held = append(held, s.Identity)
		if strings.HasPrefix(s.Identity, name) || strings.HasPrefix(strings.TrimPrefix(s.Identity, "builtin:"), name) {
			match = append(match, s.Identity)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) > 1:
		return "", fmt.Errorf("%q names the vectors of %d embedders: %s; give one as 'continuity vectors' lists it", name, len(match), strings.Join(match, ", "))
	case len(held) == 0:
		return "", fmt.Errorf("the index holds no vectors of %q: it holds none at all", name)
	}
	return "", fmt.Errorf("the index holds no vectors of %q; it holds those of %s (give one as 'continuity vectors' lists it)", name, strings.Join(held, ", "))
}

// DropVectors removes another embedder's stored vectors (dropVectors).
func (e *Engine) DropVectors(ctx context.Context, req DropVectorsRequest) (DropVectorsResponse, error) {
	return dropVectors(ctx, e.db, e.inUse(), req)
}

// inUse is the space identity of the engine's embedder, or its pattern
// while a remote one has not learned its dimension (vectors.SpacePattern);
// "" when none.
func (e *Engine) inUse() string {
	if sp := e.embedding.Space(); sp != nil {
		return sp.Identity()
	}
	return vectors.SpacePattern(e.embedding.Embedder())
}

// VectorSets lists the stored vectors by embedder (read from the index),
// and the embedder in use: the daemon's when one answers, else the one
// configured here.
func (c *Client) VectorSets(ctx context.Context) (VectorSets, error) {
	var out VectorSets
	db, err := openReader(c.ws)
	if err != nil {
		return out, err
	}
	defer db.Close()
	if out.Sets, err = db.VectorSets(ctx); err != nil {
		return out, err
	}
	out.InUse = c.inUse(ctx)
	return out, nil
}

// inUse is the daemon's embedder when one answers, else the one
// configured here: its space identity, or its pattern while a remote one
// has not learned its dimension (vectors.SpacePattern); "" when unknown.
func (c *Client) inUse(ctx context.Context) string {
	if p, ok := c.daemonEmbedder(ctx); ok {
		return cmp.Or(p.Space, p.SpacePattern)
	}
	if c.embedder == nil {
		return ""
	}
	emb, err := c.embedder()
	if err != nil {
		return ""
	}
	return vectors.SpacePattern(emb)
}

// DropVectors removes another embedder's stored vectors, through the
// daemon when one runs (the index's one writer), else here; the embedder
// in use (the daemon's, else the one configured here) is refused.
func (c *Client) DropVectors(ctx context.Context, req DropVectorsRequest) (DropVectorsResponse, error) {
	var resp DropVectorsResponse
	err := c.route(ctx, "drop_vectors", req, &resp, false, func() error {
		e, err := Open(c.ws, Options{})
		if err != nil {
			return err
		}
		defer e.Close()
		resp, err = dropVectors(ctx, e.db, c.inUse(ctx), req)
		return err
	})
	return resp, err
}
