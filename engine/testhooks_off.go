//go:build !continuity_testhooks

package engine

import (
	"log/slog"

	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/watcher"
)

// The shipped binary has no fault injection: see testhooks.go, built
// with the tag continuity_testhooks by the end-to-end tests only.

// withTestFaults is db.
func withTestFaults(db *index.DB) watcher.Store { return db }

// lexiconConfig is the bm25 engine's set-up.
func lexiconConfig(db *index.DB, log *slog.Logger) lexicon.Config {
	return lexicon.Config{DB: db, Logger: log}
}
