package main

// The resume task (--mode resume): how much of each question's evidence a
// resume pack carries. For each question, its haystack (one resume chain)
// is indexed and embedded in a fresh workspace, and resume is run on its
// resume_session with the question as the query and a budget of 2000
// tokens. An evidence exchange counts only if the pack keeps at least 200
// characters of it (all of it when it is shorter); the stricter measure
// (recall_whole, evidence_whole) counts only evidence kept whole, not cut:
// what an agent can rely on.
//
// Compared in the same run, on the same candidates (the chain's exchanges
// before resume_session, whose own exchanges are in the agent's context)
// and the same budget (minus the pack's header):
//   - resume, ranking by hybrid search (what `continuity resume` does with
//     a daemon), and by BM25 alone;
//   - resume with a chain depth cap of 20 links (the default before it
//     became 100: the haystacks are chains of about 50 sessions, so older
//     evidence is out of reach);
//   - BM25 fill: whole exchanges in plain BM25 order (k1 1.2, b 0.75,
//     lowercase words, no stemming: the dataset README's reference), while
//     they fit;
//   - newest first: whole exchanges, newest first, while they fit.
// No pack may exceed the budget: one that does fails the task.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/resume"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/vectors"
)

func init() { tasks["resume"] = runResumeEval }

// EnvResumePolicy, when set, is a JSON object of resume.Policy fields that
// override resume.DefaultPolicy for the resume variants: to tune.
const EnvResumePolicy = "CONTINUITY_RESUME_POLICY"

func resumePolicy() (*resume.Policy, error) {
	p := resume.DefaultPolicy
	if s := os.Getenv(EnvResumePolicy); s != "" {
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			return nil, fmt.Errorf("$%s: %w", EnvResumePolicy, err)
		}
	}
	return &p, nil
}

const (
	resumeEvalBudget   = resume.DefaultBudget
	resumeEvalMinChars = 200
	// resumeEvalDepth is the default cap, which covers a whole
	// haystack's chain.
	resumeEvalDepth = resume.DefaultMaxDepth
)

// resumeVariant is one way of filling the budget.
type resumeVariant struct {
	Name string
	// pack fills the budget for one question; it returns what it shows.
	// tokens is the pack's size (0 when the variant renders no text).
	pack func(ctx context.Context, ws *workspace, q question, chainRows []index.Event) (ex []resume.Exchange, tokens int, lat time.Duration, err error)
}

func resumeVariants() []resumeVariant {
	build := func(rank func(ws *workspace, q question) (resume.Ranker, error), depth int) func(context.Context, *workspace, question, []index.Event) ([]resume.Exchange, int, time.Duration, error) {
		return func(ctx context.Context, ws *workspace, q question, _ []index.Event) ([]resume.Exchange, int, time.Duration, error) {
			r, err := rank(ws, q)
			if err != nil {
				return nil, 0, 0, err
			}
			pol, err := resumePolicy()
			if err != nil {
				return nil, 0, 0, err
			}
			start := time.Now()
			p, err := resume.Build(ctx, &resume.IndexSource{DB: ws.db, Ranker: r},
				resume.Options{Session: q.ResumeSession, Query: q.Text, Budget: resumeEvalBudget, MaxDepth: depth, Policy: pol,
					IncludeCurrent: q.ResumeIncludeCurrent})
			lat := time.Since(start)
			if err != nil {
				return nil, 0, 0, err
			}
			if p.Tokens > p.Budget {
				return nil, 0, 0, fmt.Errorf("pack of %d tokens over the budget of %d", p.Tokens, p.Budget)
			}
			return p.Exchanges, p.Tokens, lat, nil
		}
	}
	// The question is asked at its query_time: "two weeks ago" is read
	// against it, as search does in the retrieval mode.
	hybrid := func(ws *workspace, q question) (resume.Ranker, error) {
		s, err := ws.searcher(search.Options{})
		if err != nil {
			return nil, err
		}
		return resume.SearchRankerAt(s, q.QueryTime), nil
	}
	lexical := func(ws *workspace, _ question) (resume.Ranker, error) { return resume.LexicalRanker(ws.db), nil }
	return []resumeVariant{
		{Name: "resume (hybrid)", pack: build(hybrid, resumeEvalDepth)},
		{Name: "resume (bm25)", pack: build(lexical, resumeEvalDepth)},
		{Name: "resume (hybrid, depth 20)", pack: build(hybrid, 20)},
		{Name: "bm25 fill", pack: fillBaseline(func(q question, evs []index.Event) []index.Event { return bm25Order(evs, q.Text) })},
		{Name: "newest first", pack: fillBaseline(func(_ question, evs []index.Event) []index.Event {
			out := slices.Clone(evs)
			slices.Reverse(out)
			return out
		})},
	}
}

