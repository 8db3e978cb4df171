package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The viewer in a real headless browser: Debian's chromium, which .ci/run
// installs. Without it the test is skipped, unless
// CONTINUITY_REQUIRE_BROWSER=1 (CI sets it) makes its absence a failure.
const (
	chromiumPath       = "/usr/bin/chromium"
	envRequireBrowser  = "CONTINUITY_REQUIRE_BROWSER"
	envUIScreenshotDir = "CONTINUITY_UI_SCREENSHOTS"
)

// uiLogs are what the browser test logs with real >> appends: an imported
// Claude Code session about auth, a session resuming it (with a context
// reset), a billing session whose answers hold a code fence, markup and a
// secret (split in this source, which holds none), and a line that is not
// JSON.
var uiLogs = []struct{ file, line string }{
	{"claude-code-auth-refactor.jsonl", `{"type":"exchange","id":"ar1","session_id":"auth-refactor","timestamp":"2026-11-20T09:12:00Z","user":"Why do the login tests fail after the session middleware change?","ai":"The middleware now rotates the session id on login, and the tests reuse the old cookie. Read the new cookie from the response.","files":["auth/middleware.go","auth/login_test.go"],"metadata":{"source":"claude-code"}}`},
	{"claude-code-auth-refactor.jsonl", `{"type":"exchange","id":"ar2","session_id":"auth-refactor","timestamp":"2026-11-20T09:40:00Z","user":"Decide where the password reset tokens live","ai":"Decision: reset tokens go in the tokens table with a 30 minute expiry, hashed with SHA-256; never in the users table.","files":["auth/reset.go","db/migrations/0042_tokens.sql"],"metadata":{"source":"claude-code"}}`},
	{"claude-code-auth-refactor.jsonl", `{"type":"context_reset","session_id":"auth-refactor","timestamp":"2026-11-20T10:02:00Z","reason":"compaction","metadata":{"source":"claude-code"}}`},
	{"claude-code-auth-refactor.jsonl", `{"type":"exchange","id":"ar3","session_id":"auth-refactor","timestamp":"2026-11-20T10:05:00Z","user":"Add rate limiting to the reset endpoint","ai":"Added a token bucket: 5 requests per minute per IP, in auth/ratelimit.go.","files":["auth/ratelimit.go"],"metadata":{"source":"claude-code"}}`},
	{"auth-tests.jsonl", `{"type":"session_resume","previous_session":"auth-refactor","new_session":"auth-tests","timestamp":"2026-11-21T08:00:00Z"}`},
	{"auth-tests.jsonl", `{"type":"exchange","id":"at1","session_id":"auth-tests","timestamp":"2026-11-21T08:03:00Z","user":"Write the tests for the reset token expiry","ai":"Tests added: a token used after 30 minutes is refused; a used token cannot be reused.","files":["auth/reset_test.go"]}`},
	{"auth-tests.jsonl", `{"type":"exchange","id":"at2","session_id":"auth-tests","timestamp":"2026-11-21T08:20:00Z","user":"Run the whole auth suite","ai":"All 48 tests pass."}`},
	{"billing.jsonl", `{"type":"exchange","id":"b1","session_id":"billing","timestamp":"2026-11-22T14:00:00Z","user":"How do Stripe webhook retries work? <script>alert('xss')</script>","ai":"Stripe retries a failed webhook for up to 3 days with exponential backoff. Make the handler idempotent:\n` + "```go" + `\nif seen(event.ID) {\n\treturn http.StatusOK // already handled\n}\n` + "```" + `\nThe test key was STRIPE_KEY=sk_` + `live_51HqLyjWDarjtT1zdp7dcXYZabcdefghijklmnop.","files":["billing/webhook.go"]}`},
	{"billing.jsonl", `{"type":"exchange","id":"b2","session_id":"billing","timestamp":"2026-11-22T14:30:00Z","user":"Partial refunds: what did we decide?","ai":"Refund through the Stripe API with the charge id; record each partial refund as its own ledger row."}`},
	{"billing.jsonl", `{"type":"exchange","session_id":"billing","user":"this line was cut by a crash`},
}

// browserContext starts headless chromium with the flags a root user on a
// machine without a GPU or network needs, and a fresh profile.
func browserContext(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv(envRequireBrowser) == "1" {
			t.Fatalf("%s: %v: the browser tests must run here (%s=1); install Debian's chromium (apt-get install chromium)", chromiumPath, err, envRequireBrowser)
		}
		t.Skipf("no %s: the viewer's browser tests are skipped (apt-get install chromium runs them; CI does)", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1280, 860),
	}
	// A generous bound, used only as the failure timeout of a loaded
	// machine: every step waits for a condition, not for a time.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 860)); err != nil {
		t.Fatalf("start %s: %v", chromiumPath, err)
	}
	return bctx
}

