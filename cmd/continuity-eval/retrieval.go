package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/vectors"
)

// variant is one way of searching, evaluated on every question.
type variant struct {
	Name    string
	Mode    search.Mode
	Options search.Options
	// MinScore is the queries' floor; nil: search's default.
	MinScore *float64
}

// defaultVariants compare hybrid search with each of its parts.
func defaultVariants() []variant {
	return []variant{
		{Name: "hybrid", Mode: search.ModeHybrid},
		{Name: "hybrid, no time anchoring", Mode: search.ModeHybrid, Options: search.Options{TimeWeight: -1}},
		{Name: "bm25", Mode: search.ModeLexical},
		{Name: "vector", Mode: search.ModeVector},
	}
}

// extraVariants are the variants --variants can add by name: settings
// tried against the defaults, side by side in the same run.
var extraVariants = map[string]variant{
	"depth50":    {Name: "hybrid, depth 50", Mode: search.ModeHybrid, Options: search.Options{Depth: 50}},
	"depth100":   {Name: "hybrid, depth 100", Mode: search.ModeHybrid, Options: search.Options{Depth: 100}},
	"vw0.3":      {Name: "hybrid, vector weight 0.3", Mode: search.ModeHybrid, Options: search.Options{VectorWeight: 0.3}},
	"vw0.5":      {Name: "hybrid, vector weight 0.5", Mode: search.ModeHybrid, Options: search.Options{VectorWeight: 0.5}},
	"vw0.7":      {Name: "hybrid, vector weight 0.7", Mode: search.ModeHybrid, Options: search.Options{VectorWeight: 0.7}},
	"vw1":        {Name: "hybrid, vector weight 1", Mode: search.ModeHybrid, Options: search.Options{VectorWeight: 1}},
	"vw1.5":      {Name: "hybrid, vector weight 1.5", Mode: search.ModeHybrid, Options: search.Options{VectorWeight: 1.5}},
	"vw0.4":      {Name: "hybrid, vector weight 0.4", Mode: search.ModeHybrid, Options: search.Options{VectorWeight: 0.4}},
	"rrfk5":      {Name: "hybrid, rrf k 5", Mode: search.ModeHybrid, Options: search.Options{RRFK: 5}},
	"rm3":        {Name: "hybrid, rm3 (10 terms)", Mode: search.ModeHybrid, Options: search.Options{Expansion: 10}},
	"rm3bm25":    {Name: "bm25, rm3 (10 terms)", Mode: search.ModeLexical, Options: search.Options{Expansion: 10}},
	"rrfk30":     {Name: "hybrid, rrf k 30", Mode: search.ModeHybrid, Options: search.Options{RRFK: 30}},
	"rrfk60":     {Name: "hybrid, rrf k 60", Mode: search.ModeHybrid, Options: search.Options{RRFK: 60}},
	"cohort0.1":  {Name: "hybrid, cohort level +0.1", Mode: search.ModeHybrid, Options: search.Options{CohortMargin: 0.1}},
	"cohort0.15": {Name: "hybrid, cohort level +0.15", Mode: search.ModeHybrid, Options: search.Options{CohortMargin: 0.15}},
	"cohort0.2":  {Name: "hybrid, cohort level +0.2", Mode: search.ModeHybrid, Options: search.Options{CohortMargin: 0.2}},
	// nofloor is hybrid without the "nothing relevant" score floor: what
	// the floor costs a set whose evidence scores low.
	"nofloor": {Name: "hybrid, no score floor", Mode: search.ModeHybrid, MinScore: new(float64)},
	// The score's parts (issue 22: results ordered by their score; the
	// defaults are vector share 0.5, power 2, length 300, time outside 0.8).
	"vs0.3":  {Name: "hybrid, vector share 0.3", Mode: search.ModeHybrid, Options: search.Options{VectorShare: 0.3}},
	"vs1":    {Name: "hybrid, vector share 1", Mode: search.ModeHybrid, Options: search.Options{VectorShare: 1}},
	"vp1":    {Name: "hybrid, vector power 1", Mode: search.ModeHybrid, Options: search.Options{VectorPower: 1}},
	"vp3":    {Name: "hybrid, vector power 3", Mode: search.ModeHybrid, Options: search.Options{VectorPower: 3}},
	"len150": {Name: "hybrid, length avg 150", Mode: search.ModeHybrid, Options: search.Options{LengthAvg: 150}},
	"len600": {Name: "hybrid, length avg 600", Mode: search.ModeHybrid, Options: search.Options{LengthAvg: 600}},
	"nolen":  {Name: "hybrid, no length norm", Mode: search.ModeHybrid, Options: search.Options{LengthAvg: -1}},
	"vp1.5":  {Name: "hybrid, vector power 1.5", Mode: search.ModeHybrid, Options: search.Options{VectorPower: 1.5}},
	"to0.6":  {Name: "hybrid, time outside 0.6", Mode: search.ModeHybrid, Options: search.Options{TimeOutside: 0.6}},
	"to0.9":  {Name: "hybrid, time outside 0.9", Mode: search.ModeHybrid, Options: search.Options{TimeOutside: 0.9}},
	// Issue 32: a strong match by meaning alone scores at least f·V.
	"vfloor0.5": {Name: "hybrid, vector floor 0.5", Mode: search.ModeHybrid, Options: search.Options{VectorFloor: 0.5}},
	"vfloor0.7": {Name: "hybrid, vector floor 0.7", Mode: search.ModeHybrid, Options: search.Options{VectorFloor: 0.7}},
	"vfloor1":   {Name: "hybrid, vector floor 1", Mode: search.ModeHybrid, Options: search.Options{VectorFloor: 1}},
}

