package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/importer"
)

// TestAnswerQuestionsFile checks the compiled-in transcripts part: it
// parses, holds at least 60 answerable questions about agents the importer
// reads, each naming its evidence by the answer, and both halves of the
// split hold some.
func TestAnswerQuestionsFile(t *testing.T) {
	cqs, err := loadAnswerQuestions("")
	if err != nil {
		t.Fatal(err)
	}
	var qs []question
	perAgent := map[string]int{}
	for _, q := range cqs {
		if q.Abstention {
			continue
		}
		if !slices.Contains(importer.Agents, q.Agent) {
			t.Errorf("%s: agent %q is not one the importer reads (%v)", q.QID, q.Agent, importer.Agents)
		}
		if agentOf(q.Transcript) != q.Agent {
			t.Errorf("%s: transcript %s is not under %s/", q.QID, q.Transcript, q.Agent)
		}
		if strings.TrimSpace(q.Answer) == "" {
			t.Errorf("%s: no answer (what a reader of the evidence learns)", q.QID)
		}
		perAgent[q.Agent]++
		qs = append(qs, question{QID: q.QID})
	}
	if len(qs) < 60 {
		t.Errorf("%d answerable questions, want at least 60", len(qs))
	}
	if len(perAgent) < 4 {
		t.Errorf("questions about %v only", perAgent)
	}
	checkHalves(t, qs)
}

// TestIncidentsFile checks the compiled-in incidents part: 30 to 60
// incidents in several sessions, each logged with a short generic prompt,
// each question paraphrased away from its answer; a few abstention
// questions; both halves of the split hold some.
func TestIncidentsFile(t *testing.T) {
	incs, err := loadIncidents("")
	if err != nil {
		t.Fatal(err)
	}
	var qs []question
	sessions := map[string]bool{}
	prompts := map[string]bool{}
	questions := map[string]bool{}
	abst := 0
	var sum float64
	for _, in := range incs {
		if questions[in.Question] {
			t.Errorf("%s: question asked twice: %q", in.ID, in.Question)
		}
		questions[in.Question] = true
		if in.Abstention {
			abst++
			continue
		}
		sessions[in.Session] = true
		prompts[in.Prompt] = true
		if n := len(strings.Fields(in.Prompt)); n > 5 {
			t.Errorf("%s: prompt %q is not a short generic one (%d words)", in.ID, in.Prompt, n)
		}
		if strings.TrimSpace(in.Gist) == "" {
			t.Errorf("%s: no gist", in.ID)
		}
		o := overlap(in.Question, in.Answer)
		if o > 0.5 {
			t.Errorf("%s: the question shares %.0f%% of its terms with the answer: not paraphrased", in.ID, 100*o)
		}
		sum += o
		qs = append(qs, question{QID: in.ID})
	}
	if len(qs) < 30 || len(qs) > 60 {
		t.Errorf("%d incidents, want 30 to 60", len(qs))
	}
	if abst < 5 {
		t.Errorf("%d abstention questions, want at least 5", abst)
	}
	if len(sessions) < 6 || len(prompts) < 6 {
		t.Errorf("%d sessions, %d distinct prompts: want at least 6 of each", len(sessions), len(prompts))
	}
	if mean := sum / float64(len(qs)); mean > 0.25 {
		t.Errorf("questions share %.0f%% of their terms with their answers on average, want at most 25%%", 100*mean)
	}
	checkHalves(t, qs)
}

// checkHalves checks that both halves of the split hold at least a quarter
// of qs, and that the halves are a function of each qid alone: a question
// added to the set moves no other.
func checkHalves(t *testing.T, qs []question) {
	t.Helper()
	tune, err1 := filterSplit(qs, splitTune)
	held, err2 := filterSplit(qs, splitHeldOut)
	if err1 != nil || err2 != nil || len(tune)+len(held) != len(qs) || len(tune) < len(qs)/4 || len(held) < len(qs)/4 {
		t.Fatalf("split: tune %d, heldout %d of %d (%v %v)", len(tune), len(held), len(qs), err1, err2)
	}
	more := append(slices.Clone(qs), question{QID: "added-later-1"}, question{QID: "added-later-2"})
	tune2, _ := filterSplit(more, splitTune)
	for _, q := range tune {
		if !slices.ContainsFunc(tune2, func(p question) bool { return p.QID == q.QID }) {
			t.Errorf("%s left the tune half when questions were added", q.QID)
		}
	}
	t.Logf("%d questions: tune %d, heldout %d", len(qs), len(tune), len(held))
}

func TestParseAnswerSideErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no answer substrings", `{"qid":"a","question":"q?","transcript":"aider/x","agent":"aider","evidence_prompt_contains":["p"]}`, "needs transcript, agent and evidence_answer_contains"},
		{"abstention with evidence", `{"qid":"a","question":"q","is_abstention":true,"evidence_answer_contains":["p"]}`, "no evidence"},
		{"empty substring", `{"qid":"a","question":"q?","transcript":"aider/x","agent":"aider","evidence_answer_contains":[""]}`, "empty evidence substring"},
	} {
		_, err := parseQuestionFile(strings.NewReader(tc.text), "f.jsonl", answerSide)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	// An answer-side question needs no prompt substring; a prompt-side one
	// still does.
	ok := `{"qid":"a","question":"q?","transcript":"aider/x","agent":"aider","evidence_answer_contains":["decided"]}`
	if _, err := parseQuestionFile(strings.NewReader(ok), "f.jsonl", answerSide); err != nil {
		t.Errorf("answer side: %v", err)
	}
	if _, err := parseCodingQuestions(strings.NewReader(ok), "f.jsonl"); err == nil {
		t.Error("the coding set accepted a question without prompt substrings")
	}
	// Evidence named by the answer alone maps by the answer.
	ev, err := mapEvidence(codingQuestion{QID: "a", AnswerContains: []string{"cookie path"}}, []importedExchange{
		{ID: "1", User: "go on", AI: "the token expired"}, {ID: "2", User: "go on", AI: "the cookie path was wrong"}})
	if err != nil || fmt.Sprint(ev.IDs) != "[2]" {
		t.Errorf("answer-only evidence: %v %v", ev.IDs, err)
	}
}

