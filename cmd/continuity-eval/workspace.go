package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/vectors"
	wspace "github.com/praxis-os/continuity/workspace"
)

// workspace is one question's haystack, indexed with the product's
// pipeline (engine.Open, CatchUp, Embed) in a fresh temporary workspace:
// the log copied into .praxis-os/.conversations, indexed into
// .praxis-os/.cache/continuity, every exchange embedded.
type workspace struct {
	root string
	eng  *engine.Engine
	db   *index.DB
	more []func() *vectors.Space
	// workers embed and hold the more spaces (closed before the engine).
	workers []*embedding.Worker

	indexTime, embedTime time.Duration
}

// openWorkspace builds the workspace of one log file.
func openWorkspace(ctx context.Context, logPath string, emb embed.Embedder) (*workspace, error) {
	return buildWorkspace(ctx, emb, logPath, func(logs string) error {
		return copyFile(logPath, filepath.Join(logs, filepath.Base(logPath)))
	})
}

// buildWorkspace makes a fresh workspace, lets fill write its logs into
// the logs folder, then indexes and embeds them. what names the haystack
// in errors.
func buildWorkspace(ctx context.Context, emb embed.Embedder, what string, fill func(logs string) error) (_ *workspace, err error) {
	root, err := os.MkdirTemp("", "continuity-eval-")
	if err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	ws := &workspace{root: root}
	defer func() {
		if err != nil {
			ws.close()
		}
	}()
	logs := wspace.At(root).Logs
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	if err := fill(logs); err != nil {
		return nil, err
	}

	start := time.Now()
	if ws.eng, err = engine.Open(wspace.At(root), engine.Options{Embedder: emb, EmbedBatch: 256, Watch: engine.Watch{NoNotify: true}}); err != nil {
		return nil, err
	}
	ws.db = ws.eng.DB()
	if _, err := ws.eng.CatchUp(ctx, nil); err != nil {
		return nil, fmt.Errorf("index %s: %w", what, err)
	}
	ws.indexTime = time.Since(start)

	start = time.Now()
	if _, err := ws.eng.Embed(ctx, nil); err != nil {
		return nil, fmt.Errorf("embed %s: %w", what, err)
	}
	for _, e := range moreSpaces {
		w, err := embedding.New(embedding.Config{DB: ws.db, Embedder: e, BatchSize: 256})
		if err != nil {
			return nil, err
		}
		// Each space's vectors stay in the index beside the others'
		// (kept per embedder).
		if err := w.Drain(ctx); err != nil {
			return nil, fmt.Errorf("embed %s for %s: %w", what, vectors.SpaceIdentity(e), err)
		}
		ws.more = append(ws.more, w.Space)
		ws.workers = append(ws.workers, w)
	}
	ws.embedTime = time.Since(start)
	return ws, nil
}

// moreSpaces are the embedders of the further vector spaces searched with
// the main one, largest similarity wins (--more): set once by run.
var moreSpaces []embed.Embedder

// searcher returns a Searcher over the workspace with the given options.
func (ws *workspace) searcher(opts search.Options) (*search.Searcher, error) {
	return ws.eng.Searcher(opts, ws.more...)
}

// space is the workspace's vector space (of the main embedder).
func (ws *workspace) space() *vectors.Space { return ws.eng.Worker().Space() }

func (ws *workspace) close() {
	for _, w := range ws.workers {
		w.Close()
	}
	if ws.eng != nil {
		ws.eng.Close()
	}
	os.RemoveAll(ws.root)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("copy log: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("copy log: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy log to %s: %w", to, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copy log to %s: %w", to, err)
	}
	return nil
}