// selectVariants returns the variants named in list (comma-separated:
// "default" for defaultVariants, else names of extraVariants).
func selectVariants(list string) ([]variant, error) {
	var out []variant
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "default" {
			out = append(out, defaultVariants()...)
			continue
		}
		v, ok := extraVariants[n]
		if !ok {
			v, ok = neighbourVariant(n)
		}
		if !ok {
			var names []string
			for k := range extraVariants {
				names = append(names, k)
			}
			slices.Sort(names)
			return nil, fmt.Errorf("--variants: unknown variant %q (want default or %s)", n, strings.Join(names, ", "))
		}
		out = append(out, v)
	}
	return out, nil
}

// scored is one question's outcome under one variant.
type scored struct {
	QID, Type string
	// AnyAt[i], AllAt[i], SessAt[i] are the hits at ks[i].
	AnyAt, AllAt, SessAt []bool
	Latency              time.Duration
	// Ranks holds, per evidence exchange in the question's order, its
	// 1-based rank in the results, 0 when it is not among them.
	Ranks []int
	// Results are the scoring query's results.
	Results []search.Result
}

// retrievalRun holds every question's outcome, per variant.
type retrievalRun struct {
	// nonsense[v] counts the nonsense queries (nonsenseQueries, asked in
	// every question's workspace) for which variant v returned something,
	// of nonsenseAsked.
	nonsense      []int
	nonsenseAsked int
	ks            []int
	variants      []variant
	scores        [][]scored // [variant][question]
	identity      string
	index         time.Duration // total indexing time
	embed         time.Duration // total embedding time
}

// strongResults counts the results not marked weak (search.Result.Weak:
// shown although no result reached the floor).
func strongResults(res []search.Result) int {
	n := 0
	for _, r := range res {
		if !r.Weak {
			n++
		}
	}
	return n
}

// evalLimit is how many results the scoring query asks for: enough for
// ks and for the session metric, which needs k distinct sessions.
func evalLimit(ks []int) int { return max(50, 5*slices.Max(ks)) }

