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

// corpus is real conversation text when the LongMemEval development set is
// beside the repository (../shared/data/longmemeval-s-dev, or
// $CONTINUITY_EVAL_DATA): user/ai pairs and the benchmark's questions.
// Search cost depends on the vocabulary, so a toy vocabulary would measure
// the wrong thing.
type corpus struct {
	pairs     [][2]string
	questions []string
}

func loadCorpus() *corpus {
	dir := os.Getenv("CONTINUITY_EVAL_DATA")
	if dir == "" {
		dir = filepath.Join("..", "shared", "data", "longmemeval-s-dev")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "logs", "*.jsonl"))
	c := &corpus{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n") {
			var ev struct{ Type, User, AI string }
			if json.Unmarshal([]byte(l), &ev) == nil && ev.Type == "exchange" {
				c.pairs = append(c.pairs, [2]string{ev.User, ev.AI})
			}
		}
	}
	if q, err := os.ReadFile(filepath.Join(dir, "queries.jsonl")); err == nil {
		for _, l := range strings.Split(string(q), "\n") {
			var x struct{ Question string }
			if json.Unmarshal([]byte(l), &x) == nil && x.Question != "" {
				c.questions = append(c.questions, x.Question)
			}
		}
	}
	if len(c.pairs) == 0 {
		fmt.Fprintf(os.Stderr, "continuity-bench: %s not found: using synthetic Zipf text\n", dir)
		return nil
	}
	return c
}

// zipfWords is a synthetic vocabulary used when no real corpus is present.
var zipfWords = func() []string {
	ws := make([]string, 20000)
	for i := range ws {
		ws[i] = fmt.Sprintf("w%x", i*2654435761%1000003)
	}
	return ws
}()

// text returns about n bytes of synthetic prose with a Zipf vocabulary.
func text(rng *rand.Rand, n int) string {
	z := rand.NewZipf(rng, 1.1, 1, uint64(len(zipfWords)-1))
	var b strings.Builder
	for b.Len() < n {
		if rng.IntN(4) == 0 {
			b.WriteString(words[rng.IntN(len(words))])
		} else {
			b.WriteString(zipfWords[z.Uint64()])
		}
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// Kinds of generated data (writeLogsKind).
const (
	// dataCorpus: the LongMemEval conversations repeated as needed
	// (2.4 KB lines on average), or synthetic Zipf text of a similar
	// long-tailed size when the dataset is absent.
	dataCorpus = "longmemeval"
	// dataShort: short exchanges, a question of 20–120 bytes and an
	// answer of 60–360 (lines of about 300 bytes).
	dataShort = "short"
)

// writeLogs writes n exchange lines over a few session files in logs and
// returns their total size. Sizes follow a long tail: most exchanges are a
// few hundred bytes to a few KiB, a few are tens of KiB.
func writeLogs(logs string, n int) (int64, error) { return writeLogsKind(logs, n, dataCorpus) }

// writeLogsKind is writeLogs with the kind of data (dataCorpus, dataShort).
func writeLogsKind(logs string, n int, kind string) (int64, error) {
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
	var c *corpus
	if kind == dataCorpus {
		c = loadCorpus()
	}
	for i := 0; i < n; i++ {
		var user, ai string
		if kind == dataShort {
			user, ai = text(rng, 20+rng.IntN(100)), text(rng, 60+rng.IntN(300))
		} else {
			user, ai = longExchange(rng, c, i)
		}
		line, _ := json.Marshal(map[string]string{
			"type": "exchange", "session_id": fmt.Sprintf("bench%d", i%files), "id": fmt.Sprintf("b-%d", i),
			"timestamp": "2026-11-01T10:00:00Z", "user": user, "ai": ai,
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

// longExchange is the i-th exchange of the long kind: the corpus's i-th
// pair (repeated) when there is a corpus, else synthetic long-tailed text
// (200 to 2,000 bytes, one in 50 from 4 to 32 KB).
func longExchange(rng *rand.Rand, c *corpus, i int) (user, ai string) {
	if c != nil {
		p := c.pairs[i%len(c.pairs)]
		return p[0], p[1]
	}
	size := 200 + rng.IntN(1800)
	if rng.IntN(50) == 0 {
		size = 4000 + rng.IntN(28000)
	}
	return text(rng, size/4), text(rng, size-size/4)
}
