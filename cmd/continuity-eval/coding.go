package main

// The coding set (--set coding): questions a developer returning to a
// project would ask about real coding-agent sessions, over the native
// transcripts of ../shared/data/agent-transcripts (Claude Code, Codex,
// Gemini CLI, Cursor, Aider).
//
// The questions (testdata/coding-questions.jsonl, compiled into the binary)
// were written by hand, one by one, by reading the transcripts; each is
// paraphrased away from the words of its evidence exchange. A question names
// its evidence without depending on any event id scheme: the transcript
// file, the agent's own session id, substrings of the human prompt
// (evidence_prompt_contains, alternatives) and, optionally, substrings of
// the agent's answer (evidence_answer_contains, alternatives). After the
// transcripts are imported and indexed, the exchanges of that transcript
// whose prompt and answer contain them are the evidence.
//
// One workspace holds every transcript, converted to protocol events by the
// importer package (the code behind `continuity import`), indexed and
// embedded once; every question is asked against all of it.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/search"
)

// EnvTranscripts overrides the default transcripts folder of the coding set.
const EnvTranscripts = "CONTINUITY_EVAL_TRANSCRIPTS"

const defaultTranscripts = "../shared/data/agent-transcripts"

// Names of the sets (--set).
const (
	setLongMemEval = "longmemeval"
	setCoding      = "coding"
)

//go:embed testdata/coding-questions.jsonl
var codingQuestionsJSONL []byte

// codingQuestion is one line of coding-questions.jsonl.
type codingQuestion struct {
	QID        string `json:"qid"`
	Question   string `json:"question"`
	Abstention bool   `json:"is_abstention"`
	// Transcript is the native file, relative to the transcripts folder.
	Transcript string `json:"transcript"`
	Agent      string `json:"agent"`
	// SessionID is the agent's own session id (for Aider, the time the
	// chat started); it narrows the evidence to that session when the
	// imported session ids carry it.
	SessionID      string   `json:"session_id"`
	PromptContains []string `json:"evidence_prompt_contains"`
	AnswerContains []string `json:"evidence_answer_contains"`
	// Answer is what a reader of the evidence learns; for people checking
	// the set, never used by the evaluation.
	Answer string `json:"answer"`
}

// evidenceSide is how a question file names its evidence exchanges.
type evidenceSide int

const (
	// promptSide: by substrings of the human prompt
	// (evidence_prompt_contains, required), optionally narrowed by
	// substrings of the answer (coding-questions.jsonl).
	promptSide evidenceSide = iota
	// answerSide: by substrings of the agent's answer
	// (evidence_answer_contains, required), the prompt substrings
	// optional: the evidence of the answer-side set is what the answer
	// says, its prompt is often "go on" (answer-questions.jsonl).
	answerSide
)

// parseCodingQuestions reads the question file of the coding set; name is
// for messages.
func parseCodingQuestions(r io.Reader, name string) ([]codingQuestion, error) {
	return parseQuestionFile(r, name, promptSide)
}

