package index

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFullTextRebuildWorkspace measures the full-text writer alone:
// a rebuild of fulltext.db (DrainFullText from an empty file: reading the
// exchanges, analysing them on every core, inserting them in FTS5) from
// a copy of the index.db of the workspace named by
// CONTINUITY_BENCH_WORKSPACE (continuity-bench query --prepare, or any
// workspace ingest wrote), e.g.
//
//	CONTINUITY_BENCH_WORKSPACE=/tmp/ws100k go test -tags sqlite_fts5 -run '^$' -bench FullTextRebuildWorkspace -benchtime 3x ./index
//
// cpu-s/op is the process's CPU time a rebuild: on a shared machine a
// steadier figure than the wall time.
func BenchmarkFullTextRebuildWorkspace(b *testing.B) {
	ws := os.Getenv("CONTINUITY_BENCH_WORKSPACE")
	if ws == "" {
		b.Skip("set CONTINUITY_BENCH_WORKSPACE to a workspace with an index")
	}
	src := filepath.Join(ws, ".praxis-os", ".cache", "continuity", FileName)
	var cpu time.Duration
	var events int64
	for b.Loop() {
		b.StopTimer()
		dir := testDir(b)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		for _, suffix := range []string{"", "-wal"} {
			if err := copyFile(src+suffix, filepath.Join(dir, FileName+suffix)); err != nil && !os.IsNotExist(err) {
				b.Fatal(err)
			}
		}
		db, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0 := selfCPU()
		if err := db.DrainFullText(ctx); err != nil {
			b.Fatal(err)
		}
		cpu += selfCPU() - cpu0
		b.StopTimer()
		if err := db.r.QueryRow(`SELECT count(*) FROM ft.events_fts_docsize`).Scan(&events); err != nil {
			b.Fatal(err)
		}
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(events), "exchanges")
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// selfCPU is the process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
