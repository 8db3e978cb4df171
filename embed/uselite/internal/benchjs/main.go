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
// figure to read. `continuity-bench embed` runs the same JS measure beside
// its own (package embed/embedbench holds both).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/praxis-os/continuity/embed/embedbench"
)

func main() {
	seconds := flag.Float64("seconds", 10, "seconds per measurement")
	flag.Parse()
	if err := embedbench.CompareJS(context.Background(), *seconds); err != nil {
		fmt.Fprintln(os.Stderr, "benchjs:", err)
		os.Exit(1)
	}
}
