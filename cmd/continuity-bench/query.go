package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/synth"
	"github.com/praxis-os/continuity/server"
)

// benchQuery: with n exchanges indexed and embedded, the daemon's
// start-to-ready time (socket answering, vector space loaded from SQLite,
// nothing re-embedded), its RSS, and search and resume latency through the
// socket, against BM25-only search in the same run.
//
// vectors says how the exchanges get their vectors: vectorsSeed (each
// distinct text embedded once, seedVectors) or vectorsEmbed (ingest embeds
// every exchange with the model, as a user's would, at the model's rate:
// docs/embedders.md).
//
// ws is the workspace; one that a previous run prepared (its size file
// says so) is measured again as it is, without ingesting or seeding.
func benchQuery(ctx context.Context, bin, ws string, n int, vectors string, nq int, prepareOnly bool) error {
	// Before a preparation that may take a while.
	if err := checkNoDaemon(ctx, ws, filepath.Join(ws, ".praxis-os", ".cache", "continuity")); err != nil {
		return err
	}
	sizeFile := filepath.Join(ws, "continuity-bench-size")
	if b, err := os.ReadFile(sizeFile); err == nil {
		m, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", sizeFile, err)
		}
		fmt.Printf("reusing the workspace %s prepared by an earlier run (%d exchanges; --lines ignored)\n", ws, m)
		n = m
	} else {
		if err := prepareQuery(ctx, bin, ws, n, vectors); err != nil {
			return err
		}
		if err := os.WriteFile(sizeFile, []byte(strconv.Itoa(n)+"\n"), 0o600); err != nil {
			return err
		}
	}
	if prepareOnly {
		return nil
	}
	return measureQuery(ctx, bin, ws, n, nq)
}

// prepareQuery writes n exchanges into ws, ingests them and gives them
// their vectors.
func prepareQuery(ctx context.Context, bin, ws string, n int, vectors string) error {
	logs := filepath.Join(ws, ".praxis-os", ".conversations")
	// Sessions and resume chains of the shapes resume is measured on
	// (resume.go).
	if _, err := writeResumeLogs(logs, n); err != nil {
		return err
	}
	args := []string{"ingest", "--log-level", "warn", "--root", ws}
	if vectors == vectorsSeed {
		args = append(args, "--no-embed")
	}
	ingStart := time.Now()
	ing := exec.CommandContext(ctx, bin, args...)
	ing.Stderr = os.Stderr
	if err := ing.Run(); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	ingTook := time.Since(ingStart)
	how := "with vectors"
	if vectors == vectorsSeed {
		how = "--no-embed"
	}
	fmt.Printf("ingest (%s): %d exchanges in %s, %.0f exchanges/s\n", how, n, ingTook.Round(time.Millisecond), float64(n)/ingTook.Seconds())
	if vectors == vectorsSeed {
		rep, err := seedVectors(ctx, ws, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Println(rep)
	}
	printDiskUse(filepath.Join(ws, ".praxis-os", ".cache", "continuity"))
	return nil
}

// measureQuery starts the daemon on the prepared workspace ws and
// measures it.
func measureQuery(ctx context.Context, bin, ws string, n, nq int) error {
	emb := os.Getenv("CONTINUITY_EMBEDDER")
	if emb == "" {
		emb = "the default"
	}
	fmt.Printf("%d exchanges, embedder %s, %d queries through the daemon socket\n", n, emb, nq)
	cache := filepath.Join(ws, ".praxis-os", ".cache", "continuity")
	reportSnapshots(cache)
	if err := checkNoDaemon(ctx, ws, cache); err != nil {
		return err
	}
	start := time.Now()
	d, err := startQueryDaemon(ctx, bin, ws)
	if err != nil {
		return err
	}
	defer d.stop()
	c := server.NewClient(server.SocketPath(cache))
	answering, err := d.waitReady(ctx, c, start)
	if err != nil {
		return err
	}
	ready := time.Since(start)
	if err := checkServedBy(ctx, c, d.cmd.Process.Pid); err != nil {
		return err
	}
	fmt.Printf("daemon start-to-answering (socket up, BM25 searchable): %s\n", answering.Round(time.Millisecond))
	fmt.Printf("daemon start-to-ready (vector space loaded, nothing re-embedded): %s\n", ready.Round(time.Millisecond))
	if report := waitBM25Engine(ctx, c, start); report != nil {
		defer report()
	}
	if rss, err := vmRSS(d.cmd.Process.Pid); err == nil {
		fmt.Printf("daemon RSS when ready: %.1f MiB\n", float64(rss)/1024)
	}
	if err := measureLatencies(ctx, c, benchQueries(nq)); err != nil {
		return err
	}
	return reportRSS(d.cmd.Process.Pid)
}

// reportSnapshots says whether the daemon will read its vector space from
// a snapshot or from SQLite.
func reportSnapshots(cache string) {
	snaps, _ := filepath.Glob(filepath.Join(cache, "vectors-*.snap"))
	if len(snaps) == 0 {
		fmt.Println("no vector snapshot: the space is loaded from SQLite (int8 vectors since schema version 10; older versions then wrote a snapshot in the background)")
		return
	}
	for _, p := range snaps {
		if fi, err := os.Stat(p); err == nil {
			fmt.Printf("vector snapshot present: %s (%.1f MiB): a version before schema 10 reads the space from it, then what is newer from SQLite (version 10 removes it)\n", filepath.Base(p), float64(fi.Size())/(1<<20))
		}
	}
}

// benchDaemon is a daemon the bench started.
type benchDaemon struct {
	bin    string
	cmd    *exec.Cmd
	exited chan error // its exit, once; put back by whoever takes it
}

// startQueryDaemon starts a daemon on ws; unlike startDaemon it does not
// wait for it (waitReady times its start).
func startQueryDaemon(ctx context.Context, bin, ws string) (*benchDaemon, error) {
	d := &benchDaemon{bin: bin, cmd: exec.CommandContext(ctx, bin, "daemon", "--root", ws, "--log-level", "warn"), exited: make(chan error, 1)}
	d.cmd.Stderr = os.Stderr
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { d.exited <- d.cmd.Wait() }()
	return d, nil
}

// stop ends the daemon and waits for it.
func (d *benchDaemon) stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.exited
}

