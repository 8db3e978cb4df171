package rejectlog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/praxis-os/continuity/internal/indextest"
)

var ctx = context.Background()

// The log follows the rejects the index records from where they stood
// when it started: the new ones are logged with file:line and reason, up
// to rejectLogBurst a window, the rest counted.
func TestLogsNewRejects(t *testing.T) {
	f := indextest.New(t)
	f.Commit("not json, before the log started")
	var buf bytes.Buffer
	r := New(f.DB, slog.New(slog.NewTextHandler(&buf, nil)))
	if r.Name() != "rejects" {
		t.Errorf("Name = %q", r.Name())
	}
	step := func() {
		t.Helper()
		if _, err := r.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	step() // notes where the rejects stand
	if st := r.Report(ctx).(Status); !st.Following || st.Logged != 0 {
		t.Fatalf("after the first step: %+v", st)
	}
	f.Commit(indextest.Exchange("a1", "s", indextest.At(1), "fine", "ok"), "still not json")
	step()
	out := buf.String()
	if strings.Count(out, "line rejected") != 1 || !strings.Contains(out, "log.jsonl:3") {
		t.Fatalf("want line 3 logged once, got:\n%s", out)
	}
	if strings.Contains(out, "log.jsonl:1") {
		t.Errorf("a reject from before the start was logged:\n%s", out)
	}
	var bad []string
	for i := range rejectLogBurst + 5 {
		bad = append(bad, fmt.Sprintf("bad line %d", i))
	}
	f.Commit(bad...)
	step()
	st := r.Report(ctx).(Status)
	if st.Logged != rejectLogBurst || st.NotLogged != 6 {
		t.Errorf("after a burst: %+v, want %d logged and 6 not", st, rejectLogBurst)
	}
	if n := strings.Count(buf.String(), "line rejected"); n != rejectLogBurst {
		t.Errorf("%d lines logged in the window, want %d", n, rejectLogBurst)
	}
}
