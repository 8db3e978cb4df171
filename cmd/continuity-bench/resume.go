package main

// The resume part of `continuity-bench query`: the workspace's shape of
// sessions and chains, and resume latency through the socket measured
// against a search in the same run.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/praxis-os/continuity/internal/synth"
	"github.com/praxis-os/continuity/server"
)

// The sessions of the query workspace (issue 13 measured resume at 100k
// exchanges on "20 chains of 5 sessions", and asked for a 50-session
// chain too): 150 sessions of equal size, about 667 exchanges each at
// 100k.
//
//   - long00 … long49: one chain, each session resuming the one before
//     (long49 resumes long48 … resumes long00), a session a day;
//   - cCCsS (c00s0 … c19s4): 20 chains of 5 sessions (cCCs4 resumes
//     cCCs3 … resumes cCCs0), each chain in its own stretch of time.
//
// Every session has a context reset every 40 exchanges, so that a resume
// has a boundary, a tail before it and exchanges still "in context" after
// it. Exchanges are 30 s apart within a session. The latest session (of the
// most recent event) is c19s4.
const (
	longChain      = 50
	shortChains    = 20
	shortChainLen  = 5
	resumeSessions = longChain + shortChains*shortChainLen
	resetEvery     = 40
)

func longSession(i int) string     { return fmt.Sprintf("long%02d", i) }
func shortSession(c, s int) string { return fmt.Sprintf("c%02ds%d", c, s) }

// writeResumeLogs writes n exchange lines in the sessions above, one file
// per session, with the links and resets, and returns their total size.
// Texts are those of writeLogs (the LongMemEval conversations, repeated,
// or synthetic text when the dataset is absent).
func writeResumeLogs(logs string, n int) (int64, error) {
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return 0, err
	}
	type sess struct {
		id, prev string
		start    time.Time
	}
	base := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	var ss []sess
	for i := range longChain {
		s := sess{id: longSession(i), start: base.Add(time.Duration(i) * 24 * time.Hour)}
		if i > 0 {
			s.prev = longSession(i - 1)
		}
		ss = append(ss, s)
	}
	for c := range shortChains {
		for k := range shortChainLen {
			// After the long chain's days, a chain every 2 days, its
			// sessions 6 hours apart.
			s := sess{id: shortSession(c, k), start: base.Add(time.Duration(longChain*24+c*48+k*6) * time.Hour)}
			if k > 0 {
				s.prev = shortSession(c, k-1)
			}
			ss = append(ss, s)
		}
	}
	gen := synth.New(rand.New(rand.NewPCG(1, 1)))
	corp := loadCorpus()
	var total int64
	next := 0
	for si, s := range ss {
		count := n / len(ss)
		if si < n%len(ss) {
			count++
		}
		f, err := os.OpenFile(filepath.Join(logs, "session-"+s.id+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return 0, err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		write := func(v map[string]any) error {
			line, err := json.Marshal(v)
			if err != nil {
				return err
			}
			total += int64(len(line)) + 1
			_, err = w.Write(append(line, '\n'))
			return err
		}
		ts := func(i int) string { return s.start.Add(time.Duration(i) * 30 * time.Second).Format(time.RFC3339) }
		if s.prev != "" {
			if err := write(map[string]any{"type": "session_resume", "timestamp": ts(0),
				"previous_session": s.prev, "new_session": s.id}); err != nil {
				return 0, err
			}
		}
		for i := range count {
			if i > 0 && i%resetEvery == 0 {
				if err := write(map[string]any{"type": "context_reset", "timestamp": ts(i), "session_id": s.id}); err != nil {
					return 0, err
				}
			}
			user, ai := longExchange(gen, corp, next)
			if queryText == textCoding {
				user, ai = codingExchange(gen, next)
			}
			ev := map[string]any{"type": "exchange", "session_id": s.id, "id": fmt.Sprintf("b-%d", next),
				"timestamp": ts(i + 1), "user": user, "ai": ai}
			if next%3 == 0 {
				ev["files"] = []string{fmt.Sprintf("pkg%d/file%d.go", next%17, next%29)}
			}
			if err := write(ev); err != nil {
				return 0, err
			}
			next++
		}
		if err := w.Flush(); err != nil {
			return 0, err
		}
		if err := f.Close(); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// resumeCase is one kind of resume request measured.
type resumeCase struct {
	name string
	req  func(i int, q string) map[string]any
}

var resumeCases = []resumeCase{
	{"short chains, query", func(i int, q string) map[string]any {
		return map[string]any{"session": shortSession(i%shortChains, shortChainLen-1), "query": q, "budget": 2000}
	}},
	{"short chains, no query", func(i int, _ string) map[string]any {
		return map[string]any{"session": shortSession(i%shortChains, shortChainLen-1), "budget": 2000}
	}},
	{"50-session chain, query", func(_ int, q string) map[string]any {
		return map[string]any{"session": longSession(longChain - 1), "query": q, "budget": 2000}
	}},
	{"50-session chain, no query", func(_ int, _ string) map[string]any {
		return map[string]any{"session": longSession(longChain - 1), "budget": 2000}
	}},
	{"--latest, query", func(_ int, q string) map[string]any {
		// As the CLI sends it: with latest, the latest session's own
		// exchanges are included.
		return map[string]any{"latest": true, "include_current": true, "query": q, "budget": 2000}
	}},
}

// benchResume measures each resume case against the default (hybrid)
// search, interleaved query by query so that both see the same load: for
// each query a search, then the resume. It prints p50 and p95 of both and
// the ratio of the p50s. bm25 is the BM25-only search p50 of the same run,
// for a second ratio.
func benchResume(ctx context.Context, c *server.Client, queries []string, bm25 time.Duration) error {
	fmt.Printf("resume through the socket (budget 2000), against a hybrid search (default limit) asked just before each resume:\n")
	for _, rc := range resumeCases {
		var res, srch []time.Duration
		tokens := 0
		for i, q := range queries {
			s := time.Now()
			var sr map[string]any
			if err := c.Call(ctx, "search", map[string]any{"query": q}, &sr); err != nil {
				return fmt.Errorf("search %q: %w", q, err)
			}
			srch = append(srch, time.Since(s))
			s = time.Now()
			var out struct {
				Tokens int `json:"tokens"`
			}
			if err := c.Call(ctx, "resume", rc.req(i, q), &out); err != nil {
				return fmt.Errorf("resume (%s) %q: %w", rc.name, q, err)
			}
			res = append(res, time.Since(s))
			tokens += out.Tokens
		}
		slices.Sort(res)
		slices.Sort(srch)
		p := func(ds []time.Duration, pc int) float64 { return float64(ds[len(ds)*pc/100]) / 1e6 }
		fmt.Printf("  %-27s resume p50 %7.2f ms, p95 %7.2f ms | search p50 %6.2f ms, p95 %6.2f ms | resume/search p50 %5.2fx, resume/bm25 p50 %5.2fx | %d tokens avg\n",
			rc.name+":", p(res, 50), p(res, 95), p(srch, 50), p(srch, 95), p(res, 50)/p(srch, 50),
			p(res, 50)/(float64(bm25)/1e6), tokens/len(queries))
	}
	return nil
}
