package ui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/workspace"
)

var ctx = context.Background()

// fixtureLogs are the logs of the tests' workspace: session a (imported
// from Claude Code: its metadata names the agent), resumed by b, which has
// a context reset; c, whose exchange holds markup, a code fence and a
// secret (split in this source, which must hold none: redact's
// TestRepoHasNoFalsePositives); and a line that is not JSON.
var fixtureLogs = map[string]string{
	"claude-code-a.jsonl": `{"type":"exchange","id":"a1","session_id":"a","timestamp":"2026-03-01T10:00:00Z","user":"why is the sqlite database locked","ai":"a writer holds the lock; use WAL","files":["index/db.go"],"metadata":{"source":"claude-code"}}
{"type":"exchange","id":"a2","session_id":"a","timestamp":"2026-03-01T10:05:00Z","user":"how do we retry busy errors","ai":"with a busy timeout of 5s","metadata":{"source":"claude-code"}}
`,
	"b.jsonl": `{"type":"session_resume","previous_session":"a","new_session":"b","timestamp":"2026-03-02T09:00:00Z"}
{"type":"exchange","id":"b1","session_id":"b","timestamp":"2026-03-02T09:01:00Z","user":"the kubernetes pod restarts","ai":"check the liveness probe","files":["deploy/pod.yaml","index/db.go"]}
{"type":"context_reset","session_id":"b","timestamp":"2026-03-02T09:30:00Z","reason":"window full"}
{"type":"exchange","id":"b2","session_id":"b","timestamp":"2026-03-02T09:31:00Z","user":"where were we with the probe","ai":"raising initialDelaySeconds"}
`,
	"c.jsonl": `{"type":"exchange","id":"c1","session_id":"c","timestamp":"2026-03-03T12:00:00Z","user":"<script>alert('xss')</script> render this","ai":"Here:\n` + "```go" + `\nfmt.Println(\"<b>hi</b>\")\n` + "```" + `\nthe key was OPENAI_API_KEY=sk-` + `proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"}
not json at all
`,
}

// fixture is a viewer over an ingested workspace, served by httptest.
type fixture struct {
	t   *testing.T
	ws  workspace.Layout
	srv *Server
	ts  *httptest.Server
}

