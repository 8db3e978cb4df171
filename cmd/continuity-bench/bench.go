package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// benchIngest: backfill of n lines with `continuity ingest --no-embed`
// (done = every event durable and full-text searchable; vectors are left
// pending for the daemon), against the naive loader (naive.go) in Go and
// in Python on the same files in the same run, for each kind of data.
// compare, when set, is a second binary measured in the same rounds (on
// its own copy of the logs; the two ingests in alternating order), for a
// before/after within a round. embed also times computing the pending
// vectors with the default embedder (slow with a model: off by default).
//
// Each of runs rounds measures the loaders and ingest again, one after
// the other, on a fresh workspace: a ratio is only taken within a round.
func benchIngest(ctx context.Context, bin, compare, tmp string, n int, kinds []string, runs int, embed bool) error {
	for _, kind := range kinds {
		if kind != dataShort && kind != dataCorpus {
			return fmt.Errorf("--data %q: want %s or %s (comma-separated)", kind, dataShort, dataCorpus)
		}
	}
	for _, kind := range kinds {
		src := filepath.Join(tmp, kind, "logs")
		size, err := writeLogsKind(src, n, kind)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		fmt.Printf("== %s: %d exchange lines, %.1f MiB in 10 files (%.0f bytes/line)\n", kind, n, float64(size)/(1<<20), float64(size)/float64(n))
		for r := 1; r <= runs; r++ {
			if runs > 1 {
				fmt.Printf("-- run %d of %d\n", r, runs)
			}
			dir := filepath.Join(tmp, kind, fmt.Sprintf("run%d", r))
			if err := benchIngestRun(ctx, bin, compare, r%2 == 0, src, dir, n, size, embed && r == runs); err != nil {
				return fmt.Errorf("%s: %w", kind, err)
			}
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// ingestRun is one `continuity ingest --no-embed` of n lines.
type ingestRun struct {
	el   time.Duration
	cpu  time.Duration // user + system
	rss  int64         // KiB
	rate float64       // lines/s
}

// runIngest copies the logs of src into a new workspace ws and ingests
// them with bin. Ingest's own report (events stored, full-text index done)
// goes to stderr.
func runIngest(ctx context.Context, bin, src, ws string, n int) (ingestRun, error) {
	logs := filepath.Join(ws, ".praxis-os", ".conversations")
	if err := os.MkdirAll(filepath.Dir(logs), 0o700); err != nil {
		return ingestRun{}, err
	}
	if err := exec.CommandContext(ctx, "cp", "-r", src, logs).Run(); err != nil {
		return ingestRun{}, fmt.Errorf("copy logs: %w", err)
	}
	fmt.Fprintf(os.Stderr, "%s: ", bin)
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, "ingest", "--no-embed", "--log-level", "warn", "--root", ws)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return ingestRun{}, fmt.Errorf("ingest (%s): %w", bin, err)
	}
	r := ingestRun{el: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		rss: cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss}
	r.rate = float64(n) / r.el.Seconds()
	return r, nil
}

// benchIngestRun is one round: the naive loaders, then ingest with bin
// (and compare, when set: before bin when compareFirst).
func benchIngestRun(ctx context.Context, bin, compare string, compareFirst bool, src, tmp string, n int, size int64, embed bool) error {
	ws := filepath.Join(tmp, "ws")
	logs := filepath.Join(ws, ".praxis-os", ".conversations")
	if err := os.MkdirAll(filepath.Dir(logs), 0o700); err != nil {
		return err
	}
	if err := exec.CommandContext(ctx, "cp", "-r", src, logs).Run(); err != nil {
		return fmt.Errorf("copy logs: %w", err)
	}

	base, err := baselineRead(logs)
	if err != nil {
		return err
	}
	cpu0 := selfCPU()
	goRate, err := naiveGo(logs, filepath.Join(tmp, "naive-go.db"))
	if err != nil {
		return err
	}
	goCPU := selfCPU() - cpu0
	pyRate, pyOK, pyCPU, err := naivePython(ctx, logs, filepath.Join(tmp, "naive-py.db"))
	if err != nil {
		return err
	}
	// The loaders read the logs in place; each ingest gets a workspace
	// of its own.
	if err := os.RemoveAll(ws); err != nil {
		return err
	}
	var cmp ingestRun
	if compare != "" && compareFirst {
		if cmp, err = runIngest(ctx, compare, src, filepath.Join(tmp, "ws-compare"), n); err != nil {
			return err
		}
	}
	ing, err := runIngest(ctx, bin, src, ws, n)
	if err != nil {
		return err
	}
	if compare != "" && !compareFirst {
		if cmp, err = runIngest(ctx, compare, src, filepath.Join(tmp, "ws-compare"), n); err != nil {
			return err
		}
	}
	fmt.Printf("read + json.Valid each line (one core):        %8.0f lines/s\n", base)
	fmt.Printf("naive loader, Go (json + SQLite + FTS5, 1 tx): %8.0f lines/s, CPU %.1f s\n", goRate, goCPU.Seconds())
	if pyOK {
		fmt.Printf("naive loader, Python (json.loads + sqlite3):   %8.0f lines/s, CPU %.1f s\n", pyRate, pyCPU.Seconds())
	}
	report := func(label string, r ingestRun) {
		fmt.Printf("%-46s %8.0f lines/s (%.1f MiB/s), %s, CPU %.1f s, peak RSS %.1f MiB\n", label,
			r.rate, float64(size)/(1<<20)/r.el.Seconds(), r.el.Round(time.Millisecond), r.cpu.Seconds(), float64(r.rss)/1024)
		fmt.Printf("  ratio ingest/naive Go: %.2f", r.rate/goRate)
		if pyOK {
			fmt.Printf("   ingest/naive Python: %.2f", r.rate/pyRate)
		}
		fmt.Println()
	}
	report("continuity ingest --no-embed (durable + FTS):", ing)
	if compare != "" {
		order := "after"
		if compareFirst {
			order = "before"
		}
		report(fmt.Sprintf("--compare ingest (ran %s --bin's):", order), cmp)
		fmt.Printf("  --bin / --compare: rate %.2f, CPU %.2f\n", ing.rate/cmp.rate, ing.cpu.Seconds()/cmp.cpu.Seconds())
	}
	fmt.Printf("load average (1, 5, 15 min): %s\n", loadAvg())
	if !embed {
		return nil
	}
	// The vectors left pending, computed by a second run with the
	// default embedder (embed + store).
	start := time.Now()
	emb := exec.CommandContext(ctx, bin, "ingest", "--log-level", "warn", "--root", ws)
	emb.Stderr = os.Stderr
	if err := emb.Run(); err != nil {
		return fmt.Errorf("ingest (embedding): %w", err)
	}
	eel := time.Since(start)
	erss := emb.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	fmt.Printf("default embedder, the pending exchanges: %.0f exchanges/s (%s), peak RSS %.1f MiB\n",
		float64(n)/eel.Seconds(), eel.Round(time.Millisecond), float64(erss)/1024)
	return nil
}

func baselineRead(logs string) (float64, error) {
	entries, err := os.ReadDir(logs)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	var lines int
	for _, e := range entries {
		f, err := os.Open(filepath.Join(logs, e.Name()))
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if !json.Valid(sc.Bytes()) {
				f.Close()
				return 0, fmt.Errorf("invalid line in %s", e.Name())
			}
			lines++
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return 0, err
		}
	}
	return float64(lines) / time.Since(start).Seconds(), nil
}

