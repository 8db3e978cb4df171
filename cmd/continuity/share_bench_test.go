package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/share/sharetest"
	wspace "github.com/praxis-os/continuity/workspace"
)

// The team memory benchmarks: real daemons (the built binary) and a real
// PostgreSQL, as the end-to-end tests; figures in docs/performance.md.
//
//	go test -tags sqlite_fts5 ./cmd/continuity -run '^$' -bench 'BenchmarkShare' -benchtime 1x

// benchMate is a daemon of a team member, for the benchmarks (the test
// harness's machine needs a *testing.T).
type benchMate struct {
	root, logs, user string
	env              []string
	cmd              *exec.Cmd
}

func newBenchTeam(b *testing.B, n int) (*sharetest.Server, string, []*benchMate) {
	b.Helper()
	return newBenchTeamOn(b, sharetest.Start(b), n)
}

// newBenchTeamOn is newBenchTeam on srv (a benchmark's own server, for
// one that restarts it: sharetest.StartOwn).
func newBenchTeamOn(b *testing.B, srv *sharetest.Server, n int) (*sharetest.Server, string, []*benchMate) {
	b.Helper()
	db := srv.Database(b)
	if out, err := exec.Command(binPath, "share", "init", "--db", db).CombinedOutput(); err != nil {
		b.Fatalf("share init: %v %s", err, out)
	}
	var mates []*benchMate
	for i := range n {
		root := b.TempDir()
		m := &benchMate{root: root, logs: filepath.Join(root, ".praxis-os", ".conversations"), user: sharetest.Name(fmt.Sprintf("m%d", i))}
		if err := os.MkdirAll(m.logs, 0o700); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(binPath, "share", "add-member", "--db", db, "--team", "bench", "--user", m.user)
		cmd.Env = append(os.Environ(), "CONTINUITY_MEMBER_PASSWORD=pw-"+m.user)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("add-member: %v %s", err, out)
		}
		m.env = append(os.Environ(), logformat.MachineEnv+fmt.Sprintf("=host%d", i), "CONTINUITY_SHARE="+sharetest.UserURL(db, m.user, ""),
			"CONTINUITY_TEAM=bench", "CONTINUITY_SCOPE=example.com/bench", "PGPASSWORD=pw-"+m.user)
		m.start(b)
		mates = append(mates, m)
	}
	for _, m := range mates { // every daemon up
		deadline := time.Now().Add(time.Minute)
		for {
			if _, ok := m.client().Indexer(context.Background()); ok {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("a daemon did not answer within a minute")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return srv, db, mates
}

// client asks the daemon (never the index directly: no embedder here).
func (m *benchMate) client() *engine.Client {
	return engine.NewClient(wspace.At(m.root), func() (embed.Embedder, error) { return nil, errors.New("no embedder in the benchmark") }, nil)
}

func (m *benchMate) start(b *testing.B) {
	m.cmd = exec.Command(binPath, "daemon", "--root", m.root)
	m.cmd.Env = m.env
	if err := m.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	cmd := m.cmd
	b.Cleanup(func() { cmd.Process.Signal(syscall.SIGKILL); cmd.Wait() })
}

func (m *benchMate) append(b *testing.B, lines string) {
	f, err := os.OpenFile(filepath.Join(m.logs, "bench~"+m.user+".jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(lines); err != nil {
		b.Fatal(err)
	}
}

func benchLine(session, user string) string {
	l, _ := json.Marshal(map[string]string{"type": "exchange", "session_id": session, "user": user, "ai": "noted"})
	return string(l) + "\n"
}

// BenchmarkShareLatency: the time from an append on a teammate's machine
// to a search on the reader's finding it (p50, p95), with 1 and 16
// publishing daemons.
func BenchmarkShareLatency(b *testing.B) {
	for _, pubs := range []int{1, 16} {
		b.Run(fmt.Sprintf("publishers=%d", pubs), func(b *testing.B) {
			_, _, mates := newBenchTeam(b, pubs+1)
			reader := mates[0]
			c := reader.client()
			var lat []time.Duration
			b.ResetTimer()
			for i := range b.N {
				for j := range 20 {
					word := fmt.Sprintf("zq%dx%dlatency", i, j)
					m := mates[1+(i*20+j)%pubs]
					t0 := time.Now()
					m.append(b, benchLine("lat", word))
					for {
						r, err := c.Search(context.Background(), engine.SearchRequest{Query: word, Mode: "bm25", Limit: 1})
						if err == nil && len(r.Results) > 0 {
							break
						}
						if time.Since(t0) > time.Minute {
							b.Fatalf("%s not found within a minute", word)
						}
						time.Sleep(5 * time.Millisecond)
					}
					lat = append(lat, time.Since(t0))
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Milliseconds()), "p95-ms")
		})
	}
}

// BenchmarkShareShipping: events shipped per second, with 1 and 16
// publishing daemons (5,000 events in all per iteration).
func BenchmarkShareShipping(b *testing.B) {
	for _, pubs := range []int{1, 16} {
		b.Run(fmt.Sprintf("publishers=%d", pubs), func(b *testing.B) {
			_, db, mates := newBenchTeam(b, pubs)
			total := int64(0)
			var elapsed time.Duration
			for i := range b.N {
				const n = 5000
				t0 := time.Now()
				var wg sync.WaitGroup
				for k, m := range mates {
					var sb strings.Builder
					for j := range n / pubs {
						sb.WriteString(benchLine(fmt.Sprintf("s%d", i), fmt.Sprintf("event %d %d %d", i, k, j)))
					}
					wg.Go(func() { m.append(b, sb.String()) })
					total += int64(n / pubs)
				}
				wg.Wait()
				waitShipped(b, db, total)
				elapsed += time.Since(t0)
			}
			b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
		})
	}
}

func waitShipped(b *testing.B, db string, want int64) {
	deadline := time.Now().Add(10 * time.Minute)
	for sharetest.QueryInt(b, db, `SELECT count(*) FROM continuity_events`) < want {
		if time.Now().After(deadline) {
			b.Fatalf("fewer than %d events shipped in 10 minutes", want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkShareRestart: 16 writers x 5,000 events with a pg_ctl restart
// in the middle: exactly 80,000 rows, 80,000 ids.
func BenchmarkShareRestart(b *testing.B) {
	const writers, each = 16, 5000
	for range b.N {
		srv, db, mates := newBenchTeamOn(b, sharetest.StartOwn(b), writers)
		if !srv.CanRestart() {
			b.Skip("this PostgreSQL cannot be restarted by the benchmarks")
		}
		t0 := time.Now()
		for k, m := range mates {
			var sb strings.Builder
			for j := range each {
				sb.WriteString(benchLine(fmt.Sprintf("w%d", k), fmt.Sprintf("writer %d event %d", k, j)))
			}
			m.append(b, sb.String())
		}
		waitShipped(b, db, writers*each/2)
		srv.Restart(b)
		waitShipped(b, db, writers*each)
		took := time.Since(t0)
		// More rows cannot come: ids are unique per team and scope, and
		// every event is shipped.
		rows := sharetest.QueryInt(b, db, `SELECT count(*) FROM continuity_events`)
		ids := sharetest.QueryInt(b, db, `SELECT count(DISTINCT id) FROM continuity_events`)
		if rows != writers*each || ids != writers*each {
			b.Fatalf("%d rows, %d ids; want %d", rows, ids, writers*each)
		}
		b.ReportMetric(float64(rows), "rows")
		b.ReportMetric(float64(writers*each)/took.Seconds(), "events/s")
	}
}
