package main

// The answer-side set (--set answers): questions whose evidence is in what
// the agent answered, not in what the user asked. In real agent sessions
// the prompt is often "go on", "yes, do it", "fix the tests" or a pasted
// test run, while the decision, the root cause or the fix is in the
// answer; the LongMemEval and coding sets put their evidence in the
// user's turns, so they cannot measure whether search finds it there.
//
// Three parts, each reported on its own line (its question type):
//
//   - transcripts: hand-written questions about exchanges of the real
//     transcripts of ../shared/data/agent-transcripts
//     (testdata/answer-questions.jsonl), each naming its evidence by
//     substrings of the answer (evidence_answer_contains) and the agent's
//     session id, like the coding set;
//   - incidents: short engineering incidents written by hand
//     (testdata/answer-incidents.jsonl), each logged as one exchange whose
//     prompt is generic ("status update please") and whose answer holds
//     the decision, in sessions of their own added to the same workspace
//     as the transcripts (a realistic haystack), each with a paraphrased
//     question;
//   - longmemeval-assistant: the single-session-assistant questions of
//     the LongMemEval dev set (their evidence is in an assistant turn),
//     each in its own haystack as in --set longmemeval: a second source.
//
// Every question of the first two parts must pass the answer-side check
// (checkAnswerSide): its evidence is 1 to maxEvidenceExchanges exchanges,
// each with a prompt, and those prompts share none of the question's
// distinctive terms and at most a third of its terms. A set that fails it
// is an error: its figures would measure the user side again.
//
// Today (uselite, user text embedded; held-out half, top 3 / top 5):
// incidents 0/19 and 1/19 by hybrid search (4 answered with nothing at
// all), 0/19 by vectors alone; transcripts 8/36 and 15/36 by hybrid, 0/36
// by vectors; longmemeval-assistant 4/4. Embedding user+ai text instead
// lifts vectors alone to 7/19 and 2/36 but hybrid only to 2/19: the
// fusion with BM25 and the score floor keep the answer-side evidence out.

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/logformat"
)

// setAnswers names the answer-side set (--set).
const setAnswers = "answers"

// The parts of the answer-side set: the question types of its report.
const (
	partTranscripts = "transcripts"
	partIncidents   = "incidents"
	partLongMemEval = "longmemeval-assistant"
)

// answerParts lists the parts in report order.
var answerParts = []string{partTranscripts, partIncidents, partLongMemEval}

// lmeAssistantType is the LongMemEval question type whose evidence is in
// an assistant turn.
const lmeAssistantType = "single-session-assistant"

//go:embed testdata/answer-questions.jsonl
var answerQuestionsJSONL []byte

//go:embed testdata/answer-incidents.jsonl
var answerIncidentsJSONL []byte

// loadAnswerQuestions reads path, or the compiled-in questions of the
// transcripts part when path is "".
func loadAnswerQuestions(path string) ([]codingQuestion, error) {
	if path == "" {
		return parseQuestionFile(bytes.NewReader(answerQuestionsJSONL), "answer-questions.jsonl", answerSide)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open questions: %w", err)
	}
	defer f.Close()
	return parseQuestionFile(f, path, answerSide)
}

// incident is one line of answer-incidents.jsonl: an exchange to log (its
// prompt generic, its answer holding the decision) and the question a
// developer would ask about it later; or, with is_abstention, a question
// nothing in the workspace answers.
type incident struct {
	ID string `json:"id"`
	// Session groups incidents into one logged session (a team or a
	// service), logged as session incidentSessionPrefix+Session.
	Session    string    `json:"session"`
	Time       time.Time `json:"time"`
	Prompt     string    `json:"prompt"`
	Answer     string    `json:"answer"`
	Question   string    `json:"question"`
	Abstention bool      `json:"is_abstention"`
	// Gist is what the question's answer is, for people checking the
	// set; never used by the evaluation.
	Gist string `json:"gist"`
}

// incidentSessionPrefix and incidentIDPrefix make the incidents' session
// and event ids, apart from any imported transcript's.
const (
	incidentSessionPrefix = "incidents-"
	incidentIDPrefix      = "incident:"
)

func (in incident) sessionID() string { return incidentSessionPrefix + in.Session }
func (in incident) eventID() string   { return incidentIDPrefix + in.ID }

