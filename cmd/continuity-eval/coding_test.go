package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/internal/shareddata"
)

// protocolConverter is the test converter: the "transcripts" of the tiny
// set are protocol logs already, copied into the logs folder; a file
// ending in .txt is not a transcript.
func protocolConverter(_ context.Context, agent, path, logs string) error {
	if strings.HasSuffix(path, ".txt") {
		return fmt.Errorf("%s: %w", path, errNotTranscript)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	name := agent + "-" + strings.ReplaceAll(filepath.Base(path), ".", "_") + ".jsonl"
	return os.WriteFile(filepath.Join(logs, name), b, 0o600)
}

// tinyTranscripts writes a transcripts folder of protocol logs (two agents,
// a long turn in two parts, a file holding two sessions) and its questions.
func tinyTranscripts(t *testing.T) (dir, questions string) {
	t.Helper()
	dir = t.TempDir()
	ex := func(session, id, user, ai string) string {
		b, _ := json.Marshal(map[string]any{"type": "exchange", "session_id": session, "id": id,
			"timestamp": "2025-01-01T10:00:00Z", "user": user, "ai": ai})
		return string(b)
	}
	files := map[string][]string{
		"claude-code/proj/a1.jsonl": {
			ex("claude-code.a1", "a1-1", "why does   the build\nfail on CI?", "cgo needs gcc; we install it in the CI image"),
			ex("claude-code.a1", "a1-2", "make the parser faster", "switched to a streaming decoder; parsing is 3x faster"),
			ex("claude-code.a1", "a1-3", "make the parser faster (continued)", "also cached the schema lookups in a map"),
			ex("claude-code.a1", "a1-4", "what colour for the logo?", "teal, to match the docs site"),
		},
		"aider/proj/history.md": {
			ex("aider.2024-08-01T10-00-00", "h1", "rename the config loader", "renamed loadConfig to readSettings everywhere"),
			ex("aider.2024-08-02T11-30-00", "h2", "rename the config loader", "reverted: kept loadConfig, added an alias"),
			ex("aider.2024-08-02T11-30-00", "h3", "add a retry to the uploader", "three retries with exponential backoff, capped at 10 s"),
		},
		"aider/proj/notes.txt": {"not a transcript"},
	}
	for rel, lines := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# tiny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	qs := []string{
		`{"qid":"t-build","question":"what made the build break in the pipeline","transcript":"claude-code/proj/a1.jsonl","agent":"claude-code","session_id":"a1","evidence_prompt_contains":["why does the build fail"]}`,
		`{"qid":"t-cache","question":"where did we cache schema lookups","transcript":"claude-code/proj/a1.jsonl","agent":"claude-code","session_id":"a1","evidence_prompt_contains":["make the parser faster"],"evidence_answer_contains":["cached the schema"]}`,
		`{"qid":"t-parser","question":"how did the parser get quicker","transcript":"claude-code/proj/a1.jsonl","agent":"claude-code","session_id":"a1","evidence_prompt_contains":["make the parser faster"]}`,
		`{"qid":"t-rename","question":"did the loader rename stick","transcript":"aider/proj/history.md","agent":"aider","session_id":"2024-08-02 11:30:00","evidence_prompt_contains":["rename the config loader"]}`,
		`{"qid":"t-retry","question":"how many retries does the uploader make","transcript":"aider/proj/history.md","agent":"aider","session_id":"2024-08-02 11:30:00","evidence_prompt_contains":["add a retry"]}`,
		`{"qid":"t-abs","question":"which database did we shard","is_abstention":true}`,
	}
	questions = filepath.Join(dir, "questions.jsonl")
	if err := os.WriteFile(questions, []byte(strings.Join(qs, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, questions
}

func useConverter(t *testing.T, c transcriptConverter) {
	t.Helper()
	old := convertTranscript
	convertTranscript = func() transcriptConverter { return c }
	t.Cleanup(func() { convertTranscript = old })
}

func TestCodingHaystackMapsEvidence(t *testing.T) {
	dir, qfile := tinyTranscripts(t)
	cqs, err := loadCodingQuestions(qfile)
	if err != nil {
		t.Fatal(err)
	}
	emb := testEmbedder(t)
	h, err := openCodingHaystack(context.Background(), dir, protocolConverter, emb)
	if err != nil {
		t.Fatal(err)
	}
	defer h.ws.close()
	if len(h.skipped) != 1 || !strings.Contains(h.skipped[0], "notes.txt") {
		t.Errorf("skipped %q, want notes.txt only", h.skipped)
	}
	if len(h.all) != 7 {
		t.Errorf("%d exchanges, want 7", len(h.all))
	}
	qs, err := h.questions(cqs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, q := range qs {
		ids := append([]string{}, q.Evidence...)
		for id := range q.Equiv {
			ids = append(ids, id+"~")
		}
		got[q.QID] = strings.Join(ids, ",")
		if q.ResumeSession != q.AnswerSessions[0] || !q.ResumeIncludeCurrent {
			t.Errorf("%s: resume session %q, answer sessions %q", q.QID, q.ResumeSession, q.AnswerSessions)
		}
	}
	want := map[string]string{
		"t-build":  "a1-1",       // whitespace folded
		"t-cache":  "a1-3",       // the answer picks the part
		"t-parser": "a1-2,a1-3~", // both parts of the turn stand for one evidence
		"t-rename": "h2",         // the native session id picks the session
		"t-retry":  "h3",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("evidence\n got %v\nwant %v", got, want)
	}
	if len(qs) != 5 {
		t.Errorf("%d questions, want 5 (the abstention one has no evidence)", len(qs))
	}
}

func TestMapEvidence(t *testing.T) {
	exs := []importedExchange{
		{ID: "1", SessionID: "claude-code.s1", User: "fix the login bug", AI: "the token expired early"},
		{ID: "2", SessionID: "claude-code.s2", User: "fix the login bug", AI: "the cookie path was wrong"},
		{ID: "3", SessionID: "claude-code.s2", User: "add dark mode", AI: "done"},
	}
	for _, tc := range []struct {
		name    string
		q       codingQuestion
		want    string
		wantErr bool
	}{
		{"prompt only", codingQuestion{PromptContains: []string{"dark mode"}}, "[3]", false},
		{"two sessions, no narrowing", codingQuestion{PromptContains: []string{"login bug"}}, "[1 2]", false},
		{"narrowed by session", codingQuestion{SessionID: "s2xxxx", PromptContains: []string{"login bug"}}, "[1 2]", false},
		{"answer picks", codingQuestion{PromptContains: []string{"login"}, AnswerContains: []string{"cookie"}}, "[2]", false},
		{"alternatives", codingQuestion{PromptContains: []string{"nope", "dark"}}, "[3]", false},
		{"nothing", codingQuestion{QID: "x", PromptContains: []string{"logout"}}, "", true},
		{"answer mismatch is no fallback", codingQuestion{QID: "y", PromptContains: []string{"login"}, AnswerContains: []string{"database"}}, "", true},
	} {
		ev, err := mapEvidence(tc.q, exs)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if !tc.wantErr && fmt.Sprint(ev.IDs) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, ev.IDs, tc.want)
		}
	}
	// A native id found in the imported ids narrows to that session.
	ev, err := mapEvidence(codingQuestion{SessionID: "CLAUDE-code s1", PromptContains: []string{"login bug"}}, exs)
	if err != nil || fmt.Sprint(ev.IDs) != "[1]" || !ev.Narrowed {
		t.Errorf("narrowing: %+v %v", ev, err)
	}
}

func TestParseCodingQuestionsErrors(t *testing.T) {
	ok := `{"qid":"a","question":"q?","transcript":"x/y","agent":"aider","session_id":"","evidence_prompt_contains":["p"]}`
	for _, tc := range []struct{ name, text, want string }{
		{"bad json", "{", "f.jsonl:1"},
		{"unknown field", `{"qid":"a","question":"q","colour":1}`, "unknown field"},
		{"no evidence", `{"qid":"a","question":"q?","transcript":"x/y","agent":"aider"}`, "needs transcript"},
		{"duplicate", ok + "\n" + ok, "f.jsonl:2: qid \"a\" used twice"},
		{"abstention with evidence", `{"qid":"a","question":"q","is_abstention":true,"evidence_prompt_contains":["p"]}`, "no evidence"},
		{"empty substring", `{"qid":"a","question":"q?","transcript":"x/y","agent":"aider","evidence_prompt_contains":[" "]}`, "empty evidence substring"},
		{"empty file", "\n", "no question"},
	} {
		_, err := parseCodingQuestions(strings.NewReader(tc.text), "f.jsonl")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCodingQuestionsFile checks the compiled-in set: it parses, has at
// least 60 answerable questions spread over the agents, a few abstention
// questions, and both halves of the split hold some.
func TestCodingQuestionsFile(t *testing.T) {
	cqs, err := loadCodingQuestions("")
	if err != nil {
		t.Fatal(err)
	}
	perAgent := map[string]int{}
	var qs []question
	abst := 0
	for _, q := range cqs {
		if q.Abstention {
			abst++
			continue
		}
		perAgent[q.Agent]++
		qs = append(qs, question{QID: q.QID})
	}
	if len(qs) < 60 || abst < 5 {
		t.Errorf("%d answerable and %d abstention questions", len(qs), abst)
	}
	for _, a := range []string{"claude-code", "codex", "gemini", "aider", "cursor"} {
		if perAgent[a] == 0 {
			t.Errorf("no question about %s", a)
		}
	}
	tune, err1 := filterSplit(qs, splitTune)
	held, err2 := filterSplit(qs, splitHeldOut)
	if err1 != nil || err2 != nil || len(tune)+len(held) != len(qs) || len(tune) < len(qs)/4 || len(held) < len(qs)/4 {
		t.Errorf("split: tune %d, heldout %d of %d (%v %v)", len(tune), len(held), len(qs), err1, err2)
	}
}

func TestCodingRetrievalRun(t *testing.T) {
	dir, qfile := tinyTranscripts(t)
	useConverter(t, protocolConverter)
	var out, errb bytes.Buffer
	// No score floor: a 7-exchange fixture whose questions share one
	// word with their evidence tests the harness, not the floor.
	n, results := runJSON(t, "--set", "coding", "--data", dir, "--questions", qfile, "--k", "1,5", "--min-score", "0")
	if n != 5 || len(results) != len(defaultVariants()) {
		t.Fatalf("got %d questions, %+v", n, results)
	}
	for _, sums := range results {
		// Each question shares a word with its evidence: the lexical
		// variants find it in the top 5 of 7 exchanges (the hashed
		// vectors alone need not).
		if all := sums[0]; all.N != 5 || (all.Variant != "vector" && all.RecallAll["@5"] < 0.99) {
			t.Errorf("%s: %+v", all.Variant, all)
		}
	}

	// The table reports the set and the overlap; resume runs too.
	out.Reset()
	if err := run(context.Background(), []string{"--set", "coding", "--data", dir, "--questions", qfile}, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"coding set: 5 questions", "term overlap", "aider", "claude-code"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"--set", "coding", "--mode", "resume", "--data", dir, "--questions", qfile}, &out, &errb); err != nil {
		t.Fatalf("resume: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "resume (hybrid)") {
		t.Errorf("resume report:\n%s", out.String())
	}
}

// runJSON runs the evaluation with args and --json and decodes the
// number of questions and the summaries of its report.
func runJSON(t *testing.T, args ...string) (questions int, results [][]summary) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), append(args, "--json"), &out, &errb); err != nil {
		t.Fatalf("run %v: %v\n%s", args, err, errb.String())
	}
	var got struct {
		Questions int         `json:"questions"`
		Results   [][]summary `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return got.Questions, got.Results
}

func TestCodingRunErrors(t *testing.T) {
	dir, qfile := tinyTranscripts(t)
	useConverter(t, protocolConverter)
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"qid":"z","question":"q","transcript":"claude-code/proj/a1.jsonl","agent":"claude-code","evidence_prompt_contains":["never said"]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "nope"}, "unknown --set"},
		{[]string{"--set", "coding", "--data", filepath.Join(dir, "missing"), "--questions", qfile}, "transcripts folder"},
		{[]string{"--set", "coding", "--data", dir, "--questions", bad}, "without evidence"},
		{[]string{"--data", dir, "--questions", qfile}, "--questions is for --set coding"},
	} {
		err := run(context.Background(), tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestOverlap(t *testing.T) {
	if o := overlap("why did the build fail", "the build failed because of cgo"); o < 0.99 {
		t.Errorf("overlap %v, want 1 (build, fail: stemmed; why, did, the: stopwords)", o)
	}
	if o := overlap("which colour for the logo", "make the parser faster"); o != 0 {
		t.Errorf("overlap %v, want 0", o)
	}
}

func testEmbedder(t *testing.T) embed.Embedder {
	t.Helper()
	e, err := embed.New(embed.Config{Provider: embed.ProviderBuiltin})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// transcriptsDir finds the real transcripts: $CONTINUITY_EVAL_TRANSCRIPTS,
// else ../shared/data/agent-transcripts beside the repository.
func transcriptsDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv(EnvTranscripts); dir != "" {
		return dir
	}
	return shareddata.Require(t, "agent-transcripts")
}

// realHaystack imports the real transcripts (and what extra writes) into
// a workspace embedded with the hash embedder, closed when the test ends;
// it skips the test in -short mode or when the transcripts are absent.
func realHaystack(t *testing.T, extra func(logs string) error) *codingHaystack {
	t.Helper()
	if testing.Short() {
		t.Skip("imports and embeds 23 MB of transcripts")
	}
	dir := transcriptsDir(t)
	h, err := openHaystack(context.Background(), dir, convertTranscript(), testEmbedder(t), extra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.ws.close)
	return h
}

// TestCodingSetOnTranscripts imports the real transcripts and checks that
// every question of the compiled-in set finds its evidence: the question
// file and the importer agree.
func TestCodingSetOnTranscripts(t *testing.T) {
	cqs, err := loadCodingQuestions("")
	if err != nil {
		t.Fatal(err)
	}
	h := realHaystack(t, nil)
	qs, err := h.questions(cqs)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, q := range qs {
		u, _ := h.evidenceText(q)
		sum += overlap(q.Text, u)
	}
	t.Logf("%d questions mapped over %d exchanges; %d files not imported: %q; %d questions left out: %q; mean prompt-side term overlap %.3f",
		len(qs), len(h.all), len(h.skipped), h.skipped, len(h.leftOut), h.leftOut, sum/float64(len(qs)))
}