// waitReady waits until a vector search answers with results (the space
// is loaded) and returns when the socket first answered a search (BM25
// at least), since start. It asks every readyProbe: each probe is a
// search the daemon answers while it loads.
func (d *benchDaemon) waitReady(ctx context.Context, c *server.Client, start time.Time) (answering time.Duration, err error) {
	for {
		select {
		case err := <-d.exited:
			d.exited <- err // for stop
			return 0, fmt.Errorf("the daemon (%s) exited before it was ready: %v", d.bin, err)
		default:
		}
		var out struct{ Results []any }
		err := c.Call(ctx, "search", map[string]any{"query": "sqlite commit", "mode": "vector", "limit": 1}, &out)
		if err == nil && answering == 0 {
			answering = time.Since(start)
		}
		if err == nil && len(out.Results) == 1 {
			return answering, nil
		}
		if time.Since(start) > 120*time.Second {
			return 0, fmt.Errorf("daemon not ready after 120s: %v", err)
		}
		time.Sleep(readyProbe)
	}
}

// readyProbe is how often waitReady asks: the times it reports are late
// by up to this. It was 5 ms: at 1M exchanges a probe is a search of
// several milliseconds (embedding the query, BM25), and 200 of them a
// second took most of a core of two from the daemon being timed (its
// start to ready read 9.5 s under the probes, 4.0 s in its own log).
const readyProbe = 25 * time.Millisecond

// waitBM25Engine waits for the bm25 engine of a daemon that has one:
// ready = opened from its files, or built, and caught up with the index;
// until then FTS5 answers BM25. It returns what reports the engine's
// answers at the end, nil without an engine.
func waitBM25Engine(ctx context.Context, c *server.Client, start time.Time) (report func()) {
	st, ok := bm25Status(ctx, c)
	if !ok {
		fmt.Println("no bm25 engine in this daemon: FTS5 answers BM25")
		return nil
	}
	for st.State != "ready" && time.Since(start) < 30*time.Minute {
		time.Sleep(20 * time.Millisecond)
		st, _ = bm25Status(ctx, c)
	}
	took := "opened from its files"
	if st.BuildSeconds > 0 {
		took = fmt.Sprintf("built in %.1fs", st.BuildSeconds)
	}
	fmt.Printf("daemon start-to-bm25-engine-ready: %s (%d exchanges, %s)\n", time.Since(start).Round(time.Millisecond), st.Docs, took)
	return func() {
		if st, ok := bm25Status(ctx, c); ok {
			fmt.Printf("bm25 engine: %d plain-word queries answered, %d left to FTS5 (not current)\n", st.Answered, st.FellBack)
		}
	}
}

// benchQueries are nq queries: the corpus's questions when there is one,
// else synthetic texts.
func benchQueries(nq int) []string {
	gen := synth.New(rand.New(rand.NewPCG(9, 9)))
	queries := make([]string, nq)
	corp := loadCorpus()
	for i := range queries {
		if corp != nil && len(corp.questions) > 0 {
			queries[i] = corp.questions[i%len(corp.questions)]
		} else {
			queries[i] = strings.TrimSpace(gen.Text(20 + gen.Rand().IntN(40)))
		}
	}
	return queries
}