// parseIncidents reads an incidents file; name is for messages.
func parseIncidents(r io.Reader, name string) ([]incident, error) {
	var out []incident
	seen := map[string]bool{}
	err := eachJSONLine(r, name, func(n int, dec *json.Decoder) error {
		var in incident
		if err := dec.Decode(&in); err != nil {
			return err
		}
		switch {
		case in.ID == "" || strings.TrimSpace(in.Question) == "":
			return errors.New("incident without id or question")
		case seen[in.ID]:
			return fmt.Errorf("id %q used twice", in.ID)
		case in.Abstention && (in.Prompt != "" || in.Answer != "" || in.Session != ""):
			return fmt.Errorf("%s: an abstention question has no exchange", in.ID)
		case !in.Abstention && (in.Session == "" || in.Time.IsZero() || strings.TrimSpace(in.Prompt) == "" || strings.TrimSpace(in.Answer) == ""):
			return fmt.Errorf("%s: an incident needs session, time, prompt and answer", in.ID)
		}
		seen[in.ID] = true
		out = append(out, in)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no incident", name)
	}
	return out, nil
}

// loadIncidents reads path, or the compiled-in incidents when path is "".
func loadIncidents(path string) ([]incident, error) {
	if path == "" {
		return parseIncidents(bytes.NewReader(answerIncidentsJSONL), "answer-incidents.jsonl")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open incidents: %w", err)
	}
	defer f.Close()
	return parseIncidents(f, path)
}

// writeIncidents logs the incidents into the logs folder as protocol
// exchange events, one file per session, each session's incidents in
// time order.
func writeIncidents(incs []incident) func(logs string) error {
	return func(logs string) error {
		bySession := map[string][]incident{}
		for _, in := range incs {
			if !in.Abstention {
				bySession[in.Session] = append(bySession[in.Session], in)
			}
		}
		for s, list := range bySession {
			sort.SliceStable(list, func(i, j int) bool { return list[i].Time.Before(list[j].Time) })
			var buf bytes.Buffer
			for _, in := range list {
				line, err := logformat.Event{Type: logformat.TypeExchange, Timestamp: in.Time.UTC(), SessionID: in.sessionID(),
					ID: in.eventID(), User: in.Prompt, AI: in.Answer}.MarshalLine()
				if err != nil {
					return fmt.Errorf("incident %s: %w", in.ID, err)
				}
				buf.Write(line)
			}
			path := filepath.Join(logs, "incidents-"+s+".jsonl")
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				return fmt.Errorf("write incidents: %w", err)
			}
		}
		return nil
	}
}

// incidentQuestions returns the questions of the answerable incidents,
// their evidence the exchange each was logged as; an incident the index
// does not hold is an error.
func (h *codingHaystack) incidentQuestions(incs []incident) ([]question, error) {
	have := map[string]bool{}
	for _, e := range h.all {
		have[e.ID] = true
	}
	var out []question
	for _, in := range incs {
		if in.Abstention {
			continue
		}
		if !have[in.eventID()] {
			return nil, fmt.Errorf("incident %s: its exchange %s is not in the index", in.ID, in.eventID())
		}
		out = append(out, question{QID: in.ID, Type: partIncidents, Text: in.Question,
			AnswerSessions: []string{in.sessionID()}, Evidence: []string{in.eventID()},
			ResumeSession: in.sessionID(), ResumeIncludeCurrent: true, LogFile: partIncidents})
	}
	return out, nil
}

// The rules of the answer-side check.
const (
	// distinctiveDF: a question term found in fewer than this share of
	// the workspace's exchanges is distinctive (say "idempotency", not
	// "test" or "file").
	distinctiveDF = 0.05
	// maxPromptOverlap is the largest share of a question's terms the
	// evidence prompts may hold.
	maxPromptOverlap = 1.0 / 3
	// maxEvidenceExchanges: the parts of one long turn, or a few copies;
	// more means the evidence substrings are not specific enough.
	maxEvidenceExchanges = 4
)

// sideCheck is the answer-side check of one question.
type sideCheck struct {
	QID string
	// Distinctive are the question's distinctive terms; Shared those of
	// them found in an evidence prompt.
	Distinctive, Shared []string
	// Overlap is the share of the question's terms found in the evidence
	// prompts, OverlapAll in the evidence exchanges (prompt and answer).
	Overlap, OverlapAll float64
	// Problems says why the question fails the check (empty: it passes).
	Problems []string
}

