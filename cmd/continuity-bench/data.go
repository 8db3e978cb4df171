package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

var words = strings.Fields(`the build fails because cgo needs gcc install it and run again
watcher tails each file from a durable offset sqlite commit transaction fsync
session resume context window token budget search index vector embedding
error handling retry backoff daemon socket config flag parse json line
refactor function test benchmark latency throughput memory profile goroutine`)

// text returns about n bytes of plausible technical prose.
func text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// writeLogs writes n exchange lines over a few session files in logs and
// returns their total size. Sizes follow a long tail: most exchanges are a
// few hundred bytes to a few KiB, a few are tens of KiB.
func writeLogs(logs string, n int) (int64, error) {
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(1, 1))
	const files = 10
	ws := make([]*bufio.Writer, files)
	fs := make([]*os.File, files)
	for i := range ws {
		f, err := os.OpenFile(filepath.Join(logs, fmt.Sprintf("session-bench%d.jsonl", i)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return 0, err
		}
		fs[i], ws[i] = f, bufio.NewWriterSize(f, 1<<20)
	}
	var total int64
	for i := 0; i < n; i++ {
		size := 200 + rng.IntN(1800)
		if rng.IntN(50) == 0 {
			size = 4000 + rng.IntN(28000)
		}
		line, _ := json.Marshal(map[string]string{
			"type": "exchange", "session_id": fmt.Sprintf("bench%d", i%files), "id": fmt.Sprintf("b-%d", i),
			"timestamp": "2026-11-01T10:00:00Z", "user": text(rng, size/4), "ai": text(rng, size-size/4),
		})
		line = append(line, '\n')
		total += int64(len(line))
		if _, err := ws[i%files].Write(line); err != nil {
			return 0, err
		}
	}
	for i := range ws {
		if err := ws[i].Flush(); err != nil {
			return 0, err
		}
		fs[i].Close()
	}
	return total, nil
}