// measureLatencies times searches of each mode and resumes, against BM25
// searches as the baseline.
func measureLatencies(ctx context.Context, c *server.Client, queries []string) error {
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
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }
	q := func(ds []time.Duration, p int) time.Duration { return ds[len(ds)*p/100] }
	bm25, err := lat("search", func(q string) any { return map[string]any{"query": q, "mode": "bm25"} })
	if err != nil {
		return err
	}
	fmt.Printf("search bm25 only (baseline): p50 %s ms, p95 %s ms\n", ms(q(bm25, 50)), ms(q(bm25, 95)))
	vector, err := lat("search", func(q string) any { return map[string]any{"query": q, "mode": "vector"} })
	if err != nil {
		return err
	}
	fmt.Printf("search vectors only:         p50 %s ms, p95 %s ms  (%.2fx baseline p50)\n", ms(q(vector, 50)), ms(q(vector, 95)), float64(q(vector, 50))/float64(q(bm25, 50)))
	hybrid, err := lat("search", func(q string) any { return map[string]any{"query": q} })
	if err != nil {
		return err
	}
	fmt.Printf("search hybrid:               p50 %s ms, p95 %s ms  (%.2fx baseline p50)\n", ms(q(hybrid, 50)), ms(q(hybrid, 95)), float64(q(hybrid, 50))/float64(q(bm25, 50)))
	// The first resume after start, when nothing of the chain is cached.
	cold := time.Now()
	if err := c.Call(ctx, "resume", map[string]any{"session": longSession(longChain - 1), "query": queries[0], "budget": 2000}, &map[string]any{}); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	fmt.Printf("first resume after start (50-session chain, query, nothing cached): %s ms\n", ms(time.Since(cold)))
	return benchResume(ctx, c, queries, q(bm25, 50))
}

// reportRSS prints the daemon's memory after the queries.
func reportRSS(pid int) error {
	rss, err := vmRSS(pid)
	if err != nil {
		return err
	}
	hwm, err := vmHWM(pid)
	if err != nil {
		return err
	}
	anon, _ := procStatus(pid, "RssAnon:")
	file, _ := procStatus(pid, "RssFile:")
	fmt.Printf("daemon RSS after the queries: %.1f MiB (peak %.1f MiB; anonymous %.1f MiB, file-backed %.1f MiB: mapped files the kernel can take back)\n",
		float64(rss)/1024, float64(hwm)/1024, float64(anon)/1024, float64(file)/1024)
	return nil
}

// How the query bench's exchanges get their vectors (--vectors).
const (
	vectorsSeed  = "seed"
	vectorsEmbed = "embed"
)

// printDiskUse prints the size of the index files in dir.
func printDiskUse(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var parts []string
	var total int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
			parts = append(parts, fmt.Sprintf("%s %.1f MiB", e.Name(), float64(fi.Size())/(1<<20)))
		}
	}
	fmt.Printf("index on disk: %.1f MiB (%s)\n", float64(total)/(1<<20), strings.Join(parts, ", "))
}

// vmRSS reads a process's resident set size in KiB.
func vmRSS(pid int) (int64, error) { return procStatus(pid, "VmRSS:") }

// vmHWM reads a process's peak resident set size in KiB.
func vmHWM(pid int) (int64, error) { return procStatus(pid, "VmHWM:") }

// procStatus reads a KiB field of /proc/<pid>/status.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field) {
			f := strings.Fields(l)
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s for pid %d", field, pid)
}

// checkNoDaemon fails when a continuity process already holds the
// workspace: the daemon the bench starts could not take the index lock and
// would exit, and the figures would be another process's (another binary,
// perhaps, with its caches warm).
func checkNoDaemon(ctx context.Context, ws, cache string) error {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var pong struct {
		PID int `json:"pid"`
	}
	if err := server.NewClient(server.SocketPath(cache)).Call(cctx, "ping", struct{}{}, &pong); err == nil {
		return fmt.Errorf("a continuity daemon (pid %d) already serves %s: the bench measures the daemon it starts "+
			"(--bin), so stop that one first (kill %d)", pong.PID, ws, pong.PID)
	}
	if _, err := os.Stat(cache); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l, err := index.AcquireLock(cache)
	if err != nil {
		return fmt.Errorf("%s is in use: %w; the bench measures the daemon it starts (--bin), so stop that process first", ws, err)
	}
	return l.Close()
}

// checkServedBy fails unless the daemon answering on the socket is the
// process pid (the one the bench started).
func checkServedBy(ctx context.Context, c *server.Client, pid int) error {
	var pong struct {
		PID int `json:"pid"`
	}
	if err := c.Call(ctx, "ping", struct{}{}, &pong); err != nil {
		return fmt.Errorf("ping the daemon: %w", err)
	}
	if pong.PID != pid {
		return fmt.Errorf("the socket is served by pid %d, not by the daemon the bench started (pid %d): "+
			"stop the other one and run the bench again", pong.PID, pid)
	}
	return nil
}

// bm25State is what the query bench reads of the daemon's bm25 engine
// (the daemon's "bm25_status" call, lexicon.Status).
type bm25State struct {
	State        string  `json:"state"`
	Docs         int     `json:"docs"`
	BuildSeconds float64 `json:"build_seconds"`
	Answered     int64   `json:"answered"`
	FellBack     int64   `json:"fell_back"`
}

// bm25Status asks the daemon for its bm25 engine's state; ok is false for
// a daemon without one.
func bm25Status(ctx context.Context, c *server.Client) (bm25State, bool) {
	var st bm25State
	err := c.Call(ctx, "bm25_status", struct{}{}, &st)
	return st, err == nil
}