func TestParseIncidentsErrors(t *testing.T) {
	ok := `{"id":"a","session":"s","time":"2025-01-01T10:00:00Z","prompt":"go on","answer":"we rolled back","question":"what did we do?"}`
	for _, tc := range []struct{ name, text, want string }{
		{"bad json", "{", "f.jsonl:1"},
		{"unknown field", `{"id":"a","question":"q","colour":1}`, "unknown field"},
		{"no question", `{"id":"a"}`, "without id or question"},
		{"duplicate", ok + "\n" + ok, "f.jsonl:2: id \"a\" used twice"},
		{"no answer", `{"id":"a","session":"s","time":"2025-01-01T10:00:00Z","prompt":"go on","question":"q"}`, "needs session, time, prompt and answer"},
		{"no time", `{"id":"a","session":"s","prompt":"go on","answer":"x","question":"q"}`, "needs session, time, prompt and answer"},
		{"abstention with exchange", `{"id":"a","question":"q","is_abstention":true,"answer":"x"}`, "has no exchange"},
		{"empty", "\n\n", "no incident"},
	} {
		_, err := parseIncidents(strings.NewReader(tc.text), "f.jsonl")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCheckAnswerSide checks the rules of the answer-side check on a
// workspace built by hand: a term is distinctive when fewer than 5% of the
// exchanges hold it.
func TestCheckAnswerSide(t *testing.T) {
	h := &codingHaystack{}
	for i := range 40 {
		// Filler: "deploy" and "service" are in every exchange, so not
		// distinctive.
		h.all = append(h.all, importedExchange{ID: fmt.Sprint("f", i), User: "deploy the service", AI: fmt.Sprintf("service deployed, build %d", i)})
	}
	h.all = append(h.all,
		importedExchange{ID: "e1", User: "status update please", AI: "the mailer acked after sending, so the queue redelivered; we dedupe by message key now"},
		importedExchange{ID: "e2", User: "why does the mailer send twice?", AI: "it acked after sending; dedupe by message key"},
		importedExchange{ID: "e3", User: "", AI: "orphan answer about the mailer"},
		importedExchange{ID: "e4", User: "deploy the service and tell me about duplicates", AI: "done"},
	)
	q := func(id, text string, ev ...string) question {
		out := question{QID: id, Text: text, Evidence: ev[:1]}
		if len(ev) > 1 {
			out.Equiv = map[string]string{}
			for _, e := range ev[1:] {
				out.Equiv[e] = ev[0]
			}
		}
		return out
	}
	checks := h.checkAnswerSide([]question{
		q("generic", "why did the mailer send twice", "e1"),
		q("told", "why did the mailer send twice", "e2"),
		q("orphan", "what about the mailer", "e3"),
		q("common words", "deploy the service", "e1"),
		q("overlap", "why deploy service duplicates", "e4"),
		q("too many", "why did the mailer send twice", "e1", "f1", "f2", "f3", "f4"),
	})
	want := map[string]string{
		"generic":      "",
		"told":         "distinctive terms",
		"orphan":       "has no prompt",
		"common words": "",
		"overlap":      "of the question's terms",
		"too many":     "5 evidence exchanges",
	}
	for _, c := range checks {
		got := strings.Join(c.Problems, "; ")
		if w := want[c.QID]; (w == "") != (got == "") || !strings.Contains(got, w) {
			t.Errorf("%s: problems %q, want %q (distinctive %v, shared %v, overlap %.2f)", c.QID, got, w, c.Distinctive, c.Shared, c.Overlap)
		}
	}
	if err := checkProblems(checks); err == nil || !strings.Contains(err.Error(), "4 question(s) fail it") {
		t.Errorf("checkProblems: %v", err)
	}
	if err := checkProblems(checks[:1]); err != nil {
		t.Errorf("checkProblems of a passing question: %v", err)
	}
}

// tinyAnswerSet writes, beside the tiny transcripts, an answer-side
// question file, an incidents file and a LongMemEval dataset with one
// assistant-side question.
func tinyAnswerSet(t *testing.T) (transcripts, questions, incidents, lme string) {
	t.Helper()
	transcripts, _ = tinyTranscripts(t)
	questions = filepath.Join(transcripts, "answer-questions.jsonl")
	qs := []string{
		`{"qid":"x-schema","question":"where do schema lookups get memoised","transcript":"claude-code/proj/a1.jsonl","agent":"claude-code","session_id":"a1","evidence_answer_contains":["schema lookups in a map"]}`,
		`{"qid":"x-abs","question":"which vendor did we pick for the CDN","is_abstention":true}`,
	}
	if err := os.WriteFile(questions, []byte(strings.Join(qs, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	incidents = filepath.Join(transcripts, "incidents.jsonl")
	ins := []string{
		`{"id":"i-mail","session":"ops","time":"2025-01-02T09:00:00Z","prompt":"status update please","answer":"the email worker acked after sending, so jobs were redelivered; we ack first and dedupe by message key","question":"why did customers get two copies of one mail","gist":"ack after send"}`,
		`{"id":"i-disk","session":"ops","time":"2025-01-03T09:00:00Z","prompt":"go on","answer":"logrotate missed the new log file and /var filled up; glob fixed","question":"what filled the servers' storage","gist":"logrotate glob"}`,
		`{"id":"i-abs","question":"why did the barcode scanners print blank labels","is_abstention":true}`,
	}
	if err := os.WriteFile(incidents, []byte(strings.Join(ins, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lme = miniDataset(t)
	extra, _ := json.Marshal(map[string]any{"qid": "q1_asst", "question_type": lmeAssistantType, "question": "Which plants did you say are safe for cats?",
		"answer_sessions": []string{"q1:s1"}, "evidence_exchange_ids": []string{"q1:s1:3+4"}, "log_file": "logs/q1.jsonl", "resume_session": "q1:s2"})
	f, err := os.OpenFile(filepath.Join(lme, "queries.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(extra, '\n')); err != nil {
		t.Fatal(err)
	}
	return transcripts, questions, incidents, lme
}

func TestAnswersRun(t *testing.T) {
	dir, qfile, ifile, lme := tinyAnswerSet(t)
	useConverter(t, protocolConverter)
	args := []string{"--set", "answers", "--data", dir, "--questions", qfile, "--incidents", ifile, "--longmemeval", lme, "--k", "1,5", "--min-score", "0"}
	n, results := runJSON(t, slices.Clone(args)...)
	if n != 4 {
		t.Fatalf("%d questions, want 4 (1 transcripts, 2 incidents, 1 longmemeval-assistant)", n)
	}
	var types []string
	for _, s := range results[0] {
		types = append(types, fmt.Sprintf("%s:%d", s.Type, s.N))
	}
	if fmt.Sprint(types) != "[all:4 transcripts:1 incidents:2 longmemeval-assistant:1]" {
		t.Errorf("report lines %v", types)
	}
	for _, sums := range results {
		// BM25 finds the questions that share words with their evidence
		// in the top 5 of a few exchanges; "two copies of one mail" shares
		// none with "the email worker acked after sending".
		for _, s := range sums {
			if s.Variant == "bm25" && s.Type != "incidents" && s.Type != "all" && s.RecallAny["@5"] < 0.99 {
				t.Errorf("%s %s: %+v", s.Variant, s.Type, s)
			}
		}
	}

	// The table reports the set, its check and the abstention questions.
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"answer-side set: 4 questions (transcripts 1, incidents 2, longmemeval-assistant 1)", "answer-side check passed",
		"abstention: 2 questions"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}

	// --types keeps parts; --show-evidence lists evidence and checks.
	out.Reset()
	if err := run(context.Background(), append(slices.Clone(args), "--types", "incidents", "--show-evidence"), &out, &errb); err != nil {
		t.Fatalf("show evidence: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"i-mail (incidents)", "incident:i-mail [incidents-ops]", "user: status update please", "answer-side check", "i-disk "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("evidence listing lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "x-schema") || strings.Contains(out.String(), "q1_asst") {
		t.Errorf("--types incidents listed other parts:\n%s", out.String())
	}

	// Resume runs on the set too.
	out.Reset()
	if err := run(context.Background(), append(slices.Clone(args), "--mode", "resume"), &out, &errb); err != nil {
		t.Fatalf("resume: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "resume (hybrid)") {
		t.Errorf("resume report:\n%s", out.String())
	}
}

func TestAnswersRunErrors(t *testing.T) {
	dir, qfile, ifile, lme := tinyAnswerSet(t)
	useConverter(t, protocolConverter)
	told := filepath.Join(dir, "told.jsonl")
	// The evidence prompt "make the parser faster" holds the question's
	// distinctive words: the answer-side check fails it.
	if err := os.WriteFile(told, []byte(`{"qid":"x-told","question":"how did the parser get faster","transcript":"claude-code/proj/a1.jsonl","agent":"claude-code","session_id":"a1","evidence_answer_contains":["streaming decoder"]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--set", "answers", "--data", dir, "--incidents", ifile, "--longmemeval", lme}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(base), "--questions", told), "answer-side check: 1 question(s) fail it"},
		{append(slices.Clone(base), "--questions", qfile, "--types", "poems"), "the answers set's parts are"},
		{append(slices.Clone(base[:len(base)-2]), "--questions", qfile, "--longmemeval", filepath.Join(dir, "none"), "--types", partLongMemEval), "part longmemeval-assistant"},
		{[]string{"--set", "coding", "--incidents", ifile}, "are for --set answers"},
	} {
		err := run(context.Background(), tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
	}
	// Without the LongMemEval dataset the part is left out, with a note.
	var errb bytes.Buffer
	args := append(slices.Clone(base[:len(base)-2]), "--questions", qfile, "--longmemeval", filepath.Join(dir, "none"), "--json")
	if err := run(context.Background(), args, io.Discard, &errb); err != nil {
		t.Fatalf("run without LongMemEval: %v", err)
	}
	if !strings.Contains(errb.String(), "part longmemeval-assistant left out") {
		t.Errorf("stderr: %s", errb.String())
	}
}

func TestFilterTypes(t *testing.T) {
	qs := []question{{QID: "1", Type: "a"}, {QID: "2", Type: "b"}, {QID: "3", Type: "a"}}
	got, err := filterTypes(qs, []string{"a"})
	if err != nil || len(got) != 2 {
		t.Errorf("a: %v %v", got, err)
	}
	if got, _ := filterTypes(qs, nil); len(got) != 3 {
		t.Errorf("no filter: %v", got)
	}
	if _, err := filterTypes(qs, []string{"c"}); err == nil || !strings.Contains(err.Error(), "the set has a, b") {
		t.Errorf("unknown type: %v", err)
	}
}

// TestAnswerSetOnTranscripts imports the real transcripts with the
// incidents and checks that every question of the compiled-in set finds
// its evidence and passes the answer-side check.
func TestAnswerSetOnTranscripts(t *testing.T) {
	cqs, err := loadAnswerQuestions("")
	if err != nil {
		t.Fatal(err)
	}
	incs, err := loadIncidents("")
	if err != nil {
		t.Fatal(err)
	}
	h := realHaystack(t, writeIncidents(incs))
	qs, err := h.questions(cqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.leftOut) > 0 {
		t.Errorf("questions left out (transcript not imported): %q", h.leftOut)
	}
	iq, err := h.incidentQuestions(incs)
	if err != nil {
		t.Fatal(err)
	}
	checks := h.checkAnswerSide(append(qs, iq...))
	if err := checkProblems(checks); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, c := range checks {
		sum += c.OverlapAll
	}
	t.Logf("%d transcript and %d incident questions over %d exchanges pass the answer-side check; mean question/evidence term overlap %.3f",
		len(qs), len(iq), len(h.all), sum/float64(len(checks)))
}