// resumeScore is one question's outcome under one variant.
type resumeScore struct {
	Any          bool
	Found, Total int
	WholeAny     bool // an evidence exchange shown whole
	Whole        int  // evidence exchanges shown whole
	Shown        int
	Cut          int // exchanges shown cut
	Tokens       int // of the pack, 0 when not rendered
	Latency      time.Duration
}

func runResumeEval(ctx context.Context, c *config, qs []question) error {
	vs := resumeVariants()
	scores, byType, err := scoreResumeVariants(ctx, c, qs, vs)
	if err != nil {
		return err
	}
	var sums []resumeSummary
	for vi, v := range vs {
		sums = append(sums, summariseResume(v.Name, scores[vi], byType))
	}
	if c.json {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"data": c.data, "questions": len(qs), "embedder": vectors.SpaceIdentity(c.emb),
			"budget": resumeEvalBudget, "tokenizer": resume.DefaultEncoding, "min_chars": resumeEvalMinChars,
			"results": sums,
		})
	}
	return printResumeSummaries(c, len(qs), sums, byType)
}

// scoreResumeVariants packs each question with each variant and scores the
// packs: scores[variant][question]. byType lists the questions of each
// type by index.
func scoreResumeVariants(ctx context.Context, c *config, qs []question, vs []resumeVariant) (scores [][]resumeScore, byType map[string][]int, err error) {
	scores = make([][]resumeScore, len(vs))
	byType = map[string][]int{}
	tty := isTerminal(c.stderr)
	for i, q := range qs {
		if tty {
			fmt.Fprintf(c.stderr, "\r\033[K%d/%d %s", i+1, len(qs), q.QID)
		}
		ws, done, err := c.open(ctx, q)
		if err != nil {
			return nil, nil, fmt.Errorf("question %s: %w", q.QID, err)
		}
		cand, full, err := resumeCandidates(ctx, ws, q)
		if err != nil {
			done()
			return nil, nil, fmt.Errorf("question %s: %w", q.QID, err)
		}
		for vi, v := range vs {
			got, tokens, lat, err := v.pack(ctx, ws, q, cand)
			if err != nil {
				done()
				return nil, nil, fmt.Errorf("question %s, %s: %w", q.QID, v.Name, err)
			}
			s := scoreResume(got, full, q)
			s.Latency, s.Tokens = lat, tokens
			scores[vi] = append(scores[vi], s)
		}
		byType[q.Type] = append(byType[q.Type], i)
		done()
	}
	if tty {
		fmt.Fprint(c.stderr, "\r\033[K")
	}
	return scores, byType, nil
}

// resumeSummary is one variant's scores over the questions.
type resumeSummary struct {
	Variant        string  `json:"variant"`
	RecallAny      float64 `json:"recall_any"`
	EvidenceRecall float64 `json:"evidence_recall"`
	RecallWhole    float64 `json:"recall_any_whole"`
	EvidenceWhole  float64 `json:"evidence_whole"`
	// EvidenceTotal is how many evidence exchanges the questions have
	// (what evidence and evidence_whole are shares of).
	EvidenceTotal int                `json:"evidence_total"`
	MeanShown     float64            `json:"mean_exchanges_shown"`
	MeanTokens    float64            `json:"mean_tokens,omitempty"`
	Truncated     float64            `json:"mean_truncated"`
	ByType        map[string]float64 `json:"recall_any_by_type"`
	LatencyP50    float64            `json:"latency_p50_ms,omitempty"`
	LatencyP95    float64            `json:"latency_p95_ms,omitempty"`
}