// docFreq counts, for each term, the exchanges of h that hold it (prompt
// or answer), computed once.
func (h *codingHaystack) docFreq() map[string]int {
	if h.df != nil {
		return h.df
	}
	h.df = map[string]int{}
	seen := map[string]bool{}
	for _, e := range h.all {
		clear(seen)
		for _, text := range []string{e.User, e.AI} {
			analyze.EachTerm(text, func(t []byte) {
				if !seen[string(t)] {
					seen[string(t)] = true
					h.df[string(t)]++
				}
			})
		}
	}
	return h.df
}

// checkAnswerSide checks that each question of qs (evidence in h) can only
// be answered from the answer side: its evidence is 1 to
// maxEvidenceExchanges exchanges; each has a prompt (an exchange without
// one is embedded by its answer already); the prompts hold none of the
// question's distinctive terms (found in fewer than distinctiveDF of the
// workspace's exchanges) and at most maxPromptOverlap of its terms.
func (h *codingHaystack) checkAnswerSide(qs []question) []sideCheck {
	df := h.docFreq()
	limit := distinctiveDF * float64(len(h.all))
	byID := map[string]importedExchange{}
	for _, e := range h.all {
		byID[e.ID] = e
	}
	var out []sideCheck
	for _, q := range qs {
		c := sideCheck{QID: q.QID}
		ids := evidenceIDs(q)
		if n := len(ids); n == 0 || n > maxEvidenceExchanges {
			c.Problems = append(c.Problems, fmt.Sprintf("%d evidence exchanges (want 1 to %d)", n, maxEvidenceExchanges))
		}
		var prompts, all []string
		for _, id := range ids {
			e, ok := byID[id]
			if !ok {
				c.Problems = append(c.Problems, "evidence "+id+" not in the workspace")
				continue
			}
			if strings.TrimSpace(e.User) == "" {
				c.Problems = append(c.Problems, "evidence "+id+" has no prompt (its answer is embedded in its place)")
			}
			prompts = append(prompts, e.User)
			all = append(all, e.User, e.AI)
		}
		promptTerms := termSet(strings.Join(prompts, "\n"))
		for t := range termSet(q.Text) {
			if float64(df[t]) < limit {
				c.Distinctive = append(c.Distinctive, t)
				if promptTerms[t] {
					c.Shared = append(c.Shared, t)
				}
			}
		}
		slices.Sort(c.Distinctive)
		slices.Sort(c.Shared)
		if len(c.Shared) > 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("the evidence prompt holds distinctive terms %q", c.Shared))
		}
		c.Overlap = overlap(q.Text, strings.Join(prompts, "\n"))
		c.OverlapAll = overlap(q.Text, strings.Join(all, "\n"))
		if c.Overlap > maxPromptOverlap {
			c.Problems = append(c.Problems, fmt.Sprintf("the evidence prompt holds %.0f%% of the question's terms (at most %.0f%%)", 100*c.Overlap, 100*maxPromptOverlap))
		}
		out = append(out, c)
	}
	return out
}

