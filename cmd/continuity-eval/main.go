// Command continuity-eval measures retrieval quality on a LongMemEval-style
// dataset (see /work/shared/data/longmemeval-s-dev/README.md): each
// question's haystack is indexed with the real stack (index, watcher, embed
// worker) in a fresh temporary workspace, and the question is run through
// search. It compares, in the same run, hybrid search with BM25 alone and
// vectors alone.
//
//	go run -tags sqlite_fts5 ./cmd/continuity-eval [--data DIR] [--k 5,10] [--json]
//
// --mode selects the task; "retrieval" is the only one so far. A task is a
// function in the tasks table below: it gets the parsed configuration and
// the questions, and prints its own report.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/search"
)

// EnvData overrides the default dataset folder.
const EnvData = "CONTINUITY_EVAL_DATA"

const defaultData = "../shared/data/longmemeval-s-dev"

// config is what every task gets.
type config struct {
	data   string
	ks     []int
	json   bool
	misses bool
	emb    embed.Embedder
	stdout io.Writer
	stderr io.Writer
}

// task is one kind of evaluation (--mode).
type task func(ctx context.Context, c *config, qs []question) error

var tasks = map[string]task{
	"retrieval": runRetrieval,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "continuity-eval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("continuity-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "", "dataset folder (default $"+EnvData+", else "+defaultData+")")
	kList := fs.String("k", "5,10", "cut-offs, comma-separated")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	mode := fs.String("mode", "retrieval", "what to evaluate: "+strings.Join(taskNames(), ", "))
	misses := fs.Bool("misses", false, "retrieval: also list the questions some variant misses, with the evidence ranks (in the JSON: \"misses\")")
	split := fs.String("split", splitAll, "which questions: all, tune (fnv32a(qid) even: choose settings here) or heldout (odd: report here)")
	embedder := fs.String("embedder", embed.DefaultProvider, "embedder: uselite, hash (\"builtin\" is its old name), ollama or openai (remote ones read CONTINUITY_EMBED_URL, _MODEL, _API_KEY)")
	dim := fs.Int("dim", 0, "embedder dimension (hash: buckets; default: the embedder's default)")
	chunks := fs.Int("chunks", 0, "uselite: most 128-token chunks embedded per exchange (default: the embedder's default)")
	text := fs.String("text", search.DefaultText, "what of an exchange is embedded: "+search.TextUser+" or "+search.TextUserAI)
	limit := fs.Int("questions", 0, "only the first N questions of the split (0: all), for quick comparisons of costly settings")
	cache := fs.Bool("cache", true, "cache vectors on disk by embedder identity and text SHA-256 (folder $"+EnvCache+", else $XDG_CACHE_HOME/continuity-eval or ~/.cache/continuity-eval)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: continuity-eval [flags]\n\nRetrieval quality of continuity search on a LongMemEval-style dataset.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	t, ok := tasks[*mode]
	if !ok {
		return fmt.Errorf("unknown --mode %q (want %s)", *mode, strings.Join(taskNames(), ", "))
	}
	c := &config{data: *data, json: *asJSON, misses: *misses, stdout: stdout, stderr: stderr}
	if c.data == "" {
		c.data = os.Getenv(EnvData)
	}
	if c.data == "" {
		c.data = defaultData
	}
	var err error
	if c.ks, err = parseKs(*kList); err != nil {
		return err
	}
	if c.emb, err = newEmbedder(*embedder, *dim, *chunks, *text, *cache, stderr); err != nil {
		return err
	}
	qs, err := loadQuestions(c.data)
	if err != nil {
		return err
	}
	if qs, err = filterSplit(qs, *split); err != nil {
		return err
	}
	if *limit < 0 {
		return fmt.Errorf("--questions %d: want a positive number, or 0 for all", *limit)
	}
	if *limit > 0 && *limit < len(qs) {
		qs = qs[:*limit]
	}
	return t(ctx, c, qs)
}

// newEmbedder builds the embedder the flags select, behind the on-disk
// cache unless disabled, with the text recipe.
func newEmbedder(provider string, dim, chunks int, text string, cache bool, stderr io.Writer) (embed.Embedder, error) {
	cfg, err := embed.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	cfg.Provider, cfg.Dimension, cfg.Chunks = provider, dim, chunks
	e, err := embed.New(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := embed.Resolve(context.Background(), e); err != nil {
		return nil, err
	}
	if cache && os.Getenv(EnvCache) != "off" {
		dir, err := defaultCacheDir()
		if err != nil {
			return nil, err
		}
		ce, err := newCachedEmbedder(e, dir)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "embedding cache: %s (%d vectors)\n", ce.path, len(ce.vecs))
		e = ce
	}
	return search.WithTextRecipe(e, text)
}

// isTerminal reports whether w is a terminal (progress is drawn there only).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func taskNames() []string {
	var n []string
	for k := range tasks {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func parseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k <= 0 {
			return nil, fmt.Errorf("--k %q: want positive integers separated by commas", s)
		}
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks, nil
}

// runRetrieval is the retrieval task: recall of evidence exchanges and
// sessions by hybrid, BM25 and vector search.
func runRetrieval(ctx context.Context, c *config, qs []question) error {
	tty := isTerminal(c.stderr)
	run, err := evaluateRetrieval(ctx, c, qs, defaultVariants(), func(i int, q question) {
		if tty {
			fmt.Fprintf(c.stderr, "\r\033[K%d/%d %s", i+1, len(qs), q.QID)
		}
	})
	if tty {
		fmt.Fprint(c.stderr, "\r\033[K")
	}
	if err != nil {
		return err
	}
	sums := run.summarize()
	if c.json {
		out := map[string]any{
			"data":      c.data,
			"questions": len(qs),
			"embedder":  run.identity,
			"k":         c.ks,
			"results":   sums,
		}
		if c.misses {
			out["misses"] = run.misses(qs)
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(c.stdout, "retrieval on %d questions of %s (embedder %s; indexing %.1fs, embedding %.1fs in all)\n",
		len(qs), c.data, run.identity, run.index.Seconds(), run.embed.Seconds())
	fmt.Fprintf(c.stdout, "any/all@k: one/all evidence exchanges in the top k; sess@k: all answer sessions among the first k distinct sessions;\n"+
		"latency: one query with limit %d, warm, per question\n\n", c.ks[len(c.ks)-1])
	run.printTable(c.stdout, sums)
	if c.misses {
		fmt.Fprintln(c.stdout)
		run.printMisses(c.stdout, qs)
	}
	return nil
}
