package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/praxis-os/continuity/internal/synth"

	"github.com/praxis-os/continuity/internal/shareddata"
)

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
	dir := shareddata.LongMemEval()
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
	gen := synth.New(rand.New(rand.NewPCG(1, 1)))
	var c *corpus
	if kind == dataCorpus {
		c = loadCorpus()
	}
	return synth.WriteLogs(logs, n, func(i int) (string, string) {
		if kind == dataShort {
			return gen.ShortExchange()
		}
		return longExchange(gen, c, i)
	})
}

// longExchange is the i-th exchange of the long kind: the corpus's i-th
// pair (repeated) when there is a corpus, else synthetic long-tailed text
// (200 to 2,000 bytes, one in 50 from 4 to 32 KB).
func longExchange(gen *synth.Text, c *corpus, i int) (user, ai string) {
	if c != nil {
		p := c.pairs[i%len(c.pairs)]
		return p[0], p[1]
	}
	return gen.LongExchange()
}