// parseQuestionFile reads a question file whose answerable questions name
// their evidence by side; name is for messages.
func parseQuestionFile(r io.Reader, name string, side evidenceSide) ([]codingQuestion, error) {
	var out []codingQuestion
	seen := map[string]bool{}
	err := eachJSONLine(r, name, func(n int, dec *json.Decoder) error {
		var q codingQuestion
		if err := dec.Decode(&q); err != nil {
			return err
		}
		switch {
		case q.QID == "" || q.Question == "":
			return errors.New("question without qid or question")
		case seen[q.QID]:
			return fmt.Errorf("qid %q used twice", q.QID)
		case !q.Abstention && side == promptSide && (q.Transcript == "" || q.Agent == "" || len(q.PromptContains) == 0):
			return fmt.Errorf("%s: an answerable question needs transcript, agent and evidence_prompt_contains", q.QID)
		case !q.Abstention && side == answerSide && (q.Transcript == "" || q.Agent == "" || len(q.AnswerContains) == 0):
			return fmt.Errorf("%s: an answerable question needs transcript, agent and evidence_answer_contains", q.QID)
		case q.Abstention && (q.Transcript != "" || len(q.PromptContains) > 0 || len(q.AnswerContains) > 0):
			return fmt.Errorf("%s: an abstention question has no evidence", q.QID)
		}
		for _, s := range append(slices.Clone(q.PromptContains), q.AnswerContains...) {
			if strings.TrimSpace(s) == "" {
				return fmt.Errorf("%s: empty evidence substring", q.QID)
			}
		}
		seen[q.QID] = true
		out = append(out, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no question", name)
	}
	return out, nil
}

// eachJSONLine calls f with a strict decoder (unknown fields rejected) of
// each non-blank line of r, with its 1-based number; an error of f is
// returned as name:line: error.
func eachJSONLine(r io.Reader, name string, f func(n int, dec *json.Decoder) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := f(n, dec); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}

// loadCodingQuestions reads path, or the compiled-in set when path is "".
func loadCodingQuestions(path string) ([]codingQuestion, error) {
	if path == "" {
		return parseCodingQuestions(bytes.NewReader(codingQuestionsJSONL), "coding-questions.jsonl")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open questions: %w", err)
	}
	defer f.Close()
	return parseCodingQuestions(f, path)
}

// importedExchange is an exchange of the coding workspace, with the
// transcript it was imported from.
type importedExchange struct {
	ID, SessionID string
	User, AI      string
}

// normalize folds whitespace runs to one space: the importer may re-wrap
// or trim what the native file held.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

func containsAny(text string, subs []string) bool {
	for _, s := range subs {
		if strings.Contains(text, normalize(s)) {
			return true
		}
	}
	return false
}

// idKey keeps the letters and digits of an id, lowercase: how a native
// session id is recognised inside an imported one, whatever separators
// the importer chose. digitsOnly keeps only the digits (for ids that are
// times, such as Aider's "2024-08-09 07:52:53").
func idKey(s string, digitsOnly bool) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsDigit(r) || (!digitsOnly && unicode.IsLetter(r)) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// evidence is where a question's evidence was found.
type evidence struct {
	// IDs are the exchanges that hold it: the parts of one turn (a long
	// turn is imported as several exchanges) or identical copies. Any one
	// of them in the results counts.
	IDs      []string
	Sessions []string
	// Narrowed tells whether the native session id selected the session.
	Narrowed bool
}

// mapEvidence finds q's evidence among exs, the exchanges imported from
// q's transcript: those whose prompt contains one of the prompt substrings
// (any prompt when none are given) and, when answer substrings are given,
// whose answer contains one of them. When the imported session ids carry
// the native one, only that session's exchanges are considered.
func mapEvidence(q codingQuestion, exs []importedExchange) (evidence, error) {
	cands := exs
	var ev evidence
	if q.SessionID != "" {
		for _, digits := range []bool{false, true} {
			key := idKey(q.SessionID, digits)
			if len(key) < 6 {
				continue
			}
			var in []importedExchange
			for _, e := range exs {
				if strings.Contains(idKey(e.SessionID, digits), key) {
					in = append(in, e)
				}
			}
			if len(in) > 0 {
				cands, ev.Narrowed = in, true
				break
			}
		}
	}
	for _, e := range cands {
		if len(q.PromptContains) > 0 && !containsAny(normalize(e.User), q.PromptContains) {
			continue
		}
		if len(q.AnswerContains) > 0 && !containsAny(normalize(e.AI), q.AnswerContains) {
			continue
		}
		ev.IDs = append(ev.IDs, e.ID)
		if !slices.Contains(ev.Sessions, e.SessionID) {
			ev.Sessions = append(ev.Sessions, e.SessionID)
		}
	}
	if len(ev.IDs) == 0 {
		return ev, fmt.Errorf("%s: no exchange of %s (%d candidates) has %s",
			q.QID, q.Transcript, len(cands), evidenceClause(q))
	}
	return ev, nil
}

// evidenceClause says what q's evidence must contain, for messages.
func evidenceClause(q codingQuestion) string {
	var parts []string
	if len(q.PromptContains) > 0 {
		parts = append(parts, fmt.Sprintf("a prompt containing %q", q.PromptContains))
	}
	if len(q.AnswerContains) > 0 {
		parts = append(parts, fmt.Sprintf("an answer containing %q", q.AnswerContains))
	}
	return strings.Join(parts, " and ")
}

// transcriptConverter converts one native transcript (path, by agent) into
// protocol events appended under logsDir. It returns an error wrapping
// errNotTranscript for files that hold no conversation to import.
type transcriptConverter func(ctx context.Context, agent, path, logsDir string) error

var errNotTranscript = errors.New("not a transcript")

// agentOf is the agent of a file of the transcripts folder: its first path
// element (claude-code/..., codex/..., gemini/..., cursor/..., aider/...).
func agentOf(rel string) string {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first
}

// listTranscripts lists the files of dir to import, relative to dir, in a
// fixed order (lexical: a mid-session capture such as turn-1.jsonl comes
// before its complete version). Documentation files are left out; whether
// a data file holds a conversation is the importer's call.
func listTranscripts(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if !strings.Contains(filepath.ToSlash(rel), "/") || strings.EqualFold(d.Name(), "README.md") {
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list transcripts: %w", err)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no transcript", dir)
	}
	return out, nil
}

// codingHaystack is the workspace of the coding set and what each
// transcript became in it.
type codingHaystack struct {
	ws *workspace
	// byTranscript lists, per transcript (relative path), the exchanges
	// of the sessions its import wrote to.
	byTranscript map[string][]importedExchange
	// skipped lists the files the importer did not take, with why.
	skipped []string
	// imported tells which transcripts the importer took.
	imported map[string]bool
	// leftOut lists the questions whose transcript was not imported
	// (an agent the importer does not read yet), with why.
	leftOut []string
	// all is every exchange of the workspace.
	all []importedExchange
	// df is docFreq's count of exchanges per term, once computed.
	df map[string]int
}

// candidates are the exchanges a question about transcript rel may point
// to: those of the sessions its import wrote to, else (a re-import that
// added nothing new, such as a capture already imported whole) all, which
// the native session id then narrows.
func (h *codingHaystack) candidates(rel string) []importedExchange {
	if exs, ok := h.byTranscript[rel]; ok {
		return exs
	}
	return h.all
}

// logIDs returns the producer ids of every event in the logs folder.
func logIDs(logs string) (map[string]string, error) {
	ids := map[string]string{} // id -> session
	files, err := filepath.Glob(filepath.Join(logs, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		for n, line := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var ev struct {
				ID        string `json:"id"`
				SessionID string `json:"session_id"`
				New       string `json:"new_session"`
			}
			if err := json.Unmarshal(line, &ev); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", f, n+1, err)
			}
			if ev.ID != "" {
				ids[ev.ID] = cmp.Or(ev.SessionID, ev.New)
			}
		}
	}
	return ids, nil
}