func hashEmbedder() (embed.Embedder, error) {
	return embed.New(embed.Config{Provider: embed.ProviderHash})
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ws := workspace.At(t.TempDir())
	if err := os.MkdirAll(ws.Logs, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range fixtureLogs {
		if err := os.WriteFile(filepath.Join(ws.Logs, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	emb, err := hashEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ws, engine.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(ctx, nil); err != nil {
		t.Fatal(err)
	}
	e.Close()
	srv, err := New(Config{Backend: engine.NewClient(ws, hashEmbedder, nil), Workspace: ws.Root})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	srv.AllowHost(ts.Listener.Addr().String())
	return &fixture{t: t, ws: ws, srv: srv, ts: ts}
}

// browser is a client that visited the URL with the token: it holds the
// cookie. It does not follow redirects.
func (f *fixture) browser() *http.Client {
	f.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(f.ts.URL + "/?token=" + url.QueryEscape(f.srv.token))
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		f.t.Fatalf("visit with the token: %s", resp.Status)
	}
	return c
}

// get fetches path and returns the status and body.
func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f *fixture) page(c *http.Client, path string) string {
	f.t.Helper()
	code, body := get(f.t, c, f.ts.URL+path)
	if code != http.StatusOK {
		f.t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

func TestTokenRequired(t *testing.T) {
	f := newFixture(t)
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	paths := []string{"/", "/session?id=a", "/exchange?id=a1", "/search?q=sqlite", "/resume?session=b", "/health", "/forget?session=a", "/static/app.js", "/static/style.css", "/nope"}
	for _, p := range paths {
		if code, body := get(t, plain, f.ts.URL+p); code != http.StatusUnauthorized || strings.Contains(body, "sqlite") {
			t.Errorf("GET %s without a token: %d, want 401 and nothing of the memory\n%s", p, code, body)
		}
		u, _ := url.Parse(f.ts.URL + p)
		q := u.Query()
		q.Set("token", "wrong")
		u.RawQuery = q.Encode()
		if code, _ := get(t, plain, u.String()); code != http.StatusForbidden {
			t.Errorf("GET %s with a wrong token: %d, want 403", u.RequestURI(), code)
		}
		req, _ := http.NewRequest("GET", f.ts.URL+p, nil)
		req.AddCookie(&http.Cookie{Name: f.srv.cookie, Value: "wrong"})
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s with a wrong cookie: %d, want 403", p, resp.StatusCode)
		}
	}
	if code, _ := get(t, plain, f.ts.URL+"/?token="); code != http.StatusUnauthorized {
		t.Errorf("empty token: %d, want 401", code)
	}
	resp, err := plain.PostForm(f.ts.URL+"/forget", url.Values{"session": {"a"}, "confirm": {"1"}, "csrf": {f.srv.csrf}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /forget without a token: %d, want 401", resp.StatusCode)
	}
}

// TestTokenBecomesCookie: the URL's token sets an HttpOnly, SameSite=Strict
// cookie and leaves the address bar; the cookie then opens every page.
func TestTokenBecomesCookie(t *testing.T) {
	f := newFixture(t)
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := plain.Get(f.ts.URL + "/search?q=sqlite&token=" + url.QueryEscape(f.srv.token))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/search?q=sqlite" {
		t.Fatalf("%s to %q; want 303 to /search?q=sqlite", resp.Status, resp.Header.Get("Location"))
	}
	sc := resp.Header.Get("Set-Cookie")
	for _, want := range []string{f.srv.cookie + "=" + f.srv.token, "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %q", sc, want)
		}
	}
	c := f.browser()
	for _, p := range []string{"/", "/session?id=a", "/exchange?id=a1", "/search?q=sqlite", "/resume?session=b", "/health", "/static/app.js"} {
		f.page(c, p)
	}
}

// TestForeignHostRefused: a request naming another host (a DNS rebinding:
// evil.example resolving to 127.0.0.1) is refused, token or not.
func TestForeignHostRefused(t *testing.T) {
	f := newFixture(t)
	c := f.browser()
	for _, host := range []string{"evil.example", "evil.example:" + f.ts.URL[strings.LastIndex(f.ts.URL, ":")+1:], "127.0.0.1.nip.io", "127.0.0.1:1"} {
		for _, p := range []string{"/", "/?token=" + url.QueryEscape(f.srv.token), "/session?id=a"} {
			req, _ := http.NewRequest("GET", f.ts.URL+p, nil)
			req.Host = host
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(string(b), "sqlite") || resp.Header.Get("Set-Cookie") != "" {
				t.Errorf("Host %q, GET %s: %d, want 421 and nothing else", host, p, resp.StatusCode)
			}
		}
	}
	// Its own names are accepted.
	port := f.ts.URL[strings.LastIndex(f.ts.URL, ":")+1:]
	req, _ := http.NewRequest("GET", f.ts.URL+"/", nil)
	req.Host = "localhost:" + port
	req.AddCookie(&http.Cookie{Name: f.srv.cookie, Value: f.srv.token})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Host localhost:%s: %d, want 200", port, resp.StatusCode)
	}
}

// TestForgetNeedsCSRF: forgetting is a POST with the forms' CSRF token,
// from the viewer's own origin, confirmed; anything else changes nothing.
func TestForgetNeedsCSRF(t *testing.T) {
	f := newFixture(t)
	c := f.browser()
	stillThere := func() bool {
		return strings.Contains(f.page(c, "/"), `data-session="c"`)
	}
	post := func(form url.Values, origin string) int {
		req, _ := http.NewRequest("POST", f.ts.URL+"/forget", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	refused := []struct {
		name   string
		form   url.Values
		origin string
		code   int
	}{
		{"no csrf token", url.Values{"session": {"c"}, "confirm": {"1"}}, "", http.StatusForbidden},
		{"wrong csrf token", url.Values{"session": {"c"}, "confirm": {"1"}, "csrf": {"x" + f.srv.csrf}}, "", http.StatusForbidden},
		{"the access token as csrf", url.Values{"session": {"c"}, "confirm": {"1"}, "csrf": {f.srv.token}}, "", http.StatusForbidden},
		{"foreign origin", url.Values{"session": {"c"}, "confirm": {"1"}, "csrf": {f.srv.csrf}}, "http://evil.example", http.StatusForbidden},
		{"not confirmed", url.Values{"session": {"c"}, "csrf": {f.srv.csrf}}, "", http.StatusBadRequest},
	}
	for _, tc := range refused {
		if code := post(tc.form, tc.origin); code != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.code)
		}
		if !stillThere() {
			t.Fatalf("%s: session c was forgotten", tc.name)
		}
	}
	if code, _ := get(t, c, f.ts.URL+"/forget?session=c&confirm=1&csrf="+url.QueryEscape(f.srv.csrf)); code != http.StatusOK || !stillThere() {
		t.Fatalf("a GET forgot (or failed: %d)", code)
	}
	if code := post(url.Values{"session": {"c"}, "confirm": {"1"}, "csrf": {f.srv.csrf}}, f.ts.URL); code != http.StatusOK {
		t.Fatalf("forget with the csrf token: %d", code)
	}
	if stillThere() {
		t.Fatal("session c is still listed after a confirmed forget")
	}
}

