// Command continuity-bench measures continuity end to end, with the real
// binary on a temporary workspace, and reports each figure next to a
// baseline measured in the same run (these machines are noisy).
//
//	go run -tags sqlite_fts5 ./cmd/continuity-bench ingest  [--lines 100000] [--data short,longmemeval] [--runs 3] [--embed]
//	go run -tags sqlite_fts5 ./cmd/continuity-bench latency [--lines 1000]
//	go run -tags sqlite_fts5 ./cmd/continuity-bench idle    [--seconds 10]
//	go run -tags sqlite_fts5 ./cmd/continuity-bench query   [--lines 10000] [--vectors seed|embed] [--text longmemeval|coding] [--workspace DIR] [--queries 200]
//	go run -tags sqlite_fts5 ./cmd/continuity-bench embed   [--cores N] [--hf-model NAME|DIR] [--skip uselite,hf,js,queries] [--short N] [--long N]
//
// embed measures the in-process embedders (package embed/embedbench): short
// and long texts a second on one core and on all, the scaling, the query
// latency while the background embeds, the matrix kernel's GFLOP/s against
// the core's FMA peak, and uselite's JS runtime on the same texts (after
// `npm install --ignore-scripts` in embed/uselite/testdata/jsref; skipped
// with a message otherwise).
//
// query --lines 1000000 is the 1M-exchange run (not in CI: gigabytes of
// logs and index, and a long preparation; docs/performance.md).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/praxis-os/continuity/embed/embedbench"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	bin := fs.String("bin", "", "continuity binary to measure (default: build ./cmd/continuity)")
	lines := fs.Int("lines", 0, "how many exchange lines")
	seconds := fs.Int("seconds", 10, "idle: how long to watch CPU use")
	keep := fs.Bool("keep", false, "keep the temporary workspace")
	data := fs.String("data", "short,longmemeval", "ingest: kinds of lines, comma-separated: short (~300-byte exchanges), longmemeval (the LongMemEval conversations, repeated)")
	runs := fs.Int("runs", 1, "ingest: rounds of (naive loaders, ingest), each with its own ratios")
	compare := fs.String("compare", "", "ingest: a second continuity binary (say, main's) measured in the same rounds as --bin, on its own copy of the logs, the two in alternating order; ratios of --bin to it are printed")
	embed := fs.Bool("embed", false, "ingest: also time computing the vectors with the default embedder")
	vectors := fs.String("vectors", vectorsSeed, "query: how exchanges get their vectors: seed (each distinct text embedded once, through the embedding cache shared with continuity-eval, and stored under the daemon's space identity) or embed (ingest embeds every exchange with the model, ~100/s) or hashed (vectors of the daemon's identity and size from a hash of each text: for disk figures, never quality)")
	text := fs.String("text", textLongMemEval, "query: the exchanges' texts: longmemeval (the LongMemEval conversations, 2.1 KB lines) or coding (synthetic coding-agent exchanges with a code block, 0.9 KB lines)")
	prepareOnly := fs.Bool("prepare", false, "query: prepare the --workspace (logs, ingest, vectors) and stop, to measure it later")
	queries := fs.Int("queries", 200, "query: how many queries per measured case (each search mode, each resume case)")
	workspace := fs.String("workspace", "", "query: the workspace to use and keep (default: a temporary one); one a previous query run prepared is measured again without ingesting or seeding (the 1M run takes a while to prepare)")
	cores := fs.Int("cores", 0, "embed: \"all cores\" (default: the machine's)")
	hfModel := fs.String("hf-model", "", "embed: the hf model to measure, a name or folder as for --embed-model (default: random weights of bge-small's shape, generated)")
	skip := fs.String("skip", "", "embed: what not to measure, comma-separated: uselite, hf, js, queries")
	short := fs.Int("short", 0, "embed: short texts per measure (default 4000 for uselite, 1000 for hf)")
	long := fs.Int("long", 0, "embed: long texts per measure (default 512 for uselite, 64 for hf)")
	jsSeconds := fs.Float64("js-seconds", 10, "embed: seconds the JS runtime embeds each set")
	fs.Parse(os.Args[2:])

	ctx := context.Background()
	if os.Args[1] == "embed" { // no binary, no workspace
		cfg := embedbench.Config{Cores: *cores, HFModel: *hfModel, Skip: map[string]bool{}, JSSeconds: *jsSeconds,
			Short: *short, HFShort: *short, Long: *long, HFLong: *long}
		for _, s := range strings.Split(*skip, ",") {
			switch s = strings.TrimSpace(s); s {
			case "":
			case "uselite", "hf", "js", "queries":
				cfg.Skip[s] = true
			default:
				fatal(fmt.Errorf("--skip %q: want uselite, hf, js or queries (comma-separated)", s))
			}
		}
		if err := embedbench.Report(ctx, cfg, os.Stdout); err != nil {
			fatal(err)
		}
		return
	}

	tmp, err := os.MkdirTemp("", "continuity-bench-")
	if err != nil {
		fatal(err)
	}
	if !*keep {
		defer os.RemoveAll(tmp)
	} else {
		fmt.Println("workspace kept in", tmp)
	}
	if *bin == "" {
		*bin = filepath.Join(tmp, "continuity")
		build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", *bin, "./cmd/continuity")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fatal(fmt.Errorf("build (run from the repository root): %w", err))
		}
	}
	switch os.Args[1] {
	case "ingest":
		err = benchIngest(ctx, *bin, *compare, tmp, cmp.Or(max(*lines, 0), 100000), strings.Split(*data, ","), max(*runs, 1), *embed)
	case "latency":
		err = benchLatency(ctx, *bin, tmp, cmp.Or(max(*lines, 0), 1000))
	case "query":
		if *vectors == vectorsHashed {
			seedHashed, *vectors = true, vectorsSeed
		}
		if *vectors != vectorsSeed && *vectors != vectorsEmbed {
			fatal(fmt.Errorf("--vectors %q: want %s, %s or %s", *vectors, vectorsSeed, vectorsEmbed, vectorsHashed))
		}
		if *text != textLongMemEval && *text != textCoding {
			fatal(fmt.Errorf("--text %q: want %s or %s", *text, textLongMemEval, textCoding))
		}
		queryText = *text
		ws := *workspace
		if ws == "" {
			ws = filepath.Join(tmp, "ws")
		}
		err = benchQuery(ctx, *bin, ws, cmp.Or(max(*lines, 0), 10000), *vectors, max(*queries, 1), *prepareOnly)
	case "idle":
		err = benchIdle(ctx, *bin, tmp, *seconds)
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fatal(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: continuity-bench ingest|latency|idle|query|embed [--lines N] [--seconds N] [--data KINDS] [--embed] [--vectors seed|embed] [--workspace DIR] [--queries N] [--bin PATH] [--keep] [--cores N] [--hf-model NAME|DIR] [--skip uselite,hf,js,queries] [--short N] [--long N] [--js-seconds S]")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "continuity-bench:", err)
	os.Exit(1)
}
