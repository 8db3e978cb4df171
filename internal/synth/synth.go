// Package synth generates synthetic exchange text and logs for the
// benchmarks (continuity-bench and the ingest benchmark of
// cmd/continuity): prose of a Zipf-distributed vocabulary, one word in four
// from a small set of a coding agent's topic words. One generator, so that
// the two benchmarks measure the same data.
//
// Real text (the LongMemEval conversations) is better for anything whose
// cost depends on the vocabulary; this is the fallback when it is absent,
// and the "short lines" shape of the ingest benchmark.
package synth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// TopicWords are the words of a coding agent's conversations mixed into
// the text.
var TopicWords = strings.Fields(`the build fails because cgo needs gcc install it and run again
watcher tails each file from a durable offset sqlite commit transaction fsync
session resume context window token budget search index vector embedding
error handling retry backoff daemon socket config flag parse json line
refactor function test benchmark latency throughput memory profile goroutine`)

// Vocabulary is the synthetic long-tailed vocabulary: 20,000 words of the
// form w<hex>, drawn with a Zipf law (s = 1.1).
var Vocabulary = func() []string {
	ws := make([]string, 20000)
	for i := range ws {
		ws[i] = fmt.Sprintf("w%x", i*2654435761%1000003)
	}
	return ws
}()

// Text draws synthetic prose from a random source. Not safe for
// concurrent use (nor is its source).
type Text struct {
	rng  *rand.Rand
	zipf *rand.Zipf
}

// New returns a generator drawing from rng: the same rng state gives the
// same text.
func New(rng *rand.Rand) *Text {
	return &Text{rng: rng, zipf: rand.NewZipf(rng, 1.1, 1, uint64(len(Vocabulary)-1))}
}

// Rand is the generator's source, for the sizes its callers draw.
func (t *Text) Rand() *rand.Rand { return t.rng }

// Text returns n bytes of prose (words separated by spaces, the last one
// cut at n).
func (t *Text) Text(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if t.rng.IntN(4) == 0 {
			b.WriteString(TopicWords[t.rng.IntN(len(TopicWords))])
		} else {
			b.WriteString(Vocabulary[t.zipf.Uint64()])
		}
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// ShortExchange returns a short exchange: a question of 20–119 bytes and
// an answer of 60–359 (lines of about 390 bytes with the other fields).
func (t *Text) ShortExchange() (user, ai string) {
	user = t.Text(20 + t.rng.IntN(100))
	ai = t.Text(60 + t.rng.IntN(300))
	return user, ai
}

// LongExchange returns a long-tailed exchange: 200 to 2,000 bytes, one in
// 50 from 4 to 32 KB, a quarter of it the question.
func (t *Text) LongExchange() (user, ai string) {
	size := 200 + t.rng.IntN(1800)
	if t.rng.IntN(50) == 0 {
		size = 4000 + t.rng.IntN(28000)
	}
	return t.Text(size / 4), t.Text(size - size/4)
}

// Files is how many session files WriteLogs spreads the lines over.
const Files = 10

// WriteLogs writes n exchange lines to dir (created 0700), line i in file
// session-bench<i mod Files>.jsonl (0600, truncated first), with session
// bench<i mod Files>, producer id b-<i> and the texts exchange(i) returns;
// it returns their total size in bytes.
func WriteLogs(dir string, n int, exchange func(i int) (user, ai string)) (int64, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	ws := make([]*bufio.Writer, Files)
	for i := range ws {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("session-bench%d.jsonl", i)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		ws[i] = bufio.NewWriterSize(f, 1<<20)
	}
	var total int64
	for i := 0; i < n; i++ {
		user, ai := exchange(i)
		line, err := json.Marshal(map[string]string{
			"type": "exchange", "session_id": fmt.Sprintf("bench%d", i%Files), "id": fmt.Sprintf("b-%d", i),
			"timestamp": "2026-11-01T10:00:00Z", "user": user, "ai": ai,
		})
		if err != nil {
			return 0, err
		}
		line = append(line, '\n')
		total += int64(len(line))
		if _, err := ws[i%Files].Write(line); err != nil {
			return 0, err
		}
	}
	for _, w := range ws {
		if err := w.Flush(); err != nil {
			return 0, err
		}
	}
	return total, nil
}
