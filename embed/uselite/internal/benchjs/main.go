// Command benchjs compares, in the same run and on the same texts, the
// throughput of the Go encoder with the package's own JS runtime (TF.js,
// WASM backend, one thread), one core each:
//
//	(cd embed/uselite/testdata/jsref && npm install --ignore-scripts)
//	go run ./embed/uselite/internal/benchjs [-seconds 10]
//
// Short texts are about 20 tokens, long ones at least 128 (the model reads
// 128; the Go encoder is set to one chunk so both do the same work). Both
// embed batches of 64. The machine's load affects both; the ratio is the
// figure to read.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/praxis-os/continuity/embed/uselite"
)

var words = strings.Fields(`the daemon tails every log file in the conversations folder and remembers
the byte offset it committed for each generation so that after a crash it resumes exactly where the
last transaction ended while embedding runs in the background on a durable queue of exchanges
without a vector and a slow embedding server never blocks indexing or lexical search we fixed the
webhook handler by verifying the signature with the raw body returning four hundred for bad
signatures and making it idempotent with a unique index on the event id my sister is getting
married in june and I have been running three times a week before work`)

func texts(n, nwords, seed int) []string {
	out := make([]string, n)
	for i := range out {
		w := make([]string, nwords)
		for j := range w {
			w[j] = words[(seed+i*31+j*7+j*j*3)%len(words)]
		}
		out[i] = strings.Join(w, " ")
	}
	return out
}

func main() {
	seconds := flag.Float64("seconds", 10, "seconds per measurement")
	flag.Parse()
	if err := run(*seconds); err != nil {
		fmt.Fprintln(os.Stderr, "benchjs:", err)
		os.Exit(1)
	}
}

func run(seconds float64) error {
	set := map[string][]string{"short": texts(512, 16, 1), "long": texts(256, 150, 2)}
	f, err := os.CreateTemp("", "uselite-bench-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := json.NewEncoder(f).Encode(set); err != nil {
		return err
	}
	f.Close()

	_, self, _, _ := runtime.Caller(0)
	jsdir := filepath.Join(filepath.Dir(self), "..", "..", "testdata", "jsref")
	cmd := exec.Command("node", "bench.js", f.Name(), fmt.Sprint(seconds))
	cmd.Dir = jsdir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("node bench.js (run npm install --ignore-scripts in %s first): %w", jsdir, err)
	}
	var js struct {
		Backend     string
		Short, Long float64
	}
	if err := json.Unmarshal(out, &js); err != nil {
		return fmt.Errorf("node output %q: %w", out, err)
	}

	runtime.GOMAXPROCS(1)
	e, err := uselite.New(uselite.Options{MaxChunks: 1, Threads: 1})
	if err != nil {
		return err
	}
	goRate := func(ts []string) (float64, error) {
		ctx := context.Background()
		if _, err := e.Embed(ctx, ts[:64]); err != nil {
			return 0, err
		}
		n, start := 0, time.Now()
		for i := 0; ; i = (i + 64) % len(ts) {
			b := ts[i:min(i+64, len(ts))]
			if _, err := e.Embed(ctx, b); err != nil {
				return 0, err
			}
			n += len(b)
			if el := time.Since(start).Seconds(); el >= seconds {
				return float64(n) / el, nil
			}
		}
	}
	gs, err := goRate(set["short"])
	if err != nil {
		return err
	}
	gl, err := goRate(set["long"])
	if err != nil {
		return err
	}
	fmt.Printf("one core each, batches of 64; JS: @energetic-ai/embeddings 0.2.0, TF.js %s\n", js.Backend)
	fmt.Printf("%-28s %10s %10s %8s\n", "texts", "JS t/s", "Go t/s", "Go/JS")
	fmt.Printf("%-28s %10.1f %10.1f %7.2fx\n", "short (~20 tokens)", js.Short, gs, gs/js.Short)
	fmt.Printf("%-28s %10.1f %10.1f %7.2fx\n", "long (>=128 tokens, 1 chunk)", js.Long, gl, gl/js.Long)
	return nil
}