// summariseResume sums up a variant's scores, one per question.
func summariseResume(name string, scores []resumeScore, byType map[string][]int) resumeSummary {
	s := resumeSummary{Variant: name, ByType: map[string]float64{}}
	var hits, found, total, shown, wholeHits, whole, tokens, cut int
	var lats []time.Duration
	for _, r := range scores {
		if r.Any {
			hits++
		}
		if r.WholeAny {
			wholeHits++
		}
		whole += r.Whole
		found += r.Found
		total += r.Total
		shown += r.Shown
		tokens += r.Tokens
		cut += r.Cut
		if r.Latency > 0 {
			lats = append(lats, r.Latency)
		}
	}
	n := len(scores)
	s.RecallAny = float64(hits) / float64(n)
	s.EvidenceRecall = float64(found) / float64(max(1, total))
	s.RecallWhole = float64(wholeHits) / float64(n)
	s.EvidenceWhole = float64(whole) / float64(max(1, total))
	s.EvidenceTotal = total
	s.MeanShown = float64(shown) / float64(n)
	s.MeanTokens = float64(tokens) / float64(n)
	s.Truncated = float64(cut) / float64(n)
	for t, idx := range byType {
		h := 0
		for _, i := range idx {
			if scores[i].Any {
				h++
			}
		}
		s.ByType[t] = float64(h) / float64(len(idx))
	}
	if len(lats) > 0 {
		s.LatencyP50, s.LatencyP95 = ms(percentile(lats, 0.5)), ms(percentile(lats, 0.95))
	}
	return s
}

