package main

import (
	"testing"

	"github.com/praxis-os/continuity/engine"
)

// lexiconLine: the status table's line for the bm25 engine, in each state,
// singular and plural.
func TestLexiconLine(t *testing.T) {
	for _, c := range []struct {
		name   string
		st     *engine.BM25Status
		daemon bool
		want   string
	}{
		{"no daemon", nil, false, "not running (the daemon keeps it; searches without a daemon use FTS5)"},
		{"daemon silent", nil, true, "unknown (the daemon did not say)"},
		{"ready, one", &engine.BM25Status{State: "ready", Docs: 1, Watermark: 5, Answered: 1},
			true, "ready: 1 exchange, up to event 5 (plain-word BM25 queries use it); 1 query answered, 0 left to FTS5"},
		{"ready, many", &engine.BM25Status{State: "ready", Docs: 3, Watermark: 9, Answered: 2, FellBack: 1, BuildSeconds: 1.25},
			true, "ready: 3 exchanges, up to event 9 (plain-word BM25 queries use it); 2 queries answered, 1 left to FTS5; last build 1.2s"},
		{"building", &engine.BM25Status{State: "building", Docs: 0, Watermark: 0, Behind: 40, Error: "disk full"},
			true, "building: 0 exchanges, up to event 0, 40 events to read (FTS5 answers meanwhile); last error: disk full"},
		{"dropped", &engine.BM25Status{State: "dropped"}, true, "being removed (forget); built again after"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := lexiconLine(c.st, c.daemon); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
