package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/server"
	wslayout "github.com/praxis-os/continuity/workspace"
)

// roundTripQueries are searched in turn by BenchmarkRoundTrip.
var roundTripQueries = []string{
	"database migration failed", "how did we fix the flaky login test", "memory leak in the worker",
	"deploy to production rollback", "rate limit on the API", "error handling in the parser",
	"sqlite locking error busy", "the build is slow on CI",
}

// BenchmarkRoundTrip times what a user waits for at the shell: the binary
// started (fork and exec included) for `continuity --version` and for a
// `continuity search` answered by the daemon, and the same search run in
// this process (the client's part and the daemon's, without the start):
//
//	go test -tags sqlite_fts5 ./cmd/continuity -run '^$' -bench RoundTrip -benchtime 50x
//
// BENCH_ROUNDTRIP_ROOT names a workspace whose daemon runs already (say,
// the 100k one `continuity-bench query --prepare --workspace DIR` makes,
// with `continuity daemon --root DIR` started on it); without it a
// workspace of 5,000 synthesized exchanges is ingested and its daemon
// started. CONTINUITY_E2E_BIN measures another build (main's, say). The
// figures, against grep and hello world, are in docs/performance.md.
func BenchmarkRoundTrip(b *testing.B) {
	root := os.Getenv("BENCH_ROUNDTRIP_ROOT")
	if root == "" {
		root = roundTripWorkspace(b, 5000)
	}
	b.Run("start", func(b *testing.B) {
		timeEach(b, func(int) {
			if out, err := exec.Command(binPath, "--version").Output(); err != nil || len(out) == 0 {
				b.Fatalf("continuity --version: %v", err)
			}
		})
	})
	b.Run("search", func(b *testing.B) {
		timeEach(b, func(i int) {
			q := roundTripQueries[(i+1)%len(roundTripQueries)]
			if out, err := exec.Command(binPath, "--root", root, "search", q).Output(); err != nil || len(out) == 0 {
				b.Fatalf("continuity search %q: %v", q, err)
			}
		})
	})
	b.Run("search-in-process", func(b *testing.B) {
		timeEach(b, func(i int) {
			q := roundTripQueries[(i+1)%len(roundTripQueries)]
			if code := run(b.Context(), []string{"--root", root, "search", q}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
				b.Fatalf("search %q: exit %d", q, code)
			}
		})
	})
}

// timeEach runs op b.N times and reports, beside the mean (ns/op), the
// median and the fastest in milliseconds: a process start on a shared
// machine has a long tail that the mean follows. op runs once untimed
// first: a binary just linked starts tens of ms slower until its pages
// are in the page cache.
func timeEach(b *testing.B, op func(i int)) {
	b.StopTimer()
	op(-1)
	b.StartTimer()
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		op(i)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(took[0])/1e6, "min-ms")
}

// roundTripWorkspace ingests n synthesized exchanges into a temporary
// workspace and starts its daemon (stopped at the end of the benchmark);
// it returns the workspace's root once the daemon answers.
func roundTripWorkspace(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	benchLogs(b, filepath.Join(root, ".praxis-os", ".conversations"), n, false)
	if out, err := exec.Command(binPath, "--root", root, "ingest", "--log-level", "warn").CombinedOutput(); err != nil {
		b.Fatalf("ingest: %v\n%s", err, out)
	}
	d := exec.Command(binPath, "daemon", "--root", root, "--log-level", "warn")
	if err := d.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		d.Process.Signal(os.Interrupt)
		d.Wait()
	})
	// Ready: answering, and its bm25 engine built (the build takes both
	// cores for a while after the socket answers).
	sc := server.NewClient(server.SocketPath(wslayout.At(root).Cache))
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var pong engine.PingReply
		if sc.Call(context.Background(), "ping", struct{}{}, &pong) == nil {
			var bm25 struct {
				State string `json:"state"`
			}
			if sc.Call(context.Background(), "bm25_status", struct{}{}, &bm25) != nil || bm25.State == "ready" {
				return root
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("the daemon was not ready within two minutes")
		}
	}
}
