package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
)

// TestIngestEmbedLine: the line ingest shows while it embeds says how
// many of how many, the rate, the time left, and that Ctrl-C is safe.
func TestIngestEmbedLine(t *testing.T) {
	for _, tc := range []struct {
		p    IngestEmbed
		want []string
		not  []string
	}{
		{IngestEmbed{Stored: 0, Pending: -1, Elapsed: 2 * time.Second}, []string{"counting the exchanges", "Ctrl-C is safe: the daemon computes the rest"}, []string{"of"}},
		{IngestEmbed{Stored: 0, Pending: 50000}, []string{"0 of 50000 exchanges (0%)", "measuring the rate", "Ctrl-C is safe"}, []string{"left"}},
		{IngestEmbed{Stored: 10000, Pending: 40000, Rate: 89}, []string{"10000 of 50000 exchanges (20%)", "89/s", "about 7m30s left", "Ctrl-C is safe"}, nil},
		{IngestEmbed{Stored: 900, Pending: 100, Rate: 50}, []string{"900 of 1000 exchanges (90%)", "50/s", "about 2s left"}, nil},
		{IngestEmbed{Stored: 1000, Pending: 0, Rate: 50}, []string{"1000 of 1000 exchanges (100%)", "50/s"}, []string{"left"}},
	} {
		got := tc.p.Line()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q lacks %q", tc.p, got, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%+v: %q has %q", tc.p, got, w)
			}
		}
	}
}

// slowEmbedder is the hash embedder taking its time, so that progress
// is seen while it embeds.
type slowEmbedder struct{ embed.Embedder }

func (s slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	time.Sleep(50 * time.Millisecond)
	return s.Embedder.Embed(ctx, texts)
}

// TestEmbedWatch: ingest's embedding phase reports its progress while it
// embeds: the exchanges pending, then stored.
func TestEmbedWatch(t *testing.T) {
	ws := newLayout(t)
	e, err := Open(ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []IngestEmbed
	x, err := e.EmbedWatch(ctx, slowEmbedder{hashEmbedder(t)}, time.Millisecond, func(p IngestEmbed) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	})
	if err != nil || x.Stored != 10 {
		t.Fatalf("EmbedWatch: %+v %v", x, err)
	}
	mu.Lock()
	defer mu.Unlock()
	counted := false
	for _, p := range seen {
		if p.Pending >= 0 {
			counted = true
			if p.Stored+p.Pending != 10 {
				t.Errorf("progress %+v: want 10 in all", p)
			}
		}
	}
	if !counted {
		t.Errorf("no progress with the count seen: %+v", seen)
	}
}
