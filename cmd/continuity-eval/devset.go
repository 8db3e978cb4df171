package main

// The developers' set (--set devs, issue 32 item 4): coding-agent sessions
// as they are logged, where the decision sits in the assistant's answer,
// most often one exchange after the question. A developer asks ("mobile
// users keep getting logged out"), the agent lays out options, the
// developer says "ok b" or "go with it", and the agent's next answer holds
// what was done; some decisions are taken in the answer to the question
// itself. Weeks later the developer asks about it in other words ("how do
// phone apps stay signed in"). The set is self-contained (no ../shared):
//
//   - testdata/dev-decisions.jsonl: one decision a line, its session
//     (a part of the project), the prompt (ask), the agent's options
//     (offer), the developer's go-ahead (go) and the agent's answer holding
//     the decision (done), and the later question (q). Without go, the
//     decision is in the answer to the ask itself (one exchange);
//   - testdata/dev-fillers.jsonl: everyday agent exchanges ("run the
//     tests", "commit that"), put between the decisions so that sessions
//     look like sessions and the go-aheads are not the only short prompts.
//
// Each decision's evidence is the exchange holding done. Every question
// shares at most one content word (analyze stems that are not stop words)
// with its evidence exchange, checked at load (devOverlapMax): words alone
// find it only through its neighbour, or not at all. The question types
// are "next" (the decision one exchange after the question) and "same".

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/logformat"
)

// setDevs names the developers' set (--set).
const setDevs = "devs"

// The question types of the developers' set.
const (
	devNext = "next" // decided one exchange after the question
	devSame = "same" // decided in the answer to the question
)

// devOverlapMax is the most content words a question may share with its
// evidence exchange (prompt and answer).
const devOverlapMax = 1

//go:embed testdata/dev-decisions.jsonl
var devDecisionsJSONL []byte

//go:embed testdata/dev-fillers.jsonl
var devFillersJSONL []byte

// devDecision is one line of dev-decisions.jsonl.
type devDecision struct {
	ID       string `json:"id"`
	Session  string `json:"s"`
	Ask      string `json:"ask"`
	Offer    string `json:"offer"`
	Go       string `json:"go"`
	Done     string `json:"done"`
	Question string `json:"q"`
}

// devFiller is one line of dev-fillers.jsonl.
type devFiller struct {
	User string `json:"user"`
	AI   string `json:"ai"`
}

func (d devDecision) kind() string {
	if d.Go == "" {
		return devSame
	}
	return devNext
}

// evidence is the exchange holding the decision: its prompt and answer.
func (d devDecision) evidence() (user, ai string) {
	if d.Go == "" {
		return d.Ask, d.Done
	}
	return d.Go, d.Done
}

func devSessionID(s string) string { return "dev-" + s }
func devEventID(id string) string  { return "dev:" + id }