// evaluateRetrieval indexes each question's haystack in a fresh workspace
// and runs the question through every variant. progress, if not nil, is
// told about each question.
func evaluateRetrieval(ctx context.Context, c *config, qs []question, vs []variant, progress func(i int, q question)) (*retrievalRun, error) {
	run := &retrievalRun{ks: c.ks, variants: vs, scores: make([][]scored, len(vs)), identity: vectors.SpaceIdentity(c.emb),
		nonsense: make([]int, len(vs))}
	seen := map[*workspace]bool{} // a shared workspace's times count once
	for i, q := range qs {
		if progress != nil {
			progress(i, q)
		}
		ws, done, err := c.open(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", q.QID, err)
		}
		if !seen[ws] {
			seen[ws] = true
			run.index += ws.indexTime
			run.embed += ws.embedTime
		}
		for vi, v := range vs {
			s, err := scoreQuestion(ctx, ws, q, v, c.ks)
			if err != nil {
				done()
				return nil, fmt.Errorf("question %s, %s: %w", q.QID, v.Name, err)
			}
			run.scores[vi] = append(run.scores[vi], s)
			if c.dump != nil {
				if err := dumpScores(c.dump, q, v, "real", q.Text, s.Results, q.Evidence); err != nil {
					return nil, err
				}
			}
			srch, err := ws.searcher(v.Options)
			if err != nil {
				return nil, err
			}
			for _, text := range nonsenseQueries {
				res, err := srch.Search(ctx, search.Query{Text: text, Mode: v.Mode, Limit: 10, Now: q.QueryTime, MinScore: v.MinScore})
				if err != nil {
					return nil, fmt.Errorf("question %s, %s, %q: %w", q.QID, v.Name, text, err)
				}
				if strongResults(res) > 0 {
					run.nonsense[vi]++
				}
				if c.dump != nil {
					if err := dumpScores(c.dump, q, v, "nonsense", text, res, nil); err != nil {
						return nil, err
					}
				}
			}
		}
		run.nonsenseAsked += len(nonsenseQueries)
		done()
	}
	return run, nil
}