// benchLatency: append→indexed latency under the daemon, from write()
// returning to the event's row being committed and visible to a reader, against the baseline of
// one durable SQLite commit on the same disk.
func benchLatency(ctx context.Context, bin, tmp string, n int) error {
	ws := filepath.Join(tmp, "ws")
	logs := filepath.Join(ws, ".praxis-os", ".conversations")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return err
	}
	base, err := baselineCommit(tmp)
	if err != nil {
		return err
	}
	d, err := startDaemon(ctx, bin, ws)
	if err != nil {
		return err
	}
	defer d.Process.Kill()
	f, err := os.OpenFile(filepath.Join(logs, "session-lat.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	// A reader polls for each row right after its write() returns: the
	// latency is until the committed row is visible to another process.
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(ws, ".praxis-os", ".cache", "continuity", "index.db")+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	probe, err := db.Prepare(`SELECT count(*) FROM events WHERE event_id = ?`)
	if err != nil {
		return err
	}
	var lat []time.Duration
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("lat-%d", i)
		line, _ := json.Marshal(map[string]string{"type": "exchange", "session_id": "lat", "id": id,
			"user": "how long until this is searchable?", "ai": strings.Repeat("answer ", 100)})
		if _, err := f.Write(append(line, '\n')); err != nil {
			return err
		}
		w := time.Now()
		for {
			var c int
			if err := probe.QueryRow(id).Scan(&c); err != nil {
				return err
			}
			if c == 1 {
				break
			}
			if time.Since(w) > 10*time.Second {
				return fmt.Errorf("event %s not indexed after 10s", id)
			}
			time.Sleep(100 * time.Microsecond)
		}
		lat = append(lat, time.Since(w))
		time.Sleep(5 * time.Millisecond)
	}
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	fmt.Printf("baseline (one durable SQLite commit, p50): %s\n", base.Round(10*time.Microsecond))
	fmt.Printf("append→indexed over %d lines: p50 %s, p99 %s, max %s\n", n,
		p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	fmt.Printf("ratio to one commit: p50 %.1fx, p99 %.1fx\n", float64(p50)/float64(base), float64(p99)/float64(base))
	return nil
}

func baselineCommit(tmp string) (time.Duration, error) {
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(tmp, "baseline.db")+"?_journal_mode=WAL&_synchronous=FULL")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t(x TEXT)`); err != nil {
		return 0, err
	}
	var ds []time.Duration
	for i := 0; i < 200; i++ {
		s := time.Now()
		if _, err := db.Exec(`INSERT INTO t VALUES (?)`, strings.Repeat("x", 800)); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(s))
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}

func startDaemon(ctx context.Context, bin, ws string) (*exec.Cmd, error) {
	d := exec.CommandContext(ctx, bin, "daemon", "--root", ws, "--log-level", "warn")
	d.Stderr = os.Stderr
	if err := d.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command(bin, "status", "--root", ws).Run() == nil {
			return d, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.Process.Kill()
	return nil, fmt.Errorf("daemon not ready in 10s")
}

func waitIndexed(ctx context.Context, bin, ws string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, err := exec.CommandContext(ctx, bin, "status", "--json", "--root", ws).Output()
		if err == nil {
			var st struct {
				Exchanges int `json:"exchanges"`
			}
			if json.Unmarshal(out, &st) == nil && st.Exchanges >= n {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not all %d lines indexed within %s", n, timeout)
}

// benchIdle: CPU used by an idle daemon over a number of seconds, after it
// indexed a backlog.
func benchIdle(ctx context.Context, bin, tmp string, seconds int) error {
	ws := filepath.Join(tmp, "ws")
	logs := filepath.Join(ws, ".praxis-os", ".conversations")
	if _, err := writeLogs(logs, 10000); err != nil {
		return err
	}
	d, err := startDaemon(ctx, bin, ws)
	if err != nil {
		return err
	}
	defer d.Process.Kill()
	if err := waitIndexed(ctx, bin, ws, 10000, 120*time.Second); err != nil {
		return err
	}
	time.Sleep(time.Second)
	c0, err := cpuTicks(d.Process.Pid)
	if err != nil {
		return err
	}
	time.Sleep(time.Duration(seconds) * time.Second)
	c1, err := cpuTicks(d.Process.Pid)
	if err != nil {
		return err
	}
	cpu := float64(c1-c0) / 100 // clock ticks (USER_HZ = 100)
	fmt.Printf("idle daemon (10k lines indexed, default 2s rescan): %.2f CPU-seconds over %ds = %.2f%% of one core\n",
		cpu, seconds, 100*cpu/float64(seconds))
	return nil
}

func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return ut + st, nil
}

// loadAvg is the machine's load average, printed next to each round: the
// ratios of a round are only comparable under a similar load.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// selfCPU is the CPU time (user + system) this process has used: around
// the Go naive loader, which runs in-process, it is the loader's. CPU time
// is printed next to each rate because it moves much less than the rates
// with the load of a shared machine: it says how much work each loader
// does per line, where the rates say how soon it is done.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
