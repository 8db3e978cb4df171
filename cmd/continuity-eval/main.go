// Command continuity-eval measures retrieval quality on a LongMemEval-style
// dataset (see /work/shared/data/longmemeval-s-dev/README.md): each
// question's haystack is indexed with the real stack (index, watcher, embed
// worker) in a fresh temporary workspace, and the question is run through
// search. It compares, in the same run, hybrid search with BM25 alone and
// vectors alone.
//
//	go run -tags sqlite_fts5 ./cmd/continuity-eval [--data DIR] [--k 5,10] [--json]
//
// --set selects the questions: "longmemeval" (the default: a dataset in
// the LongMemEval export format, each question with its own haystack),
// "coding" (coding.go: hand-written questions about the real coding-agent
// transcripts of ../shared/data/agent-transcripts, all in one workspace)
// or "answers" (answers.go: questions whose evidence is in the agent's
// answer, not in the user's prompt).
//
// --mode selects the task: "retrieval" or "resume". A task is a function
// in the tasks table below: it gets the parsed configuration and the
// questions (with c.open to reach each one's haystack), and prints its own
// report.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/internal/embedcache"
	"github.com/praxis-os/continuity/vectors"
	"golang.org/x/term"
)

// EnvData overrides the default dataset folder.
const EnvData = "CONTINUITY_EVAL_DATA"

const defaultData = "../shared/data/longmemeval-s-dev"

// config is what every task gets.
type config struct {
	set          string
	mode         string
	showEvidence bool
	data         string
	ks           []int
	json         bool
	misses       bool
	emb          embed.Embedder
	vs           []variant
	dump         io.Writer // --dump-scores, or nil
	stdout       io.Writer
	stderr       io.Writer
	// open gives a question its indexed haystack; done releases it.
	open func(ctx context.Context, q question) (ws *workspace, done func(), err error)
	// note, when set, is printed under a task's title line (what the set
	// adds to the report, such as the coding set's word overlap).
	note string
}