// startUI starts `daemon --ui --no-open` and returns the URL it prints as
// the first line of its output.
func (w *workspace) startUI(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(binPath, "daemon", "--root", w.root, "--ui", "--no-open", "--log-level", "warn")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w.start(cmd)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case url, ok := <-lines:
		if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
			t.Fatalf("first line of output %q: want the viewer's URL with its token", url)
		}
		return url
	case <-time.After(2 * time.Minute):
		t.Fatal("daemon --ui printed no URL within 2 minutes")
	}
	return ""
}

// shoot saves a screenshot of the whole page (not only the window) as
// docs/ui/NAME.png would hold it, into $CONTINUITY_UI_SCREENSHOTS (else
// the test's temporary folder).
func shoot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sliderBounds reads the budget slider's min and max.
func sliderBounds(ctx context.Context) (lo, hi float64, err error) {
	b, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[Number(document.getElementById("budget").min), Number(document.getElementById("budget").max)]`))
	if err != nil || len(b) != 2 || b[1] <= b[0] {
		return 0, 0, fmt.Errorf("slider bounds %v: %v", b, err)
	}
	return b[0], b[1], nil
}

// TestViewerInBrowser drives the viewer as a user would: the sessions
// page, following a chain, a search, the resume budget slider, health,
// and forgetting a session after confirming.
func TestViewerInBrowser(t *testing.T) {
	ctx := browserContext(t)
	w := newWorkspace(t)
	for _, l := range uiLogs {
		w.shellAppend(l.file, l.line+"\n")
	}
	url := w.startUI(t)
	eventually(t, 2*time.Minute, "the daemon indexed the logs", func() bool {
		st := w.status()
		return st.Daemon.Running && st.Exchanges == 7 && st.Rejects == 1
	})
	shots := os.Getenv(envUIScreenshotDir)
	switch {
	case shots == "":
		shots = t.TempDir()
	case !filepath.IsAbs(shots):
		// Relative to the repository's root (the test runs in
		// cmd/continuity): CONTINUITY_UI_SCREENSHOTS=docs/ui.
		shots = filepath.Join("..", "..", shots)
	}
	base := url[:strings.Index(url, "/?token=")]
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// navigate runs steps that load a new page (a link followed, a form
	// sent) and waits for it.
	navigate := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		resp, err := chromedp.RunResponse(ctx, steps...)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp.Status != 200 {
			t.Fatalf("%s: HTTP %d", what, resp.Status)
		}
	}

	// The sessions page, through the URL with the token (then the cookie).
	do("open the URL", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("count")))
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if strings.Contains(loc, "token") {
		t.Errorf("the token stayed in the address bar: %s", loc)
	}
	if got := text("#count"); !strings.HasPrefix(got, "3 sessions") {
		t.Errorf("sessions page: %q", got)
	}
	if got := text(`tr[data-session="auth-refactor"]`); !strings.Contains(got, "claude-code") || !strings.Contains(got, "Why do the login tests fail") {
		t.Errorf("the imported session's row does not name its agent and what it began with: %q", got)
	}
	shoot(t, ctx, shots, "sessions")

	// Follow the chain: the chain's chip of auth-tests, then the session
	// it resumes from the drawing.
	navigate("open auth-tests from its chain", chromedp.Click(chromedp.CSS(`tr.chainline a.chip[href="/session?id=auth-tests"]`)))
	if got := text("#session-id"); got != "auth-tests" {
		t.Fatalf("followed the chain to %q", got)
	}
	navigate("follow the link back", chromedp.Click(chromedp.CSS(`.chaindraw a.node[href="/session?id=auth-refactor"]`)))
	if got := text("#session-id"); got != "auth-refactor" {
		t.Fatalf("followed the link back to %q", got)
	}
	if got := text(".timeline"); !strings.Contains(got, "context reset: compaction") || !strings.Contains(got, "reset tokens go in the tokens table") {
		t.Errorf("auth-refactor's timeline: %q", got)
	}
	shoot(t, ctx, shots, "session")

	// Search: type a query in the box.
	do("search", chromedp.Navigate(base+"/search"), chromedp.WaitVisible(chromedp.ID("q")),
		chromedp.SendKeys(chromedp.ID("q"), "stripe webhook retries"))
	navigate("send the search", chromedp.Submit(chromedp.ID("q")))
	if got := text("#results article.result"); !strings.Contains(got, "exponential backoff") || !strings.Contains(got, "<script>alert('xss')</script>") {
		t.Errorf("first result %q: want the webhook answer, its <script> shown as text", got)
	}
	marks, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#results mark").length`))
	if err != nil || marks == 0 {
		t.Errorf("no highlighted word (%v)", err)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("script:not([src])").length`)); n != 0 {
		t.Errorf("%d inline scripts in the page: a logged <script> became markup", n)
	}
	shoot(t, ctx, shots, "search")

	// The resume preview: move the budget slider, the token count follows.
	do("resume preview", chromedp.Navigate(base+"/resume?session=auth-tests&include_current=1&budget=2000&query=reset+token+decision"),
		chromedp.WaitVisible(chromedp.ID("tokens")))
	before := text("#tokens")
	rect, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.getElementById("budget").getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`))
	if err != nil || len(rect) != 4 {
		t.Fatalf("slider: %v %v", rect, err)
	}
	// Click the track where a budget of about 420 tokens lies (the thumb,
	// some 16 pixels wide, travels the width less its own).
	lo, hi, err := sliderBounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	frac := (420 - lo) / (hi - lo)
	do("move the slider", chromedp.MouseClickXY(rect[0]+8+frac*(rect[2]-16), rect[1]+rect[3]/2),
		chromedp.Poll[chromedp.Void](`document.getElementById("tokens") && document.getElementById("tokens").textContent !== `+strconv.Quote(before)+
			` && document.getElementById("pack-budget").textContent === document.getElementById("budget").value`,
			chromedp.WithPollingTimeout(time.Minute)))
	after, budget := text("#tokens"), text("#budget-value")
	a, _ := strconv.Atoi(after)
	b, _ := strconv.Atoi(budget)
	if b >= 2000 || a > b || a == 0 {
		t.Errorf("after the slider: %s tokens at a budget of %s (before: %s at 2000)", after, budget, before)
	}
	if got := text("#explain"); !strings.Contains(got, "out:") {
		t.Errorf("at budget %s nothing is said to be left out: %q", budget, got)
	}
	shoot(t, ctx, shots, "resume")

	// Health: status, doctor, the rejected line with its place.
	do("health", chromedp.Navigate(base+"/health"), chromedp.WaitVisible(chromedp.ID("doctor")))
	if got := text("#rejects"); !strings.Contains(got, "billing.jsonl:3") {
		t.Errorf("rejects: %q", got)
	}
	shoot(t, ctx, shots, "health")

	// Forget billing after confirming.
	do("open billing", chromedp.Navigate(base+"/session?id=billing"), chromedp.WaitVisible(chromedp.ID("forget")))
	navigate("choose forget", chromedp.Click(chromedp.ID("forget")))
	if got := text("#doomed"); !strings.Contains(got, "billing") {
		t.Errorf("the confirmation does not show what goes: %q", got)
	}
	shoot(t, ctx, shots, "forget")
	// Unconfirmed, the form does not go.
	do("submit unconfirmed", chromedp.Click(chromedp.ID("forget-go")))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "/forget?session=billing") {
		t.Errorf("an unconfirmed forget left the page: %s", loc)
	}
	do("confirm", chromedp.Click(chromedp.ID("confirm")))
	navigate("forget", chromedp.Click(chromedp.ID("forget-go")))
	if got := text("#forgot"); !strings.Contains(got, "billing") {
		t.Errorf("after forgetting: %q", got)
	}
	out, errs, code := w.cli("sessions", "--json")
	var sessions struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sessions) != nil {
		t.Fatalf("sessions --json: %d %s", code, errs)
	}
	for _, s := range sessions.Sessions {
		if s.ID == "billing" {
			t.Error("billing is still indexed after the forget")
		}
	}
	do("back to the sessions", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("count")))
	if got := text("#count"); !strings.HasPrefix(got, "2 sessions") {
		t.Errorf("after forgetting: %q", got)
	}
}

