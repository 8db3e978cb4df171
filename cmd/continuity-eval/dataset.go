package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// question is one line of queries.jsonl. Only the fields the evaluation
// needs are decoded; the logs' metadata.has_answer (ground truth) is never
// read by anything in this command: the indexer stores it, nobody looks.
type question struct {
	QID        string `json:"qid"`
	Type       string `json:"question_type"`
	Abstention bool   `json:"is_abstention"`
	Text       string `json:"question"`
	// QueryTime is when the question is asked: search reads "two weeks
	// ago" against it. Zero when the dataset does not say.
	QueryTime      time.Time `json:"query_time"`
	AnswerSessions []string  `json:"answer_sessions"`
	Evidence       []string  `json:"evidence_exchange_ids"`
	ResumeSession  string    `json:"resume_session"`
	LogFile        string    `json:"log_file"`

	// ResumeIncludeCurrent offers resume_session's own exchanges to the
	// resume pack (the coding set: the developer comes back to the
	// session that holds the evidence, its context long gone).
	ResumeIncludeCurrent bool `json:"-"`
	// Equiv maps other exchanges holding the same evidence (the later
	// parts of a long turn, identical copies) to the Evidence id they
	// stand for: finding any of them counts.
	Equiv map[string]string `json:"-"`
}

// canon is the evidence id that id stands for (id itself if none).
func (q question) canon(id string) string {
	if c, ok := q.Equiv[id]; ok {
		return c
	}
	return id
}

// loadQuestions reads the non-abstention questions of dir/queries.jsonl
// (abstention questions have no evidence to retrieve), in file order.
func loadQuestions(dir string) ([]question, error) {
	path := filepath.Join(dir, "queries.jsonl")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open dataset: %w", err)
	}
	defer f.Close()
	var out []question
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var q question
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if q.Abstention {
			continue
		}
		if q.QID == "" || q.Text == "" || q.LogFile == "" {
			return nil, fmt.Errorf("%s:%d: question without qid, question or log_file", path, n)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no question to evaluate", path)
	}
	return out, nil
}
