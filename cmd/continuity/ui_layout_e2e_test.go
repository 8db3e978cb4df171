package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestViewerLayoutRealIDs: the viewer at 1400 px with what real agents
// write: 36-character session ids (UUIDs), a chain of them, long first
// prompts, and a session a user wrote with `echo >>` (no agent named).
// The sessions table fits the page (no sideways scroll) and shows a
// readable part of what each session began with; the resume preview's
// session box holds a whole id; a forget of one event says "1 event";
// the Agent column does not claim `continuity log` wrote the echo >>
// session. Before: "Began with" was cut to 3-4 characters, the table
// scrolled sideways, the id was cut in the session box, "Forget 1
// events", and the Agent column said "log".
func TestViewerLayoutRealIDs(t *testing.T) {
	ctx := browserContext(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t)
	ids := []string{"0b7c2f9e-5a1d-4c3e-9f2a-6d8e1b4c7a01", "1c8d3a0f-6b2e-4d4f-8a3b-7e9f2c5d8b12", "2d9e4b1a-7c3f-4e5a-9b4c-8f0a3d6e9c23"}
	for i, id := range ids {
		file := "claude-code-" + id + ".jsonl"
		if i > 0 {
			w.shellAppend(file, fmt.Sprintf(`{"type":"session_resume","previous_session":"%s","new_session":"%s","timestamp":"2026-11-2%dT08:00:00Z","metadata":{"source":"claude-code"}}`+"\n", ids[i-1], id, i))
		}
		w.shellAppend(file, fmt.Sprintf(`{"type":"exchange","session_id":"%s","timestamp":"2026-11-2%dT08:01:00Z","user":"Refactor the session middleware so that the login flow rotates the session id and the tests read the new cookie from the response (%d)","ai":"Done: the middleware rotates the id on login.","metadata":{"source":"claude-code"}}`+"\n", id, i, i))
	}
	echoID := "3e0f5c2b-8d4a-4f6b-8c5d-9a1b4e7f0d34"
	w.shellAppend("notes.jsonl", fmt.Sprintf(`{"type":"exchange","session_id":"%s","user":"Where do the nightly backups of the billing database go, and who rotates their keys?","ai":"To the cold bucket; ops rotates the keys monthly."}`+"\n", echoID))
	url := w.startUI(t)
	eventually(t, 2*time.Minute, "the daemon indexed the logs", func() bool {
		st := w.status()
		return st.Daemon.Running && st.Exchanges == 4
	})
	base := url[:strings.Index(url, "/?token=")]
	shots := os.Getenv(envUIScreenshotDir)
	if shots == "" {
		shots = t.TempDir()
	} else if !filepath.IsAbs(shots) {
		shots = filepath.Join("..", "..", shots)
	}
	eval := func(what, js string) float64 {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("count"))); err != nil {
		t.Fatal(err)
	}
	shoot(t, ctx, shots, "layout-sessions-1400")
	if over := eval("page width", `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
		t.Errorf("the sessions page scrolls sideways by %.0f px at 1400 px", over)
	}
	if over := eval("table width", `(() => { const t = document.querySelector("table.sessions"); return t.getBoundingClientRect().right - t.parentElement.getBoundingClientRect().right })()`); over > 1 {
		t.Errorf("the sessions table overflows its column by %.0f px", over)
	}
	// What each session began with: a readable part (at least 30
	// characters' width), in every row.
	if narrow := eval("opener width", `Math.min(...[...document.querySelectorAll("td.opener")].map(td => td.clientWidth))`); narrow < 240 {
		t.Errorf("'Began with' is %.0f px wide at 1400 px: cut to a few characters", narrow)
	}
	row := text(`tr[data-session="` + echoID + `"]`)
	if strings.Contains(" "+row+" ", " log ") || !strings.Contains(row, "unknown") {
		t.Errorf("the echo >> session's row claims an agent: %q", row)
	}

	// The resume preview: the session box holds the whole id.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/resume?session="+ids[2]), chromedp.WaitVisible(chromedp.ID("session"))); err != nil {
		t.Fatal(err)
	}
	shoot(t, ctx, shots, "layout-resume-1400")
	if cut := eval("session box", `(() => { const i = document.getElementById("session"); return i.scrollWidth - i.clientWidth })()`); cut > 0 {
		t.Errorf("the resume preview's session box cuts the id by %.0f px", cut)
	}

	// Forget one event: singular.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/forget?session="+echoID), chromedp.WaitVisible(chromedp.ID("forget-go"))); err != nil {
		t.Fatal(err)
	}
	if got := text("#forget-go"); got != "Forget 1 event" {
		t.Errorf("the forget button says %q, want %q", got, "Forget 1 event")
	}
	if cut := eval("forget's session cell", `(() => { const td = document.querySelector("#doomed tbody td"); return td.scrollWidth - td.clientWidth })()`); cut > 0 {
		t.Errorf("the forget page cuts the session id by %.0f px", cut)
	}
	if got := text("#doomed"); strings.Contains(" "+got+" ", " log ") {
		t.Errorf("the forget page claims an agent: %q", got)
	}
}