// printResumeSummaries prints the variants' summaries as a table, with a
// column per question type.
func printResumeSummaries(c *config, questions int, sums []resumeSummary, byType map[string][]int) error {
	fmt.Fprintf(c.stdout, "resume on %d questions of %s (embedder %s), budget %d tokens (%s)\n",
		questions, c.data, vectors.SpaceIdentity(c.emb), resumeEvalBudget, resume.DefaultEncoding)
	fmt.Fprintf(c.stdout, "recall_any: an evidence exchange in the pack with >= %d characters kept (all when shorter); "+
		"evidence: share of evidence exchanges so kept;\nany_whole, ev_whole: the same, counting only evidence kept whole (not cut); latency: one resume, per question\n", resumeEvalMinChars)
	if len(sums) > 0 {
		fmt.Fprintf(c.stdout, "evidence exchanges: %d in all\n", sums[0].EvidenceTotal)
	}
	fmt.Fprintln(c.stdout)
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Strings(types)
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "variant\trecall_any\tevidence\tany_whole\tev_whole\tshown\tcut\ttokens\tp50 ms\tp95 ms\t")
	for _, t := range types {
		fmt.Fprintf(w, "%s (%d)\t", shortType(t), len(byType[t]))
	}
	fmt.Fprintln(w)
	for _, s := range sums {
		fmt.Fprintf(w, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t", s.Variant, s.RecallAny, s.EvidenceRecall, s.RecallWhole, s.EvidenceWhole, s.MeanShown, s.Truncated)
		if s.MeanTokens > 0 {
			fmt.Fprintf(w, "%.0f\t", s.MeanTokens)
		} else {
			fmt.Fprint(w, "-\t")
		}
		if s.LatencyP50 > 0 {
			fmt.Fprintf(w, "%.1f\t%.1f\t", s.LatencyP50, s.LatencyP95)
		} else {
			fmt.Fprint(w, "-\t-\t")
		}
		for _, t := range types {
			fmt.Fprintf(w, "%.3f\t", s.ByType[t])
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

func shortType(t string) string {
	return strings.NewReplacer("single-session-", "ss-", "temporal-reasoning", "temporal", "knowledge-update", "update").Replace(t)
}

// resumeCandidates returns what the baselines may fill the budget with —
// the exchanges of the whole chain but resume_session's own (still in the
// agent's context: the haystacks have no context reset), chronologically —
// and the full length in characters of every evidence exchange.
func resumeCandidates(ctx context.Context, ws *workspace, q question) ([]index.Event, map[string]int, error) {
	src := &resume.IndexSource{DB: ws.db}
	ch, err := resume.FollowChain(ctx, src, q.ResumeSession, resumeEvalDepth)
	if err != nil {
		return nil, nil, err
	}
	tl, err := src.Timeline(ctx, ch.Sessions)
	if err != nil {
		return nil, nil, err
	}
	var rows []int64
	for _, e := range tl {
		if e.Type == logformat.TypeExchange {
			rows = append(rows, e.Row)
		}
	}
	evs, err := src.Events(ctx, rows)
	if err != nil {
		return nil, nil, err
	}
	full := map[string]int{}
	var cand []index.Event
	for _, e := range evs {
		if id := q.canon(e.EventID); slices.Contains(q.Evidence, id) {
			// the evidence's length: its longest part
			full[id] = max(full[id], utf8.RuneCountInString(e.User)+utf8.RuneCountInString(e.AI))
		}
		if e.SessionID != q.ResumeSession || q.ResumeIncludeCurrent {
			cand = append(cand, e)
		}
	}
	return cand, full, nil
}

// fillBaseline fills the budget with whole exchanges in the order given,
// each costing its tokens as a pack would show it, skipping those that no
// longer fit.
func fillBaseline(order func(q question, evs []index.Event) []index.Event) func(context.Context, *workspace, question, []index.Event) ([]resume.Exchange, int, time.Duration, error) {
	return func(_ context.Context, _ *workspace, q question, evs []index.Event) ([]resume.Exchange, int, time.Duration, error) {
		c, err := resume.NewCounter("")
		if err != nil {
			return nil, 0, 0, err
		}
		left := resumeEvalBudget - 40 // about a pack header's worth
		var got []resume.Exchange
		for _, e := range order(q, evs) {
			n := c.Count("\n["+e.Timestamp.Format("15:04")+"]\nUser: "+e.User+"\nAI: "+e.AI+"\n") + 1
			if n > left {
				continue
			}
			left -= n
			got = append(got, resume.Exchange{ID: e.EventID, SessionID: e.SessionID, Timestamp: e.Timestamp, User: e.User, AI: e.AI})
		}
		return got, 0, 0, nil
	}
}

// scoreResume checks which evidence exchanges a pack kept enough of (an
// exchange standing for an evidence one, q.Equiv, counts for it, once).
func scoreResume(got []resume.Exchange, full map[string]int, q question) resumeScore {
	s := resumeScore{Total: len(q.Evidence), Shown: len(got)}
	found := map[string]bool{}
	for _, e := range got {
		if e.Truncated {
			s.Cut++
		}
		id := q.canon(e.ID)
		if !slices.Contains(q.Evidence, id) || found[id] {
			continue
		}
		kept := utf8.RuneCountInString(resume.StripMarkers(e.User + e.AI))
		if kept >= min(resumeEvalMinChars, full[id]) {
			found[id] = true
			s.Found++
			s.Any = true
		}
		if !e.Truncated {
			s.Whole++
			s.WholeAny = true
		}
	}
	return s
}

// bm25Order ranks events by plain BM25 (k1 1.2, b 0.75) over the lowercase
// words of user and ai, no stemming; events without a query word are left
// out.
func bm25Order(evs []index.Event, query string) []index.Event {
	const k1, b = 1.2, 0.75
	docs := make([]map[string]int, len(evs))
	lens := make([]float64, len(evs))
	df := map[string]int{}
	total := 0.0
	for i, e := range evs {
		tf := map[string]int{}
		for _, w := range analyze.Tokens(e.User + "\n" + e.AI) {
			tf[w]++
			lens[i]++
		}
		for w := range tf {
			df[w]++
		}
		docs[i] = tf
		total += lens[i]
	}
	avg := total / float64(max(1, len(evs)))
	qs := map[string]bool{}
	for _, w := range analyze.Tokens(query) {
		qs[w] = true
	}
	type scoredEv struct {
		i int
		s float64
	}
	var ss []scoredEv
	n := float64(len(evs))
	for i := range evs {
		s := 0.0
		for w := range qs {
			tf := float64(docs[i][w])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
			s += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*lens[i]/avg))
		}
		if s > 0 {
			ss = append(ss, scoredEv{i, s})
		}
	}
	sort.SliceStable(ss, func(a, b int) bool { return ss[a].s > ss[b].s })
	out := make([]index.Event, len(ss))
	for k, s := range ss {
		out[k] = evs[s.i]
	}
	return out
}