// openCodingHaystack converts every transcript of dir with conv into one
// workspace, indexes and embeds it, and records which sessions each
// transcript's import wrote to (by the producer ids that appeared in the
// logs while it was imported).
func openCodingHaystack(ctx context.Context, dir string, conv transcriptConverter, emb embed.Embedder) (*codingHaystack, error) {
	return openHaystack(ctx, dir, conv, emb, nil)
}

// openHaystack is openCodingHaystack with extra, when not nil, writing
// further logs into the logs folder after the transcripts' (the
// answer-side set's incidents), indexed and embedded with them.
func openHaystack(ctx context.Context, dir string, conv transcriptConverter, emb embed.Embedder, extra func(logs string) error) (*codingHaystack, error) {
	files, err := listTranscripts(dir)
	if err != nil {
		return nil, err
	}
	h := &codingHaystack{byTranscript: map[string][]importedExchange{}, imported: map[string]bool{}}
	sessionsOf := map[string][]string{} // transcript -> sessions written
	fill := func(logs string) error {
		before := map[string]string{}
		for _, rel := range files {
			err := conv(ctx, agentOf(rel), filepath.Join(dir, rel), logs)
			if errors.Is(err, errNotTranscript) {
				h.skipped = append(h.skipped, rel+": "+oneLine(strings.TrimPrefix(err.Error(), errNotTranscript.Error()+": "), 200))
				continue
			}
			if err != nil {
				return fmt.Errorf("import %s: %w", rel, err)
			}
			h.imported[rel] = true
			after, err := logIDs(logs)
			if err != nil {
				return err
			}
			for id, s := range after {
				if _, ok := before[id]; !ok && s != "" && !slices.Contains(sessionsOf[rel], s) {
					sessionsOf[rel] = append(sessionsOf[rel], s)
				}
			}
			before = after
		}
		if extra != nil {
			return extra(logs)
		}
		return nil
	}
	if h.ws, err = buildWorkspace(ctx, emb, dir, fill); err != nil {
		return nil, err
	}
	all, err := allExchanges(ctx, h.ws.db)
	if err != nil {
		h.ws.close()
		return nil, err
	}
	for _, e := range all {
		h.all = append(h.all, importedExchange{ID: e.EventID, SessionID: e.SessionID, User: e.User, AI: e.AI})
	}
	cache := map[string][]importedExchange{}
	for rel, sessions := range sessionsOf {
		for _, s := range sessions {
			exs, ok := cache[s]
			if !ok {
				evs, err := h.ws.db.EventsBySession(ctx, s)
				if err != nil {
					h.ws.close()
					return nil, fmt.Errorf("read session %s: %w", s, err)
				}
				for _, e := range evs {
					if e.Type == logformat.TypeExchange {
						exs = append(exs, importedExchange{ID: e.EventID, SessionID: e.SessionID, User: e.User, AI: e.AI})
					}
				}
				cache[s] = exs
			}
			h.byTranscript[rel] = append(h.byTranscript[rel], exs...)
		}
	}
	return h, nil
}