// evidenceIDs lists every exchange standing for q's evidence, sorted.
func evidenceIDs(q question) []string {
	ids := slices.Clone(q.Evidence)
	for id := range q.Equiv {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// termSet is the set of the terms of text (analyze.Terms).
func termSet(text string) map[string]bool {
	out := map[string]bool{}
	analyze.EachTerm(text, func(t []byte) { out[string(t)] = true })
	return out
}

// checkProblems joins the failures of checks into one error, nil when
// every question passes.
func checkProblems(checks []sideCheck) error {
	var errs []error
	for _, c := range checks {
		if len(c.Problems) > 0 {
			errs = append(errs, fmt.Errorf("%s: %s", c.QID, strings.Join(c.Problems, "; ")))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("answer-side check: %d question(s) fail it:\n%w", len(errs), errors.Join(errs...))
}

// answerOptions are the answer-side set's own flags.
type answerOptions struct {
	questions, incidents string // files; "" for the compiled-in ones
	longMemEval          string // the LongMemEval dataset folder
	split                string
	types                []string // parts to keep; nil for all
	first                int
}

// wants reports whether part is among o.types (all when none).
func (o answerOptions) wants(part string) bool {
	return len(o.types) == 0 || slices.Contains(o.types, part)
}

// runAnswers runs task t on the answer-side set.
func runAnswers(ctx context.Context, c *config, t task, o answerOptions) error {
	for _, p := range o.types {
		if !slices.Contains(answerParts, p) {
			return fmt.Errorf("--types %q: the answers set's parts are %s", p, strings.Join(answerParts, ", "))
		}
	}
	var qs []question
	var h *codingHaystack
	var checks []sideCheck
	var abst []codingQuestion
	if o.wants(partTranscripts) || o.wants(partIncidents) {
		sp, err := openSharedParts(ctx, c, o)
		if err != nil {
			return err
		}
		defer sp.h.ws.close()
		h, checks, abst = sp.h, sp.checks, sp.abstentions
		qs = append(qs, sp.questions...)
	}
	lq, lme, err := lmeAssistantQuestions(c, o)
	if err != nil {
		return err
	}
	qs = append(qs, lq...)
	qs, err = filterSplit(qs, o.split)
	if err != nil {
		return err
	}
	if qs, err = firstN(qs, o.first); err != nil {
		return err
	}
	inHalf := map[string]bool{}
	for _, q := range qs {
		inHalf[q.QID] = true
	}
	checks = slices.DeleteFunc(checks, func(c sideCheck) bool { return !inHalf[c.QID] })
	if c.showEvidence {
		if h != nil {
			h.printEvidence(c.stdout, slices.DeleteFunc(slices.Clone(qs), func(q question) bool { return lme[q.QID] }))
			printChecks(c.stdout, checks)
		}
		for _, q := range qs {
			if lme[q.QID] {
				fmt.Fprintf(c.stdout, "%s (%s) %s\n  %s in %s\n", q.QID, q.Type, q.Text, strings.Join(q.Evidence, ", "), q.LogFile)
			}
		}
		return checkProblems(checks)
	}
	if err := checkProblems(checks); err != nil {
		return err
	}
	c.note = answersNote(h, qs, checks, lme)
	c.open = func(ctx context.Context, q question) (*workspace, func(), error) {
		if lme[q.QID] {
			ws, err := openWorkspace(ctx, filepath.Join(o.longMemEval, q.LogFile), c.emb)
			if err != nil {
				return nil, nil, err
			}
			return ws, ws.close, nil
		}
		return h.ws, func() {}, nil
	}
	if err := t(ctx, c, qs); err != nil {
		return err
	}
	if c.mode != "retrieval" || c.json || h == nil {
		return nil
	}
	shared := slices.DeleteFunc(slices.Clone(qs), func(q question) bool { return lme[q.QID] })
	if len(shared) == 0 {
		return nil
	}
	return reportAbstention(ctx, c, h.ws, shared, abst, o.split)
}

// sharedParts are the answers set's parts asked in one workspace (the
// transcripts and the incidents): the workspace, the questions, the
// answer-side checks and the abstention questions.
type sharedParts struct {
	h           *codingHaystack
	questions   []question
	checks      []sideCheck
	abstentions []codingQuestion
}

// openSharedParts imports the transcripts and writes the incidents into one
// workspace, then resolves the questions of the parts asked in it. The
// caller closes sp.h.ws.
func openSharedParts(ctx context.Context, c *config, o answerOptions) (sp sharedParts, err error) {
	cqs, err := loadAnswerQuestions(o.questions)
	if err != nil {
		return sp, err
	}
	incs, err := loadIncidents(o.incidents)
	if err != nil {
		return sp, err
	}
	if _, err := os.Stat(c.data); err != nil {
		return sp, fmt.Errorf("transcripts folder: %w", err)
	}
	// The incidents are in the workspace whichever parts are asked: the
	// haystack is the same for both.
	if sp.h, err = openHaystack(ctx, c.data, convertTranscript(), c.emb, writeIncidents(incs)); err != nil {
		return sp, err
	}
	defer func() {
		if err != nil {
			sp.h.ws.close()
		}
	}()
	if o.wants(partTranscripts) {
		tq, err := sp.h.questions(cqs)
		if err != nil {
			return sp, err
		}
		for i := range tq {
			tq[i].Type = partTranscripts
		}
		sp.questions = append(sp.questions, tq...)
		for _, cq := range cqs {
			if cq.Abstention {
				sp.abstentions = append(sp.abstentions, cq)
			}
		}
	}
	if o.wants(partIncidents) {
		iq, err := sp.h.incidentQuestions(incs)
		if err != nil {
			return sp, err
		}
		sp.questions = append(sp.questions, iq...)
		for _, in := range incs {
			if in.Abstention {
				sp.abstentions = append(sp.abstentions, codingQuestion{QID: in.ID, Question: in.Question, Abstention: true})
			}
		}
	}
	if len(sp.h.leftOut) > 0 {
		sp.h.reportLeftOut(c.stderr)
	}
	sp.checks = sp.h.checkAnswerSide(sp.questions)
	return sp, nil
}

// lmeAssistantQuestions are the LongMemEval dev set's assistant-side
// questions, when that part is asked, and the set of their ids. A dev set
// that cannot be read leaves the part out with a note, unless --types
// asked for it.
func lmeAssistantQuestions(c *config, o answerOptions) ([]question, map[string]bool, error) {
	lme := map[string]bool{}
	if !o.wants(partLongMemEval) {
		return nil, lme, nil
	}
	lq, err := loadQuestions(o.longMemEval)
	switch {
	case err != nil && len(o.types) > 0:
		return nil, nil, fmt.Errorf("part %s: %w", partLongMemEval, err)
	case err != nil:
		fmt.Fprintf(c.stderr, "continuity-eval: part %s left out: %v\n", partLongMemEval, err)
	}
	var qs []question
	for _, q := range lq {
		if q.Type == lmeAssistantType {
			q.Type = partLongMemEval
			lme[q.QID] = true
			qs = append(qs, q)
		}
	}
	return qs, lme, nil
}

// answersNote is what the report says of the set: questions per part, the
// workspace, and the answer-side check's figures.
func answersNote(h *codingHaystack, qs []question, checks []sideCheck, lme map[string]bool) string {
	count := map[string]int{}
	for _, q := range qs {
		count[q.Type]++
	}
	var parts []string
	for _, p := range answerParts {
		if count[p] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", p, count[p]))
		}
	}
	note := fmt.Sprintf("answer-side set: %d questions (%s)", len(qs), strings.Join(parts, ", "))
	if h != nil {
		note += fmt.Sprintf(";\ntranscripts and incidents in one workspace of %d exchanges (%d transcript files imported, %d not)",
			len(h.all), len(h.imported), len(h.skipped))
	}
	if len(lme) > 0 {
		note += fmt.Sprintf(";\n%s: each question in its own LongMemEval haystack", partLongMemEval)
	}
	if len(checks) > 0 {
		type sums struct {
			n           int
			prompt, all float64
		}
		byType := map[string]*sums{}
		typeOf := map[string]string{}
		for _, q := range qs {
			typeOf[q.QID] = q.Type
		}
		for _, c := range checks {
			s := byType[typeOf[c.QID]]
			if s == nil {
				s = &sums{}
				byType[typeOf[c.QID]] = s
			}
			s.n++
			s.prompt += c.Overlap
			s.all += c.OverlapAll
		}
		var figs []string
		for _, p := range answerParts {
			if s := byType[p]; s != nil {
				figs = append(figs, fmt.Sprintf("%s prompt side %.3f, whole exchange %.3f", p, s.prompt/float64(s.n), s.all/float64(s.n)))
			}
		}
		note += fmt.Sprintf(";\nanswer-side check passed (evidence prompts hold no distinctive question term, df < %.0f%%, and at most %.0f%% of its terms);\n"+
			"question/evidence term overlap (mean): %s", 100*distinctiveDF, 100*maxPromptOverlap, strings.Join(figs, "; "))
	}
	return note
}

// printChecks writes each question's answer-side check (--show-evidence).
func printChecks(w io.Writer, checks []sideCheck) {
	fmt.Fprintf(w, "\nanswer-side check (distinctive: df < %.0f%% of the workspace's exchanges; prompt overlap at most %.0f%%):\n",
		100*distinctiveDF, 100*maxPromptOverlap)
	for _, c := range checks {
		verdict := "ok"
		if len(c.Problems) > 0 {
			verdict = "FAIL: " + strings.Join(c.Problems, "; ")
		}
		fmt.Fprintf(w, "  %-12s prompt overlap %.2f, whole %.2f, distinctive %v: %s\n", c.QID, c.Overlap, c.OverlapAll, c.Distinctive, verdict)
	}
}

// answersDataDefaults fills the answer-side set's folders: the
// transcripts (c.data) and the LongMemEval dataset.
func answersDataDefaults(c *config, lme string) string {
	c.data = cmp.Or(c.data, os.Getenv(EnvTranscripts), defaultTranscripts)
	return cmp.Or(lme, os.Getenv(EnvData), defaultData)
}
