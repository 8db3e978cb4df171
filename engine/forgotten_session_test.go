package engine

import (
	"io"
	"strings"
	"testing"
)

// TestForgottenSessionNamed: search, resume and export of a session that
// was forgotten say so (and when), instead of "unknown session", which
// read as a mistyped id to whoever had just forgotten it; a session never
// seen is still unknown.
func TestForgottenSessionNamed(t *testing.T) {
	ws := newLayout(t)
	e := openIngested(t, ws, Options{})
	defer e.Close()
	if _, err := e.Forget(ctx, ForgetRequest{Session: "b"}); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(session string) error{
		"search": func(s string) error {
			_, err := e.answerer.search(ctx, SearchRequest{Query: "pod restarts", Session: s})
			return err
		},
		"resume": func(s string) error {
			_, err := e.answerer.resume(ctx, ResumeRequest{Session: s})
			return err
		},
		"export": func(s string) error {
			_, err := NewClient(ws, nil, io.Discard).Export(ctx, s, false, 0)
			return err
		},
	}
	for name, call := range calls {
		err := call("b")
		if !IsBadRequest(err) || !strings.Contains(err.Error(), `session "b" was forgotten at `) {
			t.Errorf("%s of a forgotten session: %v", name, err)
		}
		if err := call("nope"); !IsBadRequest(err) || !strings.Contains(err.Error(), `unknown session "nope"`) {
			t.Errorf("%s of an unknown session: %v", name, err)
		}
	}
}
