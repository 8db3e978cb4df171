package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/internal/embedcache"
	"github.com/praxis-os/continuity/search"
)

// TestMain keeps the tests' embedding cache out of the user's home.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "continuity-eval-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv(embedcache.EnvDir, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// miniDataset writes a dataset of two questions (and one abstention) in
// the layout of the LongMemEval export.
func miniDataset(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	ex := func(qid, session string, n int, user, ai string, hasAnswer bool) string {
		b, _ := json.Marshal(map[string]any{
			"type": "exchange", "timestamp": time.Date(2024, 1, 1, n, 0, 0, 0, time.UTC).Format(time.RFC3339),
			"session_id": qid + ":" + session, "id": fmt.Sprintf("%s:%s:%d+%d", qid, session, 2*n+1, 2*n+2),
			"user": user, "ai": ai, "metadata": map[string]any{"has_answer": hasAnswer},
		})
		return string(b)
	}
	logs := map[string][]string{
		"q1": {
			ex("q1", "s1", 0, "I adopted a cat named Luna last week.", "Congratulations on Luna!", true),
			ex("q1", "s1", 1, "What plants are safe for cats?", "Spider plants and calatheas.", false),
			`{"type":"session_resume","timestamp":"2024-01-02T00:00:00Z","previous_session":"q1:s1","new_session":"q1:s2"}`,
			ex("q1", "s2", 2, "Recommend a sci-fi novel.", "Try Hyperion.", false),
		},
		"q2": {
			ex("q2", "s1", 0, "My commute by train takes 45 minutes.", "That's a good time to read.", true),
			ex("q2", "s2", 1, "I moved, now my commute by bike is 20 minutes.", "Healthier too!", true),
			ex("q2", "s3", 2, "How do I bake sourdough?", "Start with a starter.", false),
		},
	}
	var queries []string
	for qid, lines := range logs {
		if err := os.WriteFile(filepath.Join(dir, "logs", qid+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	q := func(qid, typ, text string, abst bool, sessions, evidence []string) {
		b, _ := json.Marshal(map[string]any{"qid": qid, "question_type": typ, "is_abstention": abst, "question": text,
			"answer_sessions": sessions, "evidence_exchange_ids": evidence, "log_file": "logs/" + strings.TrimSuffix(qid, "_abs") + ".jsonl"})
		queries = append(queries, string(b))
	}
	q("q1", "single-session-user", "What is the name of my cat?", false, []string{"q1:s1"}, []string{"q1:s1:1+2"})
	q("q2", "knowledge-update", "How long is my commute now?", false, []string{"q2:s1", "q2:s2"}, []string{"q2:s1:1+2", "q2:s2:3+4"})
	q("q2_abs", "knowledge-update", "What is my dog called?", true, nil, nil)
	if err := os.WriteFile(filepath.Join(dir, "queries.jsonl"), []byte(strings.Join(queries, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRetrievalJSON(t *testing.T) {
	dir := miniDataset(t)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"--data", dir, "--json", "--k", "1,5"}, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	var got struct {
		Questions int         `json:"questions"`
		Embedder  string      `json:"embedder"`
		Results   [][]summary `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got.Questions != 2 || got.Embedder != "uselite:use-lite-en-0.2.0-f16:512#user|ai" || len(got.Results) != len(defaultVariants()) {
		t.Fatalf("got %+v", got)
	}
	for _, sums := range got.Results {
		all := sums[0]
		if all.Type != "all" || all.N != 2 || len(sums) != 3 {
			t.Errorf("%s: summaries %+v", all.Variant, sums)
		}
		// Both questions are easy: everything is found in the top 5.
		if all.RecallAll["@5"] != 1 || all.SessionRecallAll["@5"] != 1 || all.RecallAny["@1"] != 1 {
			t.Errorf("%s: %+v", all.Variant, all)
		}
	}
}

func TestRetrievalTable(t *testing.T) {
	dir := miniDataset(t)
	var out, errb bytes.Buffer
	t.Setenv(EnvData, dir)
	if err := run(context.Background(), nil, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"hybrid", "bm25", "vector", "any@5", "all@10", "sess@5", "knowledge-update", "p50 ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRetrievalMisses(t *testing.T) {
	dir := miniDataset(t)
	var out, errb bytes.Buffer
	// At k=1 the commute question misses one of its two exchanges.
	if err := run(context.Background(), []string{"--data", dir, "--misses", "--k", "1"}, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"q2 knowledge-update: How long is my commute now?", "  bm25 ", "evidence ranks ", "outside some variant's top 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("misses lack %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "q1 single-session-user") {
		t.Errorf("q1 is found by every variant, yet listed:\n%s", out.String())
	}

	out.Reset()
	if err := run(context.Background(), []string{"--data", dir, "--misses", "--json", "--k", "1"}, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	var got struct {
		Misses []miss `json:"misses"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Misses) != 1 || got.Misses[0].QID != "q2" || len(got.Misses[0].Variants) != len(defaultVariants()) ||
		len(got.Misses[0].Variants[0].Ranks) != 2 {
		t.Errorf("JSON misses: %+v", got.Misses)
	}
}

func TestRunErrors(t *testing.T) {
	dir := miniDataset(t)
	for _, args := range [][]string{
		{"--data", dir, "--mode", "nope"},
		{"--data", dir, "--k", "5,x"},
		{"--data", dir, "--k", "0"},
		{"--data", filepath.Join(dir, "missing")},
		{"--data", dir, "extra"},
	} {
		var out, errb bytes.Buffer
		if err := run(context.Background(), args, &out, &errb); err == nil {
			t.Errorf("run %v: no error", args)
		}
	}
}

func TestScore(t *testing.T) {
	q := question{Evidence: []string{"e1", "e2"}, AnswerSessions: []string{"s1", "s2"}}
	res := []search.Result{
		{ID: "e1", SessionID: "s1"}, {ID: "x", SessionID: "s1"}, {ID: "y", SessionID: "s3"},
		{ID: "z", SessionID: "s4"}, {ID: "e2", SessionID: "s2"},
	}
	s := score(q, res, []int{1, 3, 5}, 0)
	want := scored{AnyAt: []bool{true, true, true}, AllAt: []bool{false, false, true}, SessAt: []bool{false, false, true}}
	if fmt.Sprint(s.AnyAt, s.AllAt, s.SessAt) != fmt.Sprint(want.AnyAt, want.AllAt, want.SessAt) {
		t.Errorf("got any %v all %v sess %v", s.AnyAt, s.AllAt, s.SessAt)
	}
	// Sessions are counted distinct, in rank order: s1, s3, s4, s2.
	s = score(q, res, []int{3, 4}, 0)
	if s.SessAt[0] || !s.SessAt[1] {
		t.Errorf("session recall: %v", s.SessAt)
	}
	// Ranks are 1-based, in the evidence's order; 0 when not found.
	q.Evidence = []string{"e2", "gone", "e1"}
	if s = score(q, res, []int{5}, 0); fmt.Sprint(s.Ranks) != "[5 0 1]" {
		t.Errorf("ranks %v, want [5 0 1]", s.Ranks)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(d, 0.5); p != 50*time.Millisecond {
		t.Errorf("p50 %s", p)
	}
	if p := percentile(d, 0.95); p != 95*time.Millisecond {
		t.Errorf("p95 %s", p)
	}
	if p := percentile(nil, 0.5); p != 0 {
		t.Errorf("p50 of nothing: %s", p)
	}
}