// loadDevSet parses the compiled-in decisions and fillers and checks them.
func loadDevSet() ([]devDecision, []devFiller, error) {
	var ds []devDecision
	seen := map[string]bool{}
	err := eachJSONLine(bytes.NewReader(devDecisionsJSONL), "dev-decisions.jsonl", func(n int, dec *json.Decoder) error {
		var d devDecision
		if err := dec.Decode(&d); err != nil {
			return err
		}
		switch {
		case d.ID == "" || seen[d.ID]:
			return fmt.Errorf("id %q missing or used twice", d.ID)
		case d.Session == "" || d.Ask == "" || d.Done == "" || d.Question == "":
			return fmt.Errorf("%s: a decision needs s, ask, done and q", d.ID)
		case (d.Go == "") != (d.Offer == ""):
			return fmt.Errorf("%s: offer and go come together (a decision one exchange later) or not at all", d.ID)
		}
		seen[d.ID] = true
		ds = append(ds, d)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var fs []devFiller
	err = eachJSONLine(bytes.NewReader(devFillersJSONL), "dev-fillers.jsonl", func(n int, dec *json.Decoder) error {
		var f devFiller
		if err := dec.Decode(&f); err != nil {
			return err
		}
		if f.User == "" || f.AI == "" {
			return errors.New("a filler needs user and ai")
		}
		fs = append(fs, f)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var errs []error
	for _, d := range ds {
		u, a := d.evidence()
		if shared := sharedContentWords(d.Question, u+"\n"+a); len(shared) > devOverlapMax {
			errs = append(errs, fmt.Errorf("%s: the question shares %d content words with its evidence (at most %d): %q", d.ID, len(shared), devOverlapMax, shared))
		}
	}
	return ds, fs, errors.Join(errs...)
}

// contentWords are the stems of text's words that are not stop words.
func contentWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range analyze.Words(text) {
		if analyze.Meaningless(w) {
			continue
		}
		out[analyze.Stem(w)] = true
	}
	return out
}

// sharedContentWords lists the content words of q found in text, sorted.
func sharedContentWords(q, text string) []string {
	in := contentWords(text)
	var out []string
	for w := range contentWords(q) {
		if in[w] {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// devStart is when the first session of the set starts; each session
// starts a day after the previous one.
var devStart = time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)

// devLayout lays the decisions out in sessions (in file order of their
// first decision): before each decision one filler, two after every
// second one, so that a session reads filler, ask/offer, go/done, filler...
// It returns each session's exchanges in order.
func devLayout(ds []devDecision, fs []devFiller) (order []string, sessions map[string][]logformat.Event) {
	sessions = map[string][]logformat.Event{}
	fi := 0
	filler := func(s string, n int) {
		f := fs[fi%len(fs)]
		fi++
		sessions[s] = append(sessions[s], logformat.Event{Type: logformat.TypeExchange, SessionID: devSessionID(s),
			ID: fmt.Sprintf("dev:%s-f%d", s, n), User: f.User, AI: f.AI})
	}
	for i, d := range ds {
		s := d.Session
		if _, ok := sessions[s]; !ok {
			order = append(order, s)
		}
		filler(s, len(sessions[s]))
		ex := func(id, user, ai string) {
			sessions[s] = append(sessions[s], logformat.Event{Type: logformat.TypeExchange, SessionID: devSessionID(s), ID: id, User: user, AI: ai})
		}
		if d.kind() == devNext {
			ex(devEventID(d.ID)+"-ask", d.Ask, d.Offer)
			ex(devEventID(d.ID), d.Go, d.Done)
		} else {
			ex(devEventID(d.ID), d.Ask, d.Done)
		}
		if i%2 == 1 {
			filler(s, len(sessions[s]))
		}
	}
	for si, s := range order {
		t := devStart.AddDate(0, 0, si)
		for i := range sessions[s] {
			sessions[s][i].Timestamp = t.Add(time.Duration(i) * 4 * time.Minute)
		}
	}
	return order, sessions
}

// writeDevLogs writes the set's sessions into the logs folder, a file each.
func writeDevLogs(ds []devDecision, fs []devFiller) func(logs string) error {
	return func(logs string) error {
		order, sessions := devLayout(ds, fs)
		for _, s := range order {
			var buf bytes.Buffer
			for _, e := range sessions[s] {
				line, err := e.MarshalLine()
				if err != nil {
					return fmt.Errorf("dev set session %s: %w", s, err)
				}
				buf.Write(line)
			}
			if err := os.WriteFile(filepath.Join(logs, devSessionID(s)+".jsonl"), buf.Bytes(), 0o600); err != nil {
				return fmt.Errorf("write dev set: %w", err)
			}
		}
		return nil
	}
}

// devQuestions are the set's questions, evidence the decisions' exchanges.
func devQuestions(ds []devDecision) []question {
	out := make([]question, 0, len(ds))
	for _, d := range ds {
		out = append(out, question{QID: d.ID, Type: d.kind(), Text: d.Question,
			AnswerSessions: []string{devSessionID(d.Session)}, Evidence: []string{devEventID(d.ID)},
			ResumeSession: devSessionID(d.Session), ResumeIncludeCurrent: true, LogFile: setDevs})
	}
	return out
}

// runDevs runs task t on the developers' set.
func runDevs(ctx context.Context, c *config, t task, split string, types []string, first int) error {
	ds, fs, err := loadDevSet()
	if err != nil {
		return err
	}
	qs := devQuestions(ds)
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
		for _, q := range qs {
			fmt.Fprintf(c.stdout, "%s (%s) %s\n  %s in %s\n", q.QID, q.Type, q.Text, strings.Join(q.Evidence, ", "), q.AnswerSessions[0])
		}
		return nil
	}
	ws, err := buildWorkspace(ctx, c.emb, "the developers' set", writeDevLogs(ds, fs))
	if err != nil {
		return err
	}
	defer ws.close()
	_, sessions := devLayout(ds, fs)
	n, next := 0, 0
	for _, s := range sessions {
		n += len(s)
	}
	for _, q := range qs {
		if q.Type == devNext {
			next++
		}
	}
	c.data = "the developers' set (compiled in)"
	c.note = fmt.Sprintf("developers' set: %d questions (%d decided one exchange later), one workspace of %d exchanges in %d sessions;\n"+
		"each question shares at most %d content word with its evidence exchange", len(qs), next, n, len(sessions), devOverlapMax)
	c.open = func(context.Context, question) (*workspace, func(), error) { return ws, func() {}, nil }
	return t(ctx, c, qs)
}
