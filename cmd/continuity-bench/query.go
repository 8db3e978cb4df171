package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/praxis-os/continuity/server"
)

// benchQuery: with n exchanges indexed and embedded, the daemon's
// start-to-ready time (socket answering, vector space loaded from SQLite,
// nothing re-embedded), its RSS, and search and resume latency through the
// socket, against BM25-only search in the same run.
func benchQuery(ctx context.Context, bin, tmp string, n int) error {
	ws := filepath.Join(tmp, "ws")
	logs := filepath.Join(ws, ".praxis-os", ".conversations")
	// Sessions and resume chains of the shapes resume is measured on
	// (resume.go).
	if _, err := writeResumeLogs(logs, n); err != nil {
		return err
	}
	ing := exec.CommandContext(ctx, bin, "ingest", "--log-level", "warn", "--root", ws)
	ing.Stderr = os.Stderr
	if err := ing.Run(); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}

	start := time.Now()
	d := exec.CommandContext(ctx, bin, "daemon", "--root", ws, "--log-level", "warn")
	d.Stderr = os.Stderr
	if err := d.Start(); err != nil {
		return err
	}
	defer func() { d.Process.Signal(syscall.SIGTERM); d.Wait() }()
	c := server.NewClient(server.SocketPath(filepath.Join(ws, ".praxis-os", ".cache", "continuity")))
	// Ready = a vector search answers with results (the space is loaded).
	for {
		var out struct{ Results []any }
		err := c.Call(ctx, "search", map[string]any{"query": "sqlite commit", "mode": "vector", "limit": 1}, &out)
		if err == nil && len(out.Results) == 1 {
			break
		}
		if time.Since(start) > 60*time.Second {
			return fmt.Errorf("daemon not ready after 60s: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ready := time.Since(start)

	rng := rand.New(rand.NewPCG(9, 9))
	queries := make([]string, 200)
	corp := loadCorpus()
	for i := range queries {
		if corp != nil && len(corp.questions) > 0 {
			queries[i] = corp.questions[i%len(corp.questions)]
		} else {
			queries[i] = strings.TrimSpace(text(rng, 20+rng.IntN(40)))
		}
	}
	lat := func(name string, req func(q string) any) ([]time.Duration, error) {
		var ds []time.Duration
		for _, q := range queries {
			s := time.Now()
			var out map[string]any
			if err := c.Call(ctx, name, req(q), &out); err != nil {
				return nil, fmt.Errorf("%s %q: %w", name, q, err)
			}
			ds = append(ds, time.Since(s))
		}
		slices.Sort(ds)
		return ds, nil
	}
	bm25, err := lat("search", func(q string) any { return map[string]any{"query": q, "mode": "bm25"} })
	if err != nil {
		return err
	}
	vector, err := lat("search", func(q string) any { return map[string]any{"query": q, "mode": "vector"} })
	if err != nil {
		return err
	}
	hybrid, err := lat("search", func(q string) any { return map[string]any{"query": q} })
	if err != nil {
		return err
	}
	// The first resume after start, when nothing of the chain is cached.
	cold := time.Now()
	if err := c.Call(ctx, "resume", map[string]any{"session": longSession(longChain - 1), "query": queries[0], "budget": 2000}, &map[string]any{}); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	coldResume := time.Since(cold)
	rss, err := vmRSS(d.Process.Pid)
	if err != nil {
		return err
	}
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }
	q := func(ds []time.Duration, p int) time.Duration { return ds[len(ds)*p/100] }
	emb := os.Getenv("CONTINUITY_EMBEDDER")
	if emb == "" {
		emb = "the default"
	}
	fmt.Printf("%d exchanges, embedder %s, 200 queries through the daemon socket\n", n, emb)
	fmt.Printf("daemon start-to-ready (vector space loaded, nothing re-embedded): %s\n", ready.Round(time.Millisecond))
	fmt.Printf("daemon RSS after the queries: %.1f MiB\n", float64(rss)/1024)
	fmt.Printf("search bm25 only (baseline): p50 %s ms, p95 %s ms\n", ms(q(bm25, 50)), ms(q(bm25, 95)))
	fmt.Printf("search vectors only:         p50 %s ms, p95 %s ms  (%.2fx baseline p50)\n", ms(q(vector, 50)), ms(q(vector, 95)), float64(q(vector, 50))/float64(q(bm25, 50)))
	fmt.Printf("search hybrid:               p50 %s ms, p95 %s ms  (%.2fx baseline p50)\n", ms(q(hybrid, 50)), ms(q(hybrid, 95)), float64(q(hybrid, 50))/float64(q(bm25, 50)))
	fmt.Printf("first resume after start (50-session chain, query, nothing cached): %s ms\n", ms(coldResume))
	return benchResume(ctx, c, queries, q(bm25, 50))
}

// vmRSS reads a process's resident set size in KiB.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
