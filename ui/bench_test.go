package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/workspace"
)

// EnvBenchWorkspace names a workspace prepared by `continuity-bench query
// --workspace DIR` for BenchmarkPages (the same as search's
// BenchmarkSearchWorkspace).
const EnvBenchWorkspace = "CONTINUITY_BENCH_WORKSPACE"

// BenchmarkPages measures each page of the viewer, as `daemon --ui`
// serves it, on a workspace of 100k exchanges: the daemon runs in this
// process (its socket, vector space, bm25 engine and resume cache) and
// the viewer asks it through its engine.Client, as the binary does. The
// target is each page within 200 ms (p95 reported); no test asserts it.
//
//	CONTINUITY_EVAL_DATA=../shared/data/longmemeval-s-dev go run -tags sqlite_fts5 ./cmd/continuity-bench query --lines 100000 --workspace /tmp/ws100k --prepare
//	CONTINUITY_BENCH_WORKSPACE=/tmp/ws100k go test -tags sqlite_fts5 -run '^$' -bench Pages -benchtime 40x ./ui
//
// No daemon may run on the workspace meanwhile.
func BenchmarkPages(b *testing.B) {
	root := os.Getenv(EnvBenchWorkspace)
	if root == "" {
		b.Skipf("set %s to a workspace prepared by continuity-bench query --workspace --prepare", EnvBenchWorkspace)
	}
	ws := workspace.At(root)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	emb, err := embed.New(embed.Config{})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	e, err := engine.Open(ws, engine.Options{Embedder: emb, Socket: true, ResumeCache: true})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	c := engine.NewClient(ws, func() (embed.Embedder, error) { return emb, nil }, nil)
	waitReady(b, ctx, c)
	b.Logf("daemon ready in %s", time.Since(start).Round(time.Millisecond))

	srv, err := New(Config{Backend: c, Workspace: root})
	if err != nil {
		b.Fatal(err)
	}
	srv.AllowHost("127.0.0.1:8421")
	h := srv.Handler()
	pages := benchPages(b, ctx, c)
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				path := p.paths[i%len(p.paths)]
				req := httptest.NewRequest("GET", "http://127.0.0.1:8421"+path, nil)
				req.AddCookie(&http.Cookie{Name: srv.cookie, Value: srv.token})
				w := httptest.NewRecorder()
				t0 := time.Now()
				h.ServeHTTP(w, req)
				lat = append(lat, time.Since(t0))
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s: %d\n%s", path, w.Code, w.Body.String())
				}
			}
			slices.Sort(lat)
			q := func(f float64) float64 {
				return float64(lat[min(len(lat)-1, int(f*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.95), "p95-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
		})
	}
}

// waitReady waits until the daemon answers with its vectors loaded and
// its bm25 engine built (the first start builds it in the background).
func waitReady(b *testing.B, ctx context.Context, c *engine.Client) {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st, err := c.Status(ctx)
		if err == nil && st.Daemon.Running && st.BM25 != nil && st.BM25.State == "ready" && st.FullTextPending == 0 {
			resp, err := c.Search(ctx, engine.SearchRequest{Query: "warm up", Limit: 1})
			if err == nil && resp.VectorsMissing == "" {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("the daemon is not ready after 5 minutes (%v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type benchPage struct {
	name  string
	paths []string
}

// benchPages are the requests measured, drawn from the workspace: the
// largest sessions, the longest chains, words its exchanges hold.
func benchPages(b *testing.B, ctx context.Context, c *engine.Client) []benchPage {
	all, err := c.Sessions(ctx)
	if err != nil {
		b.Fatal(err)
	}
	rows := slices.Clone(all.Sessions)
	var exchanges int64
	for _, r := range rows {
		exchanges += r.Exchanges
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Exchanges > rows[j].Exchanges })
	b.Logf("%d sessions, %d exchanges; the largest session has %d", len(rows), exchanges, rows[0].Exchanges)
	// Chain heads: sessions that resume one and that none resumes.
	var heads []string
	for _, r := range rows {
		if len(r.Resumes) > 0 && len(r.ResumedBy) == 0 {
			heads = append(heads, r.ID)
		}
	}
	if len(heads) == 0 {
		heads = []string{rows[0].ID}
	}
	queries := []string{"which restaurant did I like", "how long is the commute to work", "what did I buy for my sister's birthday",
		"the gym routine", "my favourite book", "trip to japan", "sqlite database locked", "when did I adopt the dog"}
	var sessions, middles, searches, resumes, texts []string
	for i, r := range rows[:min(8, len(rows))] {
		sessions = append(sessions, "/session?id="+url.QueryEscape(r.ID))
		pagesOf := int(r.Events+eventsPerPage-1) / eventsPerPage
		middles = append(middles, fmt.Sprintf("/session?id=%s&page=%d", url.QueryEscape(r.ID), max(1, pagesOf/2+i%3)))
	}
	budgets := []int{500, 1000, 2000, 3000, 4000, 6000, 8000}
	for i, q := range queries {
		searches = append(searches, "/search?q="+url.QueryEscape(q))
		texts = append(texts, "/?q="+url.QueryEscape(strings.Fields(q)[len(strings.Fields(q))-1]))
		head := heads[i%len(heads)]
		resumes = append(resumes, fmt.Sprintf("/resume?session=%s&budget=%d&query=%s", url.QueryEscape(head), budgets[i%len(budgets)], url.QueryEscape(q)))
	}
	var slider []string
	for _, bud := range budgets {
		slider = append(slider, fmt.Sprintf("/resume?session=%s&budget=%d", url.QueryEscape(heads[0]), bud))
	}
	ev, err := c.SessionPage(ctx, rows[0].ID, 0, 5)
	if err != nil || len(ev.Events) == 0 {
		b.Fatalf("a page of %s: %v", rows[0].ID, err)
	}
	return []benchPage{
		{"sessions", []string{"/", "/?page=2"}},
		{"sessions-text", texts},
		{"session-first", sessions},
		{"session-middle", middles},
		{"exchange", []string{"/exchange?id=" + url.QueryEscape(ev.Events[len(ev.Events)-1].EventID)}},
		{"search", searches},
		{"resume-query", resumes},
		{"resume-slider", slider},
		{"health", []string{"/health"}},
		{"doctor", []string{"/doctor"}},
		{"forget-confirm", []string{"/forget?session=" + url.QueryEscape(heads[0]) + "&chain=1"}},
	}
}