var (
	inlineScript = regexp.MustCompile(`(?is)<script(?:\s[^>]*)?>\s*[^<\s]`)
	eventAttr    = regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	styleAttr    = regexp.MustCompile(`(?i)\sstyle\s*=`)
	externalRef  = regexp.MustCompile(`(?i)(src|href|action)="(https?:)?//`)
)

// TestEscapedAndNoInlineScript: a logged exchange holding <script> shows
// as text; no page has an inline script, an event handler, an inline
// style or an external resource, and each carries the strict CSP.
func TestEscapedAndNoInlineScript(t *testing.T) {
	f := newFixture(t)
	c := f.browser()
	for _, p := range []string{"/", "/session?id=c", "/exchange?id=c1", "/search?q=render+this&mode=bm25", "/resume?session=c&include_current=1", "/health", "/doctor", "/forget?session=c", "/session?id=nope"} {
		req, _ := http.NewRequest("GET", f.ts.URL+p, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(b)
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<b>hi</b>") {
			t.Errorf("%s: stored markup rendered as markup", p)
		}
		for name, re := range map[string]*regexp.Regexp{"inline script": inlineScript, "event handler": eventAttr, "inline style": styleAttr, "external resource": externalRef} {
			if m := re.FindString(body); m != "" {
				t.Errorf("%s: %s: %q", p, name, m)
			}
		}
	}
	for _, p := range []string{"/session?id=c", "/exchange?id=c1"} {
		body := f.page(c, p)
		for _, want := range []string{"&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;", "&lt;b&gt;hi&lt;/b&gt;", `<span class="lang">go</span>`, "[REDACTED:"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", p, want)
			}
		}
		if strings.Contains(body, "abcdefghijklmnopqrstuvwxyz0123456789") {
			t.Errorf("%s shows the secret", p)
		}
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	srv, err := New(Config{Backend: engine.NewClient(workspace.At(t.TempDir()), hashEmbedder, nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:0", "nonsense"} {
		if ln, err := srv.Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) accepted", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		ln, err := srv.Listen(addr)
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		if !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") || !strings.HasPrefix(srv.URL(), "http://"+ln.Addr().String()+"/?token=") {
			t.Errorf("Listen(%q): %s, URL %s", addr, ln.Addr(), srv.URL())
		}
		ln.Close()
	}
}