// codingQuestions maps every answerable question's evidence in h and
// returns the questions in the form the tasks take. A question whose
// evidence cannot be found is an error: the set and the importer disagree,
// and a figure computed without it would be wrong.
func (h *codingHaystack) questions(cqs []codingQuestion) ([]question, error) {
	var out []question
	var errs []error
	for _, cq := range cqs {
		if cq.Abstention {
			continue
		}
		if !h.imported[cq.Transcript] {
			why := "not in the transcripts folder"
			for _, sk := range h.skipped {
				if rest, ok := strings.CutPrefix(sk, cq.Transcript+": "); ok {
					why = rest
				}
			}
			h.leftOut = append(h.leftOut, cq.QID+" ("+cq.Transcript+": "+oneLine(why, 160)+")")
			continue
		}
		ev, err := mapEvidence(cq, h.candidates(cq.Transcript))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		q := question{
			QID: cq.QID, Type: cq.Agent, Text: cq.Question,
			AnswerSessions: ev.Sessions, Evidence: ev.IDs[:1],
			ResumeSession: ev.Sessions[0], ResumeIncludeCurrent: true,
			LogFile: cq.Transcript,
		}
		if len(ev.IDs) > 1 {
			q.Equiv = map[string]string{}
			for _, id := range ev.IDs[1:] {
				q.Equiv[id] = ev.IDs[0]
			}
		}
		out = append(out, q)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("coding set: %d question(s) without evidence:\n%w", len(errs), errors.Join(errs...))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("coding set: no question left: %d left out (transcripts not imported)", len(h.leftOut))
	}
	return out, nil
}

// evidenceText is the text of q's evidence exchanges (every part), for
// the overlap figure.
func (h *codingHaystack) evidenceText(q question) (user, all string) {
	ids := map[string]bool{}
	for _, id := range q.Evidence {
		ids[id] = true
	}
	for id := range q.Equiv {
		ids[id] = true
	}
	var u, a []string
	for _, e := range h.candidates(q.LogFile) {
		if ids[e.ID] {
			u = append(u, e.User)
			a = append(a, e.User, e.AI)
			delete(ids, e.ID) // a session shared by two transcripts lists it twice
		}
	}
	return strings.Join(u, "\n"), strings.Join(a, "\n")
}

// overlap is the share of the question's terms (words without stopwords,
// stemmed: what search matches on, analyze.Terms) that occur in text.
func overlap(question, text string) float64 {
	qt := map[string]bool{}
	for _, t := range analyze.Terms(question) {
		qt[t] = true
	}
	if len(qt) == 0 {
		return 0
	}
	tt := map[string]bool{}
	for _, t := range analyze.Terms(text) {
		tt[t] = true
	}
	n := 0
	for t := range qt {
		if tt[t] {
			n++
		}
	}
	return float64(n) / float64(len(qt))
}

