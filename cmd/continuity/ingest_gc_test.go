package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// ingestGC sets a larger heap goal with a memory limit for the backfill
// and puts the previous settings back; GOGC or GOMEMLIMIT in the
// environment win.
func TestIngestGC(t *testing.T) {
	for _, c := range []struct {
		name, env, value string
		wantPercent      int
		wantLimit        int64
	}{
		{"defaults", "", "", ingestGCPercent, ingestMemoryLimit},
		{"GOGC set", "GOGC", "100", 100, math.MaxInt64},
		{"GOMEMLIMIT set", "GOMEMLIMIT", "1GiB", 100, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			if c.env != "" {
				t.Setenv(c.env, c.value)
			}
			prevPercent := debug.SetGCPercent(100)
			prevLimit := debug.SetMemoryLimit(math.MaxInt64)
			defer func() {
				debug.SetGCPercent(prevPercent)
				debug.SetMemoryLimit(prevLimit)
			}()
			restore := ingestGC()
			if p := debug.SetGCPercent(-1); p != c.wantPercent {
				t.Errorf("GC percent during ingest %d, want %d", p, c.wantPercent)
			}
			debug.SetGCPercent(c.wantPercent)
			if l := debug.SetMemoryLimit(-1); l != c.wantLimit {
				t.Errorf("memory limit during ingest %d, want %d", l, c.wantLimit)
			}
			restore()
			restore() // twice: still the settings from before
			if p := debug.SetGCPercent(-1); p != 100 {
				t.Errorf("GC percent after %d, want 100", p)
			}
			if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
				t.Errorf("memory limit after %d, want none", l)
			}
		})
	}
}

// daemonGC lowers the heap goal for the daemon's life and puts the
// previous one back; GOGC or GOMEMLIMIT in the environment win.
func TestDaemonGC(t *testing.T) {
	for _, c := range []struct {
		name, env, value string
		want             int
	}{
		{"default", "", "", daemonGCPercent},
		{"GOGC set", "GOGC", "200", 100},
		{"GOMEMLIMIT set", "GOMEMLIMIT", "1GiB", 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			if c.env != "" {
				t.Setenv(c.env, c.value)
			}
			prev := debug.SetGCPercent(100)
			defer debug.SetGCPercent(prev)
			restore := daemonGC()
			if p := debug.SetGCPercent(c.want); p != c.want {
				t.Errorf("GC percent in the daemon %d, want %d", p, c.want)
			}
			restore()
			if p := debug.SetGCPercent(100); p != 100 {
				t.Errorf("GC percent after %d, want 100", p)
			}
		})
	}
}
