package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
)

// lexiconStatusCall is the daemon call that reports the bm25 engine's
// state (search.LexiconStatus), for `continuity status`.
const lexiconStatusCall = "bm25_status"

func registerLexiconStatus(srv *server.Server, l *search.Lexicon) {
	srv.Handle(lexiconStatusCall, func(ctx context.Context, _ json.RawMessage) (any, error) {
		return l.Status(ctx), nil
	})
}

// readLexiconStatus asks the daemon for its bm25 engine's state; nil when
// no daemon answers quickly (or an older one, without the engine).
func readLexiconStatus(ctx context.Context, cache string) *search.LexiconStatus {
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	var st search.LexiconStatus
	if err := server.NewClient(server.SocketPath(cache)).Call(cctx, lexiconStatusCall, struct{}{}, &st); err != nil {
		return nil
	}
	return &st
}

// lexiconLine renders the engine's state for the status table.
func lexiconLine(st *search.LexiconStatus, daemon bool) string {
	if st == nil {
		if daemon {
			return "unknown (the daemon did not say)"
		}
		return "not running (the daemon keeps it; searches without a daemon use FTS5)"
	}
	var s string
	switch st.State {
	case "ready":
		s = fmt.Sprintf("ready: %d %s, up to event %d (plain-word BM25 queries use it)", st.Docs, plural(st.Docs, "exchange", "exchanges"), st.Watermark)
	case "building":
		s = fmt.Sprintf("building: %d %s, up to event %d, %d events to read (FTS5 answers meanwhile)", st.Docs, plural(st.Docs, "exchange", "exchanges"), st.Watermark, st.Behind)
	case "dropped":
		s = "being removed (forget); built again after"
	default:
		s = st.State
	}
	if st.Answered+st.FellBack > 0 {
		s += fmt.Sprintf("; %d %s answered, %d left to FTS5", st.Answered, plural(int(st.Answered), "query", "queries"), st.FellBack)
	}
	if st.BuildSeconds > 0 {
		s += fmt.Sprintf("; last build %.1fs", st.BuildSeconds)
	}
	if st.Error != "" {
		s += "; last error: " + st.Error
	}
	return s
}