// dumpScores writes one query's results, with their score components, as
// a JSON line (--dump-scores): the material to calibrate scores and floor.
func dumpScores(w io.Writer, q question, v variant, kind, text string, res []search.Result, evidence []string) error {
	isEvidence := func(id string) bool { return slices.Contains(evidence, q.canon(id)) }
	type row struct {
		Rank     int     `json:"rank"`
		Evidence bool    `json:"evidence,omitempty"`
		Score    float64 `json:"score"`
		Lexical  float64 `json:"lexical"`
		Semantic float64 `json:"semantic"`
		Fused    float64 `json:"fused"`
		Cosine   float64 `json:"cosine"`
	}
	out := struct {
		QID     string `json:"qid"`
		Variant string `json:"variant"`
		Kind    string `json:"kind"`
		Query   string `json:"query"`
		Results []row  `json:"results"`
	}{QID: q.QID, Variant: v.Name, Kind: kind, Query: text, Results: []row{}}
	for i, r := range res[:min(len(res), 50)] {
		out.Results = append(out.Results, row{Rank: i + 1, Evidence: isEvidence(r.ID), Score: r.Score, Lexical: r.Lexical, Semantic: r.Semantic, Fused: r.Fused, Cosine: r.Cosine})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// scoreQuestion runs one question under one variant: a timed query with
// the largest k as its limit (what a user would run; after one untimed
// run, so that caches are warm as in a daemon), and the scoring query.
func scoreQuestion(ctx context.Context, ws *workspace, q question, v variant, ks []int) (scored, error) {
	s, err := ws.searcher(v.Options)
	if err != nil {
		return scored{}, err
	}
	query := search.Query{Text: q.Text, Mode: v.Mode, Limit: slices.Max(ks), Now: q.QueryTime, MinScore: v.MinScore}
	if _, err := s.Search(ctx, query); err != nil {
		return scored{}, err
	}
	start := time.Now()
	head, err := s.Search(ctx, query)
	if err != nil {
		return scored{}, err
	}
	lat := time.Since(start)

	// What a user sees is the limit's results (head); the longer list
	// past them gives the ranks beyond and the sessions' metric. (A
	// larger limit reads more candidates, and may rank differently past
	// the first 21: search.poolSize.)
	query.Limit = evalLimit(ks)
	long, err := s.Search(ctx, query)
	if err != nil {
		return scored{}, err
	}
	res := append([]search.Result(nil), head...)
	for _, r := range long {
		if !slices.ContainsFunc(head, func(h search.Result) bool { return h.ID == r.ID }) {
			res = append(res, r)
		}
	}
	out := score(q, res, ks, lat)
	out.Results = res
	return out, nil
}

// nonsenseQueries are about nothing a personal-assistant or coding history
// holds: with the default floor, hybrid search must return nothing for
// them (see --floor).
var nonsenseQueries = []string{
	"quantum entanglement photosynthesis",
	"zygomorphic flowers of the xerophytic bromeliad",
	"byzantine iconoclasm liturgical chant",
	"tardigrade cryptobiosis desiccation",
	"pangolin scale keratin smuggling",
	"medieval falconry jesses and hoods",
}

// score compares the results of a question with its evidence.
func score(q question, res []search.Result, ks []int, lat time.Duration) scored {
	out := scored{QID: q.QID, Type: q.Type, Latency: lat, Ranks: make([]int, len(q.Evidence))}
	var sessions []string // distinct, in rank order
	for i, r := range res {
		if j := slices.Index(q.Evidence, q.canon(r.ID)); j >= 0 && out.Ranks[j] == 0 {
			out.Ranks[j] = i + 1
		}
		if !slices.Contains(sessions, r.SessionID) {
			sessions = append(sessions, r.SessionID)
		}
	}
	for _, k := range ks {
		top := map[string]bool{}
		for _, r := range res[:min(k, len(res))] {
			top[q.canon(r.ID)] = true
		}
		found := 0
		for _, id := range q.Evidence {
			if top[id] {
				found++
			}
		}
		out.AnyAt = append(out.AnyAt, found > 0)
		out.AllAt = append(out.AllAt, found == len(q.Evidence))
		topSess := sessions[:min(k, len(sessions))]
		all := true
		for _, s := range q.AnswerSessions {
			all = all && slices.Contains(topSess, s)
		}
		out.SessAt = append(out.SessAt, all)
	}
	return out
}

// summary aggregates the outcomes of one variant on one group of
// questions.
type summary struct {
	Variant string `json:"variant"`
	Type    string `json:"question_type"` // "all" for every question
	N       int    `json:"questions"`
	// Keyed "@5", "@10", ...
	RecallAny        map[string]float64 `json:"recall_any"`
	RecallAll        map[string]float64 `json:"recall_all"`
	SessionRecallAll map[string]float64 `json:"session_recall_all"`
	// NoResults counts the questions the variant answered with nothing
	// but weak matches, or nothing
	// (its score floor, the "nothing relevant" gate, kept no result).
	NoResults int     `json:"no_results"`
	P50ms     float64 `json:"latency_p50_ms"`
	P95ms     float64 `json:"latency_p95_ms"`
}

// summarize returns, per variant, the summary over all questions then one
// per question type (in the order types first appear).
func (r *retrievalRun) summarize() [][]summary {
	out := make([][]summary, len(r.variants))
	for vi, v := range r.variants {
		var types []string
		for _, s := range r.scores[vi] {
			if !slices.Contains(types, s.Type) {
				types = append(types, s.Type)
			}
		}
		out[vi] = append(out[vi], r.group(v.Name, "all", r.scores[vi]))
		for _, t := range types {
			var g []scored
			for _, s := range r.scores[vi] {
				if s.Type == t {
					g = append(g, s)
				}
			}
			out[vi] = append(out[vi], r.group(v.Name, t, g))
		}
	}
	return out
}

func (r *retrievalRun) group(name, typ string, g []scored) summary {
	s := summary{Variant: name, Type: typ, N: len(g),
		RecallAny: map[string]float64{}, RecallAll: map[string]float64{}, SessionRecallAll: map[string]float64{}}
	lat := make([]time.Duration, len(g))
	for i, x := range g {
		lat[i] = x.Latency
		if strongResults(x.Results) == 0 {
			s.NoResults++
		}
	}
	s.P50ms, s.P95ms = ms(percentile(lat, 0.50)), ms(percentile(lat, 0.95))
	for ki, k := range r.ks {
		key := fmt.Sprintf("@%d", k)
		var any, all, sess int
		for _, x := range g {
			any += b2i(x.AnyAt[ki])
			all += b2i(x.AllAt[ki])
			sess += b2i(x.SessAt[ki])
		}
		n := float64(max(len(g), 1))
		s.RecallAny[key], s.RecallAll[key], s.SessionRecallAll[key] = float64(any)/n, float64(all)/n, float64(sess)/n
	}
	return s
}

// printTable writes the summaries as one table: a block per variant, the
// overall row first.
func (r *retrievalRun) printTable(w io.Writer, sums [][]summary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"mode", "question type", "n"}
	for _, m := range []string{"any", "all"} {
		for _, k := range r.ks {
			head = append(head, fmt.Sprintf("%s@%d", m, k))
		}
	}
	for _, k := range r.ks {
		head = append(head, fmt.Sprintf("sess@%d", k))
	}
	head = append(head, "none", "p50 ms", "p95 ms")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for vi := range sums {
		for i, s := range sums[vi] {
			name := ""
			if i == 0 {
				name = s.Variant
			}
			row := []string{name, s.Type, fmt.Sprint(s.N)}
			for _, m := range []map[string]float64{s.RecallAny, s.RecallAll, s.SessionRecallAll} {
				for _, k := range r.ks {
					row = append(row, fmt.Sprintf("%.3f", m[fmt.Sprintf("@%d", k)]))
				}
			}
			row = append(row, fmt.Sprint(s.NoResults), fmt.Sprintf("%.2f", s.P50ms), fmt.Sprintf("%.2f", s.P95ms))
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		if vi < len(sums)-1 {
			fmt.Fprintln(tw, strings.Repeat("\t", len(head)))
		}
	}
	tw.Flush()
}

// miss is a question that some variant does not answer fully within the
// largest k (an evidence exchange or an answer session outside it), with
// what each variant found: the starting point for work on quality.
type miss struct {
	QID      string        `json:"qid"`
	Type     string        `json:"question_type"`
	Question string        `json:"question"`
	Variants []missVariant `json:"variants"`
}

// missVariant is what one variant found for a missed question.
type missVariant struct {
	Variant string `json:"variant"`
	// Ranks are the 1-based ranks of the evidence exchanges, in the
	// question's order; 0 when not among the results.
	Ranks []int `json:"evidence_ranks"`
	// SessionsAt are the ks at which every answer session was found.
	SessionsAt []int `json:"answer_sessions_at"`
}

// misses lists the questions some variant misses, in question order.
func (r *retrievalRun) misses(qs []question) []miss {
	last := len(r.ks) - 1
	out := []miss{}
	for qi, q := range qs {
		missed := false
		for vi := range r.variants {
			missed = missed || !r.scores[vi][qi].AllAt[last] || !r.scores[vi][qi].SessAt[last]
		}
		if !missed {
			continue
		}
		m := miss{QID: q.QID, Type: q.Type, Question: q.Text}
		for vi, v := range r.variants {
			mv := missVariant{Variant: v.Name, Ranks: r.scores[vi][qi].Ranks, SessionsAt: []int{}}
			for ki, k := range r.ks {
				if r.scores[vi][qi].SessAt[ki] {
					mv.SessionsAt = append(mv.SessionsAt, k)
				}
			}
			m.Variants = append(m.Variants, mv)
		}
		out = append(out, m)
	}
	return out
}

// printMisses writes the misses, a block per question: each variant's
// evidence ranks ("-" when not found) and the ks at which it had every
// answer session.
func (r *retrievalRun) printMisses(w io.Writer, qs []question) {
	for _, m := range r.misses(qs) {
		fmt.Fprintf(w, "%s %s: %s\n", m.QID, m.Type, m.Question)
		for _, v := range m.Variants {
			var ranks, sess []string
			for _, n := range v.Ranks {
				if n == 0 {
					ranks = append(ranks, "-")
				} else {
					ranks = append(ranks, fmt.Sprint(n))
				}
			}
			for _, k := range v.SessionsAt {
				sess = append(sess, fmt.Sprintf("sess@%d", k))
			}
			fmt.Fprintf(w, "  %-26s evidence ranks %-16s answer sessions found at %s\n", v.Variant, strings.Join(ranks, " "), strings.Join(sess, " "))
		}
	}
	fmt.Fprintf(w, "(questions with an evidence exchange or answer session outside some variant's top %d)\n", slices.Max(r.ks))
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nonsenseCount is how many nonsense queries a variant answered with
// something (it should answer none).
type nonsenseCount struct {
	Variant     string `json:"variant"`
	WithResults int    `json:"with_results"`
	Asked       int    `json:"asked"`
}

func (r *retrievalRun) nonsenseReport() []nonsenseCount {
	out := make([]nonsenseCount, len(r.variants))
	for vi, v := range r.variants {
		out[vi] = nonsenseCount{Variant: v.Name, WithResults: r.nonsense[vi], Asked: r.nonsenseAsked}
	}
	return out
}