// TestPages checks what each page shows of the fixture.
func TestPages(t *testing.T) {
	f := newFixture(t)
	c := f.browser()
	tests := []struct {
		path string
		want []string
		not  []string
	}{
		{"/", []string{`data-session="a"`, `data-session="b"`, `data-session="c"`, "claude-code", "chain of 2", `class="link-prev" href="/session?id=a"`,
			// what each session began with, escaped
			`<td class="opener" title="why is the sqlite database locked">why is the sqlite database locked</td>`,
			`>&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt; render this</td>`}, nil},
		{"/?q=kubernetes", []string{`<a class="hits" href="/search?mode=bm25&amp;q=kubernetes&amp;session=b"`}, nil},
		{"/?agent=claude-code", []string{`data-session="a"`, "1 session"}, []string{`data-session="b"`, `data-session="c"`}},
		{"/?agent=" + url.QueryEscape(noAgent), []string{`data-session="b"`, `data-session="c"`}, []string{`data-session="a"`}},
		{"/?q=kubernetes", []string{`data-session="b"`, "1 match"}, []string{`data-session="c"`, `data-session="a"`}},
		{"/?since=2026-03-02&until=2026-03-02", []string{`data-session="b"`}, []string{`data-session="a"`, `data-session="c"`}},
		{"/session?id=b", []string{"context reset: window full", `resumes <a href="/session?id=a">a</a>`, "deploy/pod.yaml", "index/db.go", "Files it touched (2)", `class="node" href="/session?id=a"`, "liveness probe"}, nil},
		{"/session?id=a", []string{"claude-code", `class="node" href="/session?id=b"`, "index/db.go"}, []string{`id="forget-chain"`}},
		{"/session?id=b", []string{`id="forget-chain" href="/forget?chain=1&amp;session=b"`, "Forget it and the sessions it resumes"}, nil},
		{"/exchange?id=b1", []string{"the kubernetes pod restarts", "b.jsonl:2"}, nil},
		{"/search?q=sqlite+lock&mode=bm25", []string{"<mark>sqlite</mark>", "<mark>lock</mark>", `class="score"`, "a.jsonl:1"}, []string{`id="nothing"`}},
		// Nothing in the session, a match outside it: said, with a link
		// to the search without the filters; never "the history does not
		// hold it".
		{"/search?q=sqlite&session=b&mode=bm25", []string{`id="nothing"`, "Nothing relevant in session b: none of the exchanges there matches",
			`id="outside"`, "Outside these filters, 1 exchange matches", `href="/search?mode=bm25&amp;q=sqlite"`}, []string{`class="result`, "does not hold it"}},
		{"/search?q=quantum+entanglement+photosynthesis", []string{`id="nothing"`, "Nothing relevant: no past exchange matches"}, []string{`class="result`}},
		// One word in common with one exchange, the rest about nothing:
		// its closest match, said to be weak (as `continuity search` does).
		{"/search?q=kubernetes+zygomorphic+bromeliad+xerophytic+tardigrade+cryptobiosis&mode=bm25",
			[]string{`id="weak"`, "no past exchange scores 0.200 or more", `<article class="result weak">`, `<span class="weak-tag">weak</span>`, "b.jsonl:2"},
			[]string{`id="nothing"`, `class="count"`}},
		// A date as until takes in that day (b1 is at 09:01 on it), as
		// the sessions page reads it.
		{"/search?q=kubernetes&until=2026-03-02&mode=bm25", []string{"b.jsonl:2", `value="2026-03-02"`}, []string{`id="nothing"`}},
		{"/search?q=kubernetes&until=2026-03-01&mode=bm25", []string{`id="nothing"`}, []string{"b.jsonl:2"}},
		{"/search?q=liveness+probe&mode=bm25", []string{"deploy/pod.yaml"}, nil},
		{"/resume?session=b&budget=2000", []string{`id="tokens"`, "# Resume context for session b", "in: chain", "out: in context", "why is the sqlite database locked"}, nil},
		{"/health", []string{"c.jsonl:2", "invalid JSON", `data-load="/doctor"`, "5 exchanges in 3 sessions", `<a href="#rejected">1 rejected line</a>`}, []string{"1 rejected lines"}},
		{"/resume", []string{`id="choose"`, `<a href="/resume?session=c">c</a>`}, []string{`id="tokens"`}},
		{"/doctor", []string{`id="doctor"`, "rejects", "WARN"}, nil},
		{"/forget?session=b&chain=1", []string{`name="chain" value="1"`, "2 sessions", `name="csrf" value="` + f.srv.csrf + `"`, "and the sessions it resumes?"}, nil},
	}
	for _, tc := range tests {
		body := f.page(c, tc.path)
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q", tc.path, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(body, w) {
				t.Errorf("%s holds %q", tc.path, w)
			}
		}
	}
	for _, p := range []string{"/session?id=nope", "/exchange?id=nope", "/search?q=x&session=nope", "/resume?session=nope", "/?since=yesterdayish", "/forget?session=nope"} {
		if code, body := get(t, c, f.ts.URL+p); code != http.StatusBadRequest || !strings.Contains(body, `class="error"`) {
			t.Errorf("GET %s: %d, want 400 with the error\n%s", p, code, body)
		}
	}
}

// TestResumeBudget: the preview at another budget is another pack, never
// over it.
func TestResumeBudget(t *testing.T) {
	f := newFixture(t)
	c := f.browser()
	tokens := regexp.MustCompile(`id="tokens">(\d+)<`)
	var prev string
	for _, budget := range []int{2000, 120} {
		body := f.page(c, fmt.Sprintf("/resume?session=b&budget=%d&query=sqlite", budget))
		m := tokens.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("budget %d: no token count", budget)
		}
		var n int
		fmt.Sscan(m[1], &n)
		if n > budget || m[1] == prev {
			t.Errorf("budget %d: %s tokens (before: %s)", budget, m[1], prev)
		}
		prev = m[1]
	}
}