// TestUICommand: `continuity ui` beside no daemon prints its URL first,
// answers with the token only, refuses a foreign Host, and reads the index
// itself.
func TestUICommand(t *testing.T) {
	w := newWorkspace(t)
	w.shellAppend("s.jsonl", exchangeLine("s1", "x1", "why is the sqlite database locked?", "a writer holds the lock"))
	if _, errs, code := w.cli("ingest", "--no-embed"); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	if _, errs, code := w.cli("ui", "--addr", "0.0.0.0:0", "--no-open"); code != 2 || !strings.Contains(errs, "loopback only") {
		t.Errorf("ui --addr 0.0.0.0:0: exit %d, %s", code, errs)
	}
	cmd := exec.Command(binPath, "ui", "--root", w.root, "--no-open")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w.start(cmd)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://127.0.0.1:") {
		t.Fatalf("first line %q: %v", line, err)
	}
	u := strings.TrimSpace(line)
	base := u[:strings.Index(u, "/?token=")]
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(target, host string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", target, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := get(base+"/", ""); resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "sqlite") {
		t.Errorf("no token: %d", resp.StatusCode)
	}
	if resp, _ := get(u, "rebound.example:80"); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}
	resp, _ := get(u, "")
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("with the token: %d, cookies %v", resp.StatusCode, cookies)
	}
	req, _ := http.NewRequest("GET", base+"/search?q=sqlite+lock&mode=bm25", nil)
	req.AddCookie(cookies[0])
	sr, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(sr.Body)
	sr.Body.Close()
	if sr.StatusCode != http.StatusOK || !strings.Contains(string(b), "<mark>sqlite</mark>") {
		t.Errorf("search through the cookie: %d\n%s", sr.StatusCode, b)
	}
}