// allExchanges returns every exchange of the index.
func allExchanges(ctx context.Context, db *index.DB) ([]index.Event, error) {
	ss, err := db.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	var out []index.Event
	for _, s := range ss {
		evs, err := db.EventsBySession(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if e.Type == logformat.TypeExchange {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// convertTranscript makes the converter of one haystack; tests replace it.
var convertTranscript = importConverter

// runCoding runs task t on the coding set: one workspace of every
// transcript of c.data, the questions of questionsFile (the compiled-in
// set when ""), split as asked.
func runCoding(ctx context.Context, c *config, t task, questionsFile, split string, types []string, first int) error {
	cqs, err := loadCodingQuestions(questionsFile)
	if err != nil {
		return err
	}
	if _, err := os.Stat(c.data); err != nil {
		return fmt.Errorf("transcripts folder: %w", err)
	}
	h, err := openCodingHaystack(ctx, c.data, convertTranscript(), c.emb)
	if err != nil {
		return err
	}
	defer h.ws.close()
	qs, err := h.questions(cqs)
	if err != nil {
		return err
	}
	if qs, err = filterTypes(qs, types); err != nil {
		return err
	}
	if qs, err = filterSplit(qs, split); err != nil {
		return err
	}
	if qs, err = firstN(qs, first); err != nil {
		return err
	}
	if c.showEvidence {
		h.printEvidence(c.stdout, qs)
		return nil
	}
	var sumUser, sumAll float64
	for _, q := range qs {
		u, a := h.evidenceText(q)
		sumUser += overlap(q.Text, u)
		sumAll += overlap(q.Text, a)
	}
	n := float64(len(qs))
	if len(h.leftOut) > 0 {
		h.reportLeftOut(c.stderr)
	}
	c.note = fmt.Sprintf("coding set: %d questions, one workspace of %d exchanges from %d transcript files (%d files not imported)",
		len(qs), len(h.all), len(h.imported), len(h.skipped))
	if len(h.leftOut) > 0 {
		c.note += fmt.Sprintf(";\n%d question(s) left out (transcript not imported: see stderr)", len(h.leftOut))
	}
	c.note += fmt.Sprintf(";\nquestion/evidence term overlap (share of a question's terms found in its evidence): prompt side %.3f, whole exchange %.3f (mean)",
		sumUser/n, sumAll/n)
	c.open = func(context.Context, question) (*workspace, func(), error) { return h.ws, func() {}, nil }
	if err := t(ctx, c, qs); err != nil {
		return err
	}
	if c.mode != "retrieval" || c.json {
		return nil
	}
	return reportAbstention(ctx, c, h.ws, qs, cqs, split)
}

// reportLeftOut says which questions were left out because their
// transcript was not imported.
func (h *codingHaystack) reportLeftOut(w io.Writer) {
	fmt.Fprintf(w, "continuity-eval: %d question(s) left out, their transcript was not imported:\n  %s\n",
		len(h.leftOut), strings.Join(h.leftOut, "\n  "))
}

// reportAbstention shows, per variant, what search returns for the
// questions no transcript answers, next to what it returns for the
// answerable ones: the material for a "nothing found" floor. Scores are
// those of search.Result (not comparable across variants).
func reportAbstention(ctx context.Context, c *config, ws *workspace, answerable []question, cqs []codingQuestion, split string) error {
	var abst []question
	for _, cq := range cqs {
		if cq.Abstention && inSplit(cq.QID, split) {
			abst = append(abst, question{QID: cq.QID, Text: cq.Question})
		}
	}
	if len(abst) == 0 {
		return nil
	}
	limit := slices.Max(c.ks)
	fmt.Fprintf(c.stdout, "\nabstention: %d questions no transcript answers; top-1 score of each (results returned at limit %d), "+
		"against the top-1 scores of the answerable questions (p10 / p50)\n", len(abst), limit)
	for _, v := range defaultVariants() {
		s, err := ws.searcher(v.Options)
		if err != nil {
			return err
		}
		top := func(q question) (float64, int, error) {
			res, err := s.Search(ctx, search.Query{Text: q.Text, Mode: v.Mode, Limit: limit})
			if err != nil || len(res) == 0 {
				return 0, 0, err
			}
			return res[0].Score, len(res), nil
		}
		var tops []float64
		for _, q := range answerable {
			sc, _, err := top(q)
			if err != nil {
				return err
			}
			tops = append(tops, sc)
		}
		slices.Sort(tops)
		var parts []string
		for _, q := range abst {
			sc, n, err := top(q)
			if err != nil {
				return err
			}
			parts = append(parts, fmt.Sprintf("%.4f (%d)", sc, n))
		}
		fmt.Fprintf(c.stdout, "  %-26s %s   answerable p10 %.4f p50 %.4f\n", v.Name, strings.Join(parts, " "),
			tops[len(tops)/10], tops[len(tops)/2])
	}
	return nil
}

// oneLine folds s to one line of at most n bytes.
func oneLine(s string, n int) string {
	s = normalize(s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// printEvidence lists each question with its evidence exchanges: id,
// session, the start of the prompt and of the answer.
func (h *codingHaystack) printEvidence(w io.Writer, qs []question) {
	byID := map[string]importedExchange{}
	for _, e := range h.all {
		byID[e.ID] = e
	}
	for _, q := range qs {
		ids := slices.Clone(q.Evidence)
		for id := range q.Equiv {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		fmt.Fprintf(w, "%s (%s) %s\n", q.QID, q.Type, q.Text)
		for _, id := range ids {
			e := byID[id]
			fmt.Fprintf(w, "  %s [%s]\n    user: %s\n    ai:   %s\n", id, e.SessionID, oneLine(e.User, 100), oneLine(e.AI, 100))
		}
	}
}