// perQuestionWorkspaces is the haystack of the LongMemEval set: each
// question's log in a fresh workspace.
func perQuestionWorkspaces(c *config) func(ctx context.Context, q question) (*workspace, func(), error) {
	return func(ctx context.Context, q question) (*workspace, func(), error) {
		ws, err := openWorkspace(ctx, filepath.Join(c.data, q.LogFile), c.emb)
		if err != nil {
			return nil, nil, err
		}
		return ws, ws.close, nil
	}
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
	set := fs.String("set", setLongMemEval, "which questions: "+setLongMemEval+" (a LongMemEval-format dataset, --data), "+setCoding+
		" (hand-written questions about the real coding-agent transcripts of --data, default $"+EnvTranscripts+", else "+defaultTranscripts+") or "+
		setAnswers+" (questions whose evidence is in the agent's answer, not the prompt: parts "+strings.Join(answerParts, ", ")+") or "+
		setDevs+" (the developers' set, compiled in: agent sessions whose decisions are in the answers, often one exchange after the question)")
	data := fs.String("data", "", "dataset folder (default $"+EnvData+", else "+defaultData+"; with --set "+setCoding+" or "+setAnswers+": the transcripts folder)")
	showEvidence := fs.Bool("show-evidence", false, "with --set "+setCoding+" or "+setAnswers+": list each question's evidence exchanges as found in the imported transcripts (and, for "+setAnswers+", the answer-side check of each), then stop (to check the set)")
	questionsFile := fs.String("questions", "", "with --set "+setCoding+": the question file (default: the one compiled in, testdata/coding-questions.jsonl); with --set "+setAnswers+": its transcripts part (default testdata/answer-questions.jsonl)")
	incidentsFile := fs.String("incidents", "", "with --set "+setAnswers+": the incidents file of its incidents part (default: the one compiled in, testdata/answer-incidents.jsonl)")
	lmeData := fs.String("longmemeval", "", "with --set "+setAnswers+": the LongMemEval dataset of its "+partLongMemEval+" part (default $"+EnvData+", else "+defaultData+")")
	types := fs.String("types", "", "only the questions of these comma-separated types: LongMemEval question types, the coding set's agents, the answers set's parts")
	kList := fs.String("k", "5,10", "cut-offs, comma-separated")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	mode := fs.String("mode", "retrieval", "what to evaluate: "+strings.Join(taskNames(), ", "))
	misses := fs.Bool("misses", false, "retrieval: also list the questions some variant misses, with the evidence ranks (in the JSON: \"misses\")")
	split := fs.String("split", splitAll, "which questions: all, tune (fnv32a(qid) even: choose settings here) or heldout (odd: report here)")
	variants := fs.String("variants", "default", "retrieval: comma-separated variants: default (hybrid, hybrid without time anchoring, bm25, vector) and any of "+strings.Join(extraVariantNames(), ", "))
	dumpPath := fs.String("dump-scores", "", "retrieval: write each query's results with their score components (real questions and nonsense queries) to this JSONL file")
	minScore := fs.Float64("min-score", -1, "retrieval: the score floor of every variant's queries (default: search's default floor; 0 keeps everything)")
	embedder := fs.String("embedder", embed.DefaultProvider, "embedder: uselite, hash (\"builtin\" is its old name), ollama or openai (remote ones read CONTINUITY_EMBED_URL, _MODEL, _API_KEY)")
	dim := fs.Int("dim", 0, "embedder dimension (hash: buckets; default: the embedder's default)")
	chunks := fs.Int("chunks", 0, "uselite: most 128-token chunks embedded per exchange (default: the embedder's default)")
	text := fs.String("text", vectors.DefaultText, "what of an exchange is embedded: "+strings.Join([]string{vectors.TextUser, vectors.TextUserAI, vectors.TextUserDate, vectors.TextUserPrev, vectors.TextAI}, ", ")+"; or chunkN, chunkmean (see --more)")
	limit := fs.Int("first", 0, "only the first N questions of the split (0: all), for quick comparisons of costly settings")
	answerWeight := fs.Float64("answer-weight", vectors.AnswerWeight, "the factor of an answer vector's similarity (the recipe user|ai: vectors.AnswerWeight)")
	more := fs.String("more", "", "retrieval: further vector spaces of the same model searched with the main one, an exchange's similarity being the largest (several vectors per exchange): comma-separated text recipes ("+strings.Join([]string{vectors.TextUser, vectors.TextUserAI, vectors.TextUserDate, vectors.TextUserPrev, vectors.TextAI}, ", ")+") chunkN (the vector of the N-th 128-token chunk of the user+ai text, 1 to 8) or chunkmean (their mean, = the user+ai vector); --text chunk1 --more chunk2,...,chunk8 is the max over chunks, --text chunkmean the mean, from the same chunk vectors")
	cache := fs.Bool("cache", true, "cache vectors on disk by embedder identity and text SHA-256 (folder $"+embedcache.EnvDir+", else $XDG_CACHE_HOME/continuity-eval or ~/.cache/continuity-eval)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: continuity-eval [flags]\n\nRetrieval and resume quality of continuity on a LongMemEval-style dataset (--set longmemeval),\n"+
			"on hand-written questions about real coding-agent transcripts (--set coding), or on questions\n"+
			"whose evidence is in the agent's answer rather than the user's prompt (--set answers).\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	vectors.AnswerWeight = *answerWeight
	t, ok := tasks[*mode]
	if !ok {
		return fmt.Errorf("unknown --mode %q (want %s)", *mode, strings.Join(taskNames(), ", "))
	}
	c := &config{set: *set, mode: *mode, showEvidence: *showEvidence, data: *data, json: *asJSON, misses: *misses, stdout: stdout, stderr: stderr}
	if c.set != setAnswers && (*incidentsFile != "" || *lmeData != "") {
		return fmt.Errorf("--incidents and --longmemeval are for --set %s", setAnswers)
	}
	switch c.set {
	case setLongMemEval:
		if *questionsFile != "" {
			return fmt.Errorf("--questions is for --set %s or %s", setCoding, setAnswers)
		}
		c.data = cmp.Or(c.data, os.Getenv(EnvData), defaultData)
	case setCoding:
		c.data = cmp.Or(c.data, os.Getenv(EnvTranscripts), defaultTranscripts)
	case setAnswers:
		*lmeData = answersDataDefaults(c, *lmeData)
	case setDevs:
		if *questionsFile != "" || c.data != "" {
			return fmt.Errorf("--questions and --data are not for --set %s (compiled in)", setDevs)
		}
	default:
		return fmt.Errorf("unknown --set %q (want %s, %s, %s or %s)", c.set, setLongMemEval, setCoding, setAnswers, setDevs)
	}
	typeList := splitList(*types)
	var err error
	if c.vs, err = selectVariants(*variants); err != nil {
		return err
	}
	if *minScore >= 0 {
		for i := range c.vs {
			c.vs[i].MinScore = minScore
		}
	}
	if *dumpPath != "" {
		f, err := os.OpenFile(*dumpPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		c.dump = f
	}
	if c.ks, err = parseKs(*kList); err != nil {
		return err
	}
	if strings.HasPrefix(*text, "chunk") {
		// The main space of a chunk measurement (see --more).
		es, err := moreEmbedders(*text, *embedder, *dim, *chunks, *cache, stderr)
		if err != nil {
			return fmt.Errorf("--text: %w", err)
		}
		c.emb = es[0]
	} else if c.emb, err = newEmbedder(*embedder, *dim, *chunks, *text, *cache, stderr); err != nil {
		return err
	}
	if moreSpaces, err = moreEmbedders(*more, *embedder, *dim, *chunks, *cache, stderr); err != nil {
		return err
	}
	switch c.set {
	case setDevs:
		return runDevs(ctx, c, t, *split, typeList, *limit)
	case setCoding:
		return runCoding(ctx, c, t, *questionsFile, *split, typeList, *limit)
	case setAnswers:
		return runAnswers(ctx, c, t, answerOptions{questions: *questionsFile, incidents: *incidentsFile, longMemEval: *lmeData,
			split: *split, types: typeList, first: *limit})
	}
	qs, err := loadQuestions(c.data)
	if err != nil {
		return err
	}
	if qs, err = filterTypes(qs, typeList); err != nil {
		return err
	}
	if qs, err = filterSplit(qs, *split); err != nil {
		return err
	}
	if qs, err = firstN(qs, *limit); err != nil {
		return err
	}
	c.open = perQuestionWorkspaces(c)
	return t(ctx, c, qs)
}

// firstN keeps the first n questions of qs (all when n is 0), for --first.
func firstN(qs []question, n int) ([]question, error) {
	if n < 0 {
		return nil, fmt.Errorf("--first %d: want a positive number, or 0 for all", n)
	}
	if n > 0 && n < len(qs) {
		qs = qs[:n]
	}
	return qs, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// filterTypes keeps the questions whose type is in types (all when types
// is empty), or says which types there are.
func filterTypes(qs []question, types []string) ([]question, error) {
	if len(types) == 0 {
		return qs, nil
	}
	var out []question
	var have []string
	for _, q := range qs {
		if slices.Contains(types, q.Type) {
			out = append(out, q)
		}
		if !slices.Contains(have, q.Type) {
			have = append(have, q.Type)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--types %s: no question of these types (the set has %s)", strings.Join(types, ","), strings.Join(have, ", "))
	}
	return out, nil
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
	if cache && !embedcache.Disabled() {
		dir, err := embedcache.DefaultDir()
		if err != nil {
			return nil, err
		}
		ce, err := embedcache.New(e, dir)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "embedding cache: %s (%d vectors)\n", ce.Path(), ce.Len())
		e = ce
	}
	return vectors.WithTextRecipe(e, text)
}

// isTerminal reports whether w is a terminal (progress is drawn there only).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

func extraVariantNames() []string {
	var n []string
	for k := range extraVariants {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
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
	run, err := evaluateRetrieval(ctx, c, qs, c.vs, func(i int, q question) {
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
			"nonsense":  run.nonsenseReport(),
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
	if c.note != "" {
		fmt.Fprintln(c.stdout, c.note)
	}
	fmt.Fprintf(c.stdout, "any/all@k: one/all evidence exchanges in the top k; sess@k: all answer sessions among the first k distinct sessions;\n"+
		"none: questions answered with no result that reached the floor (nothing, or weak matches only); latency: one query with limit %d, warm, per question\n\n", c.ks[len(c.ks)-1])
	run.printTable(c.stdout, sums)
	fmt.Fprintf(c.stdout, "\nnonsense queries (%d asked in each question's workspace) that returned results:\n", len(nonsenseQueries))
	for _, n := range run.nonsenseReport() {
		fmt.Fprintf(c.stdout, "  %-28s %d of %d\n", n.Variant, n.WithResults, n.Asked)
	}
	if c.misses {
		fmt.Fprintln(c.stdout)
		run.printMisses(c.stdout, qs)
	}
	return nil
}
