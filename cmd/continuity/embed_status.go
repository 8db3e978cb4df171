package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/vectors"
)

// embedStatusCall is the daemon call that reports the embed worker's
// progress (vectors.WorkerStatus), for `continuity status`.
const embedStatusCall = "embed_status"

// embedStatusReply is the daemon's answer to embedStatusCall.
type embedStatusReply struct {
	Identity string  `json:"identity"`
	Pending  int64   `json:"pending"`
	Rate     float64 `json:"rate"` // exchanges per second, 0 until measured
}

func registerEmbedStatus(srv *server.Server, w *vectors.Worker) {
	srv.Handle(embedStatusCall, func(context.Context, json.RawMessage) (any, error) {
		st := w.Status()
		return embedStatusReply{Identity: st.Identity, Pending: st.Pending, Rate: st.Rate}, nil
	})
}

// embedProgress is the embedding progress in `continuity status`.
type embedProgress struct {
	Done    int64   `json:"done"`    // exchanges with a vector of the current embedder
	Total   int64   `json:"total"`   // exchanges
	Percent float64 `json:"percent"` // Done / Total
	// Rate (exchanges per second) and ETASeconds come from a running
	// daemon's embed worker; 0 when no daemon runs or it has not
	// measured yet.
	Rate       float64 `json:"rate"`
	ETASeconds float64 `json:"eta_seconds"`
}

// readEmbedProgress computes the progress of identity id from the index
// counts and, when a daemon answers quickly, its embedding rate.
func readEmbedProgress(ctx context.Context, cache, id string, done, pending int64) *embedProgress {
	p := &embedProgress{Done: done, Total: done + pending}
	if p.Total > 0 {
		p.Percent = 100 * float64(done) / float64(p.Total)
	}
	if pending == 0 {
		return p
	}
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	var r embedStatusReply
	if err := server.NewClient(server.SocketPath(cache)).Call(cctx, embedStatusCall, struct{}{}, &r); err == nil && r.Identity == id && r.Rate > 0 {
		p.Rate = r.Rate
		p.ETASeconds = float64(pending) / r.Rate
	}
	return p
}

// String renders p for the status table.
func (p *embedProgress) String() string {
	s := fmt.Sprintf("%d of %d exchanges (%.1f%%)", p.Done, p.Total, p.Percent)
	switch {
	case p.Done == p.Total:
	case p.Rate > 0:
		s += fmt.Sprintf(", %.0f/s, about %s left", p.Rate, (time.Duration(p.ETASeconds) * time.Second).Round(time.Second))
	default:
		s += ", no rate yet (the daemon or `continuity ingest` embeds the rest)"
	}
	return s
}
