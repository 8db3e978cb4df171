package resume

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/watcher"
)

// cacheWS is a workspace indexed through the real stack, with a resume
// source that keeps a Cache and one that does not.
type cacheWS struct {
	t      *testing.T
	root   string
	db     *index.DB
	cache  *Cache
	cached *IndexSource
	plain  *IndexSource
}

func newCacheWS(t *testing.T, files map[string][]string) *cacheWS {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".praxis-os", ".conversations"), 0o700); err != nil {
		t.Fatal(err)
	}
	w := &cacheWS{t: t, root: root}
	for name, lines := range files {
		w.write(name, lines...)
	}
	db, err := indexDir(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w.db = db
	w.cache = NewCache(CacheConfig{})
	w.cached = &IndexSource{DB: db, Ranker: LexicalRanker(db), Cache: w.cache}
	w.plain = &IndexSource{DB: db, Ranker: LexicalRanker(db)}
	return w
}

// write appends lines to a log of the workspace, as an agent does (>>).
func (w *cacheWS) write(name string, lines ...string) {
	w.t.Helper()
	f, err := os.OpenFile(filepath.Join(w.root, ".praxis-os", ".conversations", name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		w.t.Fatal(err)
	}
}

// appendAndIndex appends lines and indexes them (a watcher catching up on
// the same index).
func (w *cacheWS) appendAndIndex(name string, lines ...string) {
	w.t.Helper()
	w.write(name, lines...)
	wt, err := watcher.New(watcher.Config{Dir: filepath.Join(w.root, ".praxis-os", ".conversations"), NoNotify: true}, w.db)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := wt.CatchUp(ctx); err != nil {
		w.t.Fatal(err)
	}
}

// same builds the pack with and without the cache and fails unless both
// are identical, byte for byte (as JSON, text included). It returns the
// pack, or nil when both failed with the same error.
func (w *cacheWS) same(opts Options) *Pack {
	w.t.Helper()
	pc, errC := Build(ctx, w.cached, opts)
	pp, errP := Build(ctx, w.plain, opts)
	if (errC == nil) != (errP == nil) || errC != nil && errC.Error() != errP.Error() {
		w.t.Fatalf("%+v: with cache %v, without %v", opts, errC, errP)
	}
	if errC != nil {
		return nil
	}
	jc, _ := json.Marshal(pc)
	jp, _ := json.Marshal(pp)
	if !bytes.Equal(jc, jp) {
		w.t.Fatalf("%+v: the pack differs with the cache:\n--- with cache (%d tokens)\n%s\n--- without (%d tokens)\n%s", opts, pc.Tokens, pc.Text, pp.Tokens, pp.Text)
	}
	checkPack(w.t, pc)
	return pc
}

func line(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func exLine(session string, ts time.Time, user, ai string, files ...string) string {
	v := map[string]any{"type": "exchange", "session_id": session, "timestamp": ts.Format(time.RFC3339Nano), "user": user, "ai": ai}
	if len(files) > 0 {
		v["files"] = files
	}
	return line(v)
}

func resetLine(session string, ts time.Time) string {
	return line(map[string]any{"type": "context_reset", "session_id": session, "timestamp": ts.Format(time.RFC3339Nano)})
}

func linkLine(prev, next string, ts time.Time) string {
	return line(map[string]any{"type": "session_resume", "previous_session": prev, "new_session": next, "timestamp": ts.Format(time.RFC3339Nano)})
}

// variedTexts are exchanges' texts of many kinds: the LongMemEval
// conversations when present, prose, code in fences, long single lines,
// CRLF, non-Latin scripts, empty sides, lists.
func variedTexts(r *rand.Rand) func() (string, string) {
	var pairs [][2]string
	if data := evalData(); data != "" {
		logs, _ := filepath.Glob(filepath.Join(data, "logs", "*.jsonl"))
		for _, f := range logs[:min(len(logs), 2)] {
			fh, err := os.Open(f)
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(fh)
			sc.Buffer(nil, 1<<22)
			for sc.Scan() && len(pairs) < 400 {
				var ev struct{ Type, User, AI string }
				if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "exchange" {
					pairs = append(pairs, [2]string{ev.User, ev.AI})
				}
			}
			fh.Close()
		}
	}
	words := strings.Fields("parser error watcher commit sqlite budget token chain session resume fence postgres redis unique constraint deploy retry the a of to is we it fix test")
	prose := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				if i%11 == 0 {
					b.WriteString(". ")
				} else {
					b.WriteByte(' ')
				}
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	code := func() string {
		var b strings.Builder
		b.WriteString("Here is the fix:\n```go\n")
		for i := range 5 + r.IntN(40) {
			fmt.Fprintf(&b, "func check%d(v int) error {\n\tif v > %d { return errRange }\n\treturn nil\n}\n", i, i*7)
		}
		b.WriteString("```\nThat closes it. " + prose(20))
		return b.String()
	}
	return func() (string, string) {
		switch k := r.IntN(10); {
		case k < 3 && len(pairs) > 0:
			p := pairs[r.IntN(len(pairs))]
			return p[0], p[1]
		case k == 3:
			return prose(10), code()
		case k == 4:
			return prose(5), strings.Repeat(prose(30)+" ", 20) // one long line
		case k == 5:
			return "日本語のテスト " + prose(5), "Ответ: " + prose(40) + "\r\nsecond line\r\n- item one\n- item two\n/path/to/file.go\n"
		case k == 6:
			return "", prose(30)
		case k == 7:
			return prose(12), "" // no answer
		case k == 8:
			return "same question again", "same answer again" // duplicates
		default:
			return prose(5 + r.IntN(40)), prose(20 + r.IntN(200))
		}
	}
}

// variedWorkspace writes chains of many shapes: a 30-session chain, a short
// one, a cycle, a diamond, a long session with resets, out-of-order and
// equal timestamps, files.
func variedWorkspace(t *testing.T) *cacheWS {
	r := rand.New(rand.NewPCG(11, 12))
	texts := variedTexts(r)
	files := map[string][]string{}
	t1 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	session := func(id string, start time.Time, n int, prev ...string) {
		var lines []string
		for _, p := range prev {
			lines = append(lines, linkLine(p, id, start))
		}
		for i := range n {
			ts := start.Add(time.Duration(i+1) * time.Minute)
			if r.IntN(15) == 0 {
				ts = start.Add(-time.Duration(r.IntN(600)) * time.Minute) // out of order
			}
			if i > 0 && r.IntN(9) == 0 {
				lines = append(lines, resetLine(id, ts))
			}
			u, a := texts()
			var fs []string
			if r.IntN(3) == 0 {
				fs = []string{fmt.Sprintf("pkg%d/f%d.go", r.IntN(5), r.IntN(9)), "README.md"}
			}
			lines = append(lines, exLine(id, ts, u, a, fs...))
		}
		files["session-"+id+".jsonl"] = lines
	}
	for i := range 30 {
		var prev []string
		if i > 0 {
			prev = []string{fmt.Sprintf("a%02d", i-1)}
		}
		session(fmt.Sprintf("a%02d", i), t1.Add(time.Duration(i)*20*time.Hour), 3+r.IntN(10), prev...)
	}
	for i := range 5 {
		var prev []string
		if i > 0 {
			prev = []string{fmt.Sprintf("s%d", i-1)}
		}
		session(fmt.Sprintf("s%d", i), t1.Add(time.Duration(800+i*3)*time.Hour), 4+r.IntN(6), prev...)
	}
	session("x", t1.Add(900*time.Hour), 5, "y")
	session("y", t1.Add(901*time.Hour), 5, "x")
	session("g", t1.Add(910*time.Hour), 6)
	session("e", t1.Add(911*time.Hour), 6, "g")
	session("f", t1.Add(912*time.Hour), 6, "g")
	session("d", t1.Add(913*time.Hour), 6, "e", "f")
	session("solo", t1.Add(920*time.Hour), 150)
	return newCacheWS(t, files)
}

// TestCacheSamePacks: packs built with a Cache are byte for byte those
// built without, over varied chains, queries, budgets, options and
// tokenizers, with the cache cold, warm, and after its generations turned
// over.
func TestCacheSamePacks(t *testing.T) {
	w := variedWorkspace(t)
	sessions := []string{"a29", "a15", "a00", "s4", "s2", "x", "d", "solo", "nope"}
	queries := []string{"", "parser error", "postgres unique constraint", "check12 errRange", "日本語", "same question again", "zzz-nothing"}
	budgets := []int{1, 40, 300, 800, 2000, 6000}
	encs := []string{"", "o200k_base", "p50k_base"}
	r := rand.New(rand.NewPCG(3, 4))
	var all []Options
	for range 160 {
		o := Options{
			Session: sessions[r.IntN(len(sessions))], Query: queries[r.IntN(len(queries))],
			Budget: budgets[r.IntN(len(budgets))], IncludeCurrent: r.IntN(3) == 0,
			Encoding: encs[r.IntN(len(encs))],
		}
		if r.IntN(6) == 0 {
			o.MaxDepth = 1 + r.IntN(4)
		}
		if r.IntN(8) == 0 {
			o.Latest = true
		}
		all = append(all, o)
	}
	packs := 0
	for round := range 2 {
		for _, o := range all {
			if w.same(o) != nil {
				packs++
			}
		}
		st := w.cache.Stats()
		t.Logf("round %d: %+v", round, st)
		if round == 1 && (st.LayoutHits == 0 || st.EventHits == 0 || st.TimelineHits == 0) {
			t.Errorf("the cache was not used: %+v", st)
		}
	}
	if packs < len(all) {
		t.Logf("%d of %d option sets built a pack (the others failed alike)", packs/2, len(all))
	}
	// A cache too small to keep much: evictions on every pack.
	w.cache = NewCache(CacheConfig{TimelineEntries: 20, LayoutEntries: 30, EventBytes: 4096, CountEntries: 50, ShapeBytes: 2048})
	w.cached.Cache = w.cache
	for _, o := range all[:60] {
		w.same(o)
	}
	if n := w.cache.shapes.len(); n == 0 || n > 2048/shapeBase*2 {
		t.Errorf("%d shapes kept in 2 KiB", n)
	}
}

// TestCacheInvalidation: after each change to the index, the pack with a
// warm cache is the pack without, and shows the change.
func TestCacheInvalidation(t *testing.T) {
	t1 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	min := func(m int) time.Time { return t1.Add(time.Duration(m) * time.Minute) }
	w := newCacheWS(t, map[string][]string{
		"a.jsonl": {
			exLine("a", min(1), "how do we store sessions", "in sqlite with a wal"),
			exLine("a", min(2), "and the parser", "a line at a time"),
		},
		"b.jsonl": {
			linkLine("a", "b", min(10)),
			exLine("b", min(11), "resume the parser work", "the parser now skips blank lines"),
			resetLine("b", min(12)),
			exLine("b", min(13), "after the reset", "still in context"),
		},
		"c.jsonl": {
			exLine("c", min(5), "an unrelated session about deploys", "deploy with a blue green switch"),
		},
	})
	opts := Options{Session: "b", Query: "parser", Budget: 2000}
	warm := func() *Pack {
		t.Helper()
		w.same(opts)
		return w.same(opts) // the second from the warm cache
	}
	texts := func(p *Pack) string {
		var b strings.Builder
		for _, e := range p.Exchanges {
			b.WriteString(e.SessionID + ":" + e.User + "|")
		}
		return b.String()
	}
	p := warm()
	if got, want := texts(p), "a:how do we store sessions|a:and the parser|b:resume the parser work|"; got != want {
		t.Fatalf("before: %s, want %s", got, want)
	}

	t.Run("exchange appended", func(t *testing.T) {
		w.appendAndIndex("a.jsonl", exLine("a", min(3), "one more in a", "appended later"))
		p := warm()
		if !strings.Contains(texts(p), "a:one more in a|") {
			t.Errorf("the appended exchange is missing: %s", texts(p))
		}
	})
	t.Run("context reset", func(t *testing.T) {
		w.appendAndIndex("b.jsonl", exLine("b", min(14), "more work in b", "done"), resetLine("b", min(15)))
		p := warm()
		if !strings.Contains(texts(p), "b:after the reset|") || !strings.Contains(texts(p), "b:more work in b|") || p.InContext != 0 {
			t.Errorf("the new reset did not move the boundary: %s, in context %d", texts(p), p.InContext)
		}
	})
	t.Run("session link", func(t *testing.T) {
		w.appendAndIndex("b.jsonl", linkLine("c", "b", min(16)))
		p := warm()
		if len(p.Chain) != 3 || !strings.Contains(texts(p), "c:an unrelated session about deploys|") {
			t.Errorf("the new link did not extend the chain: %v %s", p.Chain, texts(p))
		}
	})
	t.Run("forget", func(t *testing.T) {
		flushes := w.cache.Stats().Flushes
		if _, err := w.db.DeleteSession(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		p := warm()
		if strings.Contains(texts(p), "a:") || strings.Contains(p.Text, "how do we store sessions") {
			t.Errorf("the forgotten session is still in the pack: %s", texts(p))
		}
		if st := w.cache.Stats(); st.Flushes != flushes+1 {
			t.Errorf("forget did not flush the cache: %+v", st)
		}
	})
	t.Run("fulltext rebuild", func(t *testing.T) {
		ft := filepath.Join(filepath.Dir(w.db.Path()), index.FullTextFileName)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(ft + suffix)
		}
		if rebuilt, err := w.db.CheckFullText(ctx); err != nil || !rebuilt {
			t.Fatalf("CheckFullText: %v, %v", rebuilt, err)
		}
		w.same(opts) // meanwhile: recency alone, alike
		for {
			n, err := w.db.IndexFullText(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		w.appendAndIndex("c.jsonl", exLine("c", min(6), "the parser after the rebuild", "found again"))
		p := warm()
		if !strings.Contains(texts(p), "c:the parser after the rebuild|") {
			t.Errorf("after the rebuild: %s", texts(p))
		}
	})
}

// TestCacheConcurrent: packs built at once by several goroutines sharing
// one Cache are those built without it (run with -race).
func TestCacheConcurrent(t *testing.T) {
	w := variedWorkspace(t)
	opts := []Options{
		{Session: "a29", Query: "parser error", Budget: 800},
		{Session: "s4", Budget: 2000},
		{Session: "d", Query: "postgres unique constraint", Budget: 300},
		{Session: "solo", Query: "check12 errRange", Budget: 6000, Encoding: "o200k_base"},
		{Latest: true, Budget: 500},
	}
	want := make([][]byte, len(opts))
	for i, o := range opts {
		p, err := Build(ctx, w.plain, o)
		if err != nil {
			t.Fatal(err)
		}
		want[i], _ = json.Marshal(p)
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for k := range 15 {
				i := (g + k) % len(opts)
				p, err := Build(ctx, w.cached, opts[i])
				if err != nil {
					errs <- err
					return
				}
				if got, _ := json.Marshal(p); !bytes.Equal(got, want[i]) {
					errs <- fmt.Errorf("%+v: the pack differs with the shared cache", opts[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestCacheSamePacksSearchRanker: with the daemon's ranking (the hybrid
// search, BM25 from the bm25 engine), whose candidates' texts come from
// the cache when there is one, packs with a Cache are byte for byte those
// without, cold and warm.
func TestCacheSamePacksSearchRanker(t *testing.T) {
	w := variedWorkspace(t)
	emb, err := embed.New(embed.Config{Provider: embed.ProviderHash})
	if err != nil {
		t.Fatal(err)
	}
	wk, err := embedding.New(embedding.Config{DB: w.db, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if err := wk.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	lex, err := lexicon.New(lexicon.Config{DB: w.db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lex.Close() })
	if err := lex.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := search.New(search.Config{DB: w.db, Embedder: emb, Vectors: wk.Space, Lexicon: lex})
	if err != nil {
		t.Fatal(err)
	}
	w.cached.Ranker, w.plain.Ranker = SearchRanker(s), SearchRanker(s)
	r := rand.New(rand.NewPCG(5, 6))
	sessions := []string{"a29", "a15", "s4", "d", "solo"}
	queries := []string{"parser error", "postgres unique constraint", "check12 errRange", "日本語", "same question again"}
	for round := range 2 {
		for range 40 {
			w.same(Options{Session: sessions[r.IntN(len(sessions))], Query: queries[r.IntN(len(queries))], Budget: []int{300, 2000}[r.IntN(2)]})
		}
		if st := w.cache.Stats(); round == 1 && st.EventHits == 0 {
			t.Errorf("the ranking did not read texts through the cache: %+v", st)
		}
	}
}

// The cache's timelines, kept compact and merged (few sessions) or laid
// end to end and sorted when they overlap (many), equal the index's:
// sessions interleaved in time, equal timestamps, resets, an empty and an
// unknown session, cold and warm.
func TestCacheTimelineEqualsIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	t0 := time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)
	var lines []string
	sessions := make([]string, 12)
	for k := range sessions {
		sessions[k] = fmt.Sprintf("s%02d", k)
	}
	for i := range 600 {
		s := sessions[r.IntN(len(sessions))]
		// Times repeat (minute steps over a short span) and go back
		// sometimes: clock skew between producers.
		ts := t0.Add(time.Duration(r.IntN(300)) * time.Minute)
		if i%17 == 0 {
			lines = append(lines, resetLine(s, ts))
			continue
		}
		lines = append(lines, exLine(s, ts, fmt.Sprintf("question %d", i), "answer"))
	}
	w := newCacheWS(t, map[string][]string{"log.jsonl": lines})
	cache := NewCache(CacheConfig{})
	for _, set := range [][]string{
		{"s00"}, {"s03", "s01"}, sessions[:5], sessions[:8], sessions, // 12 > mergeParts
		{"s02", "nobody", "s05"}, {"nobody"},
	} {
		want, err := w.db.Timeline(ctx, set)
		if err != nil {
			t.Fatal(err)
		}
		for _, pass := range []string{"cold", "warm"} {
			got, err := cache.timeline(ctx, w.db, set)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%v %s: %d entries, want %d", set, pass, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%v %s: entry %d is %+v, want %+v", set, pass, i, got[i], want[i])
				}
			}
		}
	}
}
