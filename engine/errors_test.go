package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/server"
)

// The engine's errors say the same in every interface but for the names
// of what they refer to, and cross the socket whole.
func TestErrorPhrasing(t *testing.T) {
	dashed := Phrasing{Field: func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }, Sessions: "'x sessions'"}
	at := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	cases := []struct {
		err             *Error
		neutral, dashed string
	}{
		{badValue("since", "%q", "yday", "want a date"), `since "yday": want a date`, `--since "yday": want a date`},
		{badValue("min_score", "%v", 1.5, "want 0 to 1"), `min score 1.5: want 0 to 1`, `--min-score 1.5: want 0 to 1`},
		{&Error{Code: CodeEmptyWindow, Field: "since", Value: "2026-11-02", Other: "until", OtherValue: "2026-11-01"},
			"since 2026-11-02 is not before until 2026-11-01: the window holds no time", "--since 2026-11-02 is not before --until 2026-11-01: the window holds no time"},
		{UnknownSession("nope").(*Error), `unknown session "nope" (see 'continuity sessions')`, `unknown session "nope" (see 'x sessions')`},
		{&Error{Code: CodeForgottenSession, Value: `"b"`, At: at}, `session "b" was forgotten at 2026-11-29T07:00:00Z ('continuity forget', retention or another machine's forget): its events are no longer indexed (see 'continuity sessions')`,
			`session "b" was forgotten at 2026-11-29T07:00:00Z ('continuity forget', retention or another machine's forget): its events are no longer indexed (see 'x sessions')`},
		{&Error{Code: CodeNoSessions, Field: "latest"}, "resume: latest: no session indexed yet", "resume: --latest: no session indexed yet"},
		{&Error{Code: CodeEmptyQuery, Field: "query"}, "empty query: give words to search for", "empty query: give words to search for"},
		{badRequest("page of 0 events"), "page of 0 events", "page of 0 events"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.neutral {
			t.Errorf("Error() = %q\nwant      %q", got, c.neutral)
		}
		if got := c.err.Phrase(dashed); got != c.dashed {
			t.Errorf("Phrase = %q\nwant     %q", got, c.dashed)
		}
		// Wrapped: the context is kept, the error phrased.
		wrapped := fmt.Errorf("asking: %w", c.err)
		if got := Phrase(wrapped, dashed); got != "asking: "+c.dashed {
			t.Errorf("Phrase(wrapped) = %q", got)
		}
		// Through the socket: the same error back.
		back := fromWire(toWire(c.err))
		if e := AsError(back); e == nil || e.Phrase(dashed) != c.dashed || !IsBadRequest(back) {
			t.Errorf("through the socket: %#v", back)
		}
	}
	if got := Phrase(errors.New("plain"), dashed); got != "plain" {
		t.Errorf("a plain error: %q", got)
	}
	// A daemon without structured errors: its message, still a bad request.
	old := &server.Error{Code: 2, Message: "unknown session \"x\""}
	if back := fromWire(old); back != old || !IsBadRequest(back) || AsError(back) != nil {
		t.Errorf("an older daemon's error: %#v", back)
	}
	if !errors.Is(&Error{Code: CodeNoEvent, Value: `"x"`}, ErrNoEvent) {
		t.Errorf("a CodeNoEvent error is not ErrNoEvent")
	}
}