func TestRichText(t *testing.T) {
	tests := []struct {
		in   string
		hl   string
		want string
	}{
		{"plain <b>", "", `<div class="prose">plain &lt;b&gt;</div>`},
		{"a `x<y` b", "", `<div class="prose">a <code>x&lt;y</code> b</div>`},
		{"```go fmt.Println()``` inline", "", `<div class="prose"><code>go fmt.Println()</code> inline</div>`},
		{"unclosed ` tick", "", "<div class=\"prose\">unclosed ` tick</div>"},
		{"see:\n```sh\nrm -rf /tmp/x && echo \"<ok>\"\n```\ndone", "", `<div class="prose">see:</div><pre class="code"><span class="lang">sh</span><code>rm -rf /tmp/x &amp;&amp; echo &#34;&lt;ok&gt;&#34;</code></pre><div class="prose">done</div>`},
		{"```\nopen fence to the end\n", "", `<pre class="code"><code>open fence to the end` + "\n" + `</code></pre>`},
		{"```lang\" onload=\"x\nbody\n```", "", `<pre class="code"><span class="lang">lang&#34; onload=&#34;x</span><code>body</code></pre>`},
		{"The Webhooks retried", "webhook retry", `<div class="prose">The <mark>Webhooks</mark> <mark>retried</mark></div>`},
		{"<mark>x</mark> webhook", "webhook", `<div class="prose">&lt;<mark>mark</mark>&gt;x&lt;/<mark>mark</mark>&gt; <mark>webhook</mark></div>`},
	}
	for _, tc := range tests {
		var hl map[string]bool
		if tc.hl != "" {
			hl = highlights(tc.hl)
		}
		if tc.hl == "webhook" {
			hl["mark"] = true // a highlighted word that is also a tag name
		}
		if got := string(richText(tc.in, hl)); got != tc.want {
			t.Errorf("richText(%q):\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// FuzzRichText: whatever the text, the markup is richText's own: every
// '<' of the output opens one of its tags.
func FuzzRichText(f *testing.F) {
	for _, s := range []string{"a `b` c", "```go\nx\n```", "<script>", "``` ` ``", "~~~\n<x>\n~~~~", "\xff<\x00"} {
		f.Add(s, "b x")
	}
	allowed := regexp.MustCompile(`^</?(div class="prose"|div|pre class="code"|pre|code|span class="lang"|span|mark)>`)
	f.Fuzz(func(t *testing.T, text, query string) {
		out := string(richText(text, highlights(query)))
		for i := strings.IndexByte(out, '<'); i >= 0; i = strings.IndexByte(out, '<') {
			if !allowed.MatchString(out[i:]) {
				t.Fatalf("foreign markup at %q in %q", out[i:min(len(out), i+30)], out)
			}
			out = out[i+1:]
		}
	})
}

func TestTimeSpan(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct{ first, last, want string }{
		{"2026-11-21T12:00:30Z", "2026-11-21T12:00:50Z", "2026-11-21 12:00"},
		{"2026-11-21T12:00:00Z", "2026-11-21T12:10:00Z", "2026-11-21 12:00–12:10"},
		{"2026-11-21T23:00:00Z", "2026-11-22T01:00:00Z", "2026-11-21 23:00 → 2026-11-22 01:00"},
		{"2026-11-21T12:00:00+02:00", "2026-11-21T13:30:00+02:00", "2026-11-21 10:00–11:30"}, // shown in UTC
	}
	for _, tc := range tests {
		if got := timeSpan(at(tc.first), at(tc.last)); got != tc.want {
			t.Errorf("timeSpan(%s, %s) = %q, want %q", tc.first, tc.last, got, tc.want)
		}
	}
}

// TestHealthRejectCounts: the health page counts rejected lines as status
// and doctor do (the lines not valid) and names apart what 'continuity
// rejects' also lists: here an identical replay of a line already
// indexed. Before, the page counted every listed line (2 rejected lines).
func TestHealthRejectCounts(t *testing.T) {
	f := newFixture(t)
	replay := strings.SplitAfter(fixtureLogs["claude-code-a.jsonl"], "\n")[0]
	lf, err := os.OpenFile(filepath.Join(f.ws.Logs, "replayed.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lf.WriteString(replay); err != nil {
		t.Fatal(err)
	}
	lf.Close()
	emb, err := hashEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(f.ws, engine.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	e.Close()
	st, err := engine.NewClient(f.ws, hashEmbedder, nil).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rejected.Invalid != 1 || st.Rejected.Replayed != 1 {
		t.Fatalf("status: %+v rejects %d, want 1 invalid and 1 replay", st.Rejected, st.Rejects)
	}
	body := f.page(f.browser(), "/health")
	for _, want := range []string{`<a href="#rejected">1 rejected line</a>`, `id="rejects-also"`, "1 identical replay of lines already indexed", "replayed.jsonl:1"} {
		if !strings.Contains(body, want) {
			t.Errorf("/health lacks %q", want)
		}
	}
	if strings.Contains(body, "2 rejected lines") {
		t.Error("/health counts the replay as a rejected line")
	}
}
