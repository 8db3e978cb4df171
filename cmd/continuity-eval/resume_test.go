package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/praxis-os/continuity/internal/shareddata"
)

type resumeEvalReport struct {
	Questions int `json:"questions"`
	Budget    int `json:"budget"`
	Results   []struct {
		Variant        string  `json:"variant"`
		RecallAny      float64 `json:"recall_any"`
		EvidenceRecall float64 `json:"evidence_recall"`
		RecallWhole    float64 `json:"recall_any_whole"`
	} `json:"results"`
}

// runResumeJSON runs the resume task with the hashed embedder: these tests
// check the resume policy, and embedding every haystack with the model
// would cost CI minutes (continuity-eval itself reports the model's figures).
func runResumeJSON(t *testing.T, dir string) resumeEvalReport {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"--mode", "resume", "--data", dir, "--json", "--embedder", "hash"}, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	var r resumeEvalReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return r
}

// On the mini dataset: every variant runs; resume finds the cat's name
// (in a resumed session), newest-first does not reach it.
func TestResumeEvalMini(t *testing.T) {
	dir := miniDataset(t)
	// q1 resumes into s2; give q2 a resume session too.
	qs, err := os.ReadFile(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	qs = bytes.Replace(qs, []byte(`"qid":"q1",`), []byte(`"qid":"q1","resume_session":"q1:s2",`), 1)
	qs = bytes.Replace(qs, []byte(`"qid":"q2",`), []byte(`"qid":"q2","resume_session":"q2:s3",`), 1)
	if err := os.WriteFile(filepath.Join(dir, "queries.jsonl"), qs, 0o600); err != nil {
		t.Fatal(err)
	}
	r := runResumeJSON(t, dir)
	if r.Questions != 2 || r.Budget != 2000 || len(r.Results) != len(resumeVariants()) {
		t.Fatalf("report %+v", r)
	}
	byName := map[string]float64{}
	for _, v := range r.Results {
		byName[v.Variant] = v.RecallAny
	}
	// q2's sessions are not linked: only q1 has a chain with its evidence.
	if byName["resume (hybrid)"] != 0.5 || byName["resume (bm25)"] != 0.5 {
		t.Errorf("recall %v", byName)
	}
}

// The acceptance on LongMemEval_S dev: resume recall_any@2000 >= 0.88 with
// the 200-character rule, and >= 0.60 counting only evidence kept whole
// (issue 10: whole exchanges an agent can use rather than 200-character
// shreds; 0.926 and 0.042 with the shredding policy before it), above both
// baselines on recall_any, and no pack over budget (the task fails on
// one). A few minutes; skipped with -short or without the dataset.
func TestResumeEvalLongMemEval(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes 95 haystacks; skipped with -short")
	}
	data := shareddata.RequireLongMemEval(t) // $CONTINUITY_EVAL_DATA (EnvData) first
	r := runResumeJSON(t, data)
	got, whole := map[string]float64{}, map[string]float64{}
	for _, v := range r.Results {
		got[v.Variant], whole[v.Variant] = v.RecallAny, v.RecallWhole
		t.Logf("%-26s recall_any %.3f  evidence %.3f  whole %.3f", v.Variant, v.RecallAny, v.EvidenceRecall, v.RecallWhole)
	}
	if got["resume (hybrid)"] < 0.88 || whole["resume (hybrid)"] < 0.60 {
		t.Errorf("resume recall_any@2000 = %.3f (want >= 0.88), kept whole %.3f (want >= 0.60)", got["resume (hybrid)"], whole["resume (hybrid)"])
	}
	if got["resume (hybrid)"] <= got["bm25 fill"] || got["resume (hybrid)"] <= got["newest first"] {
		t.Errorf("resume does not beat the baselines: %v", got)
	}
}
