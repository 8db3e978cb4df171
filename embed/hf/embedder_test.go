package hf

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/praxis-os/continuity/embed/internal/cores"
)

func newGolden(t *testing.T, name string, opts Options) *Embedder {
	t.Helper()
	e, err := New(goldenDir(t, name), opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestWindows: a text that fits is one window (what sentence-transformers
// reads); a longer one the fewest windows of equal size; past the chunk
// cap, the first windows of full size (cap 1: truncation); a prefix
// starts every window.
func TestWindows(t *testing.T) {
	long := strings.Repeat("exactly once indexing of every complete line ", 12) // 84 words
	e := newGolden(t, "tiny-bert-mean", Options{})                              // 32 tokens: 30 of text
	n := len(e.Model().Tokenizer().Encode(long))
	if n != 84 {
		t.Fatalf("%d tokens", n)
	}
	sizes := func(ws [][]int32) []int {
		var out []int
		for _, w := range ws {
			out = append(out, len(w))
		}
		return out
	}
	if got := sizes(e.Windows(long, false)); !slices.Equal(got, []int{28, 28, 28}) {
		t.Errorf("84 tokens in windows of 30: %v", got)
	}
	if got := sizes(e.Windows("hello world", false)); !slices.Equal(got, []int{5}) { // hel ##l ##o wor ##ld
		t.Errorf("a short text: %v", got)
	}
	for _, tc := range []struct {
		cap  int
		want []int
	}{{1, []int{30}}, {2, []int{30, 30}}, {3, []int{28, 28, 28}}} {
		c := newGolden(t, "tiny-bert-mean", Options{MaxChunks: tc.cap})
		ws := c.Windows(long, false)
		if got := sizes(ws); !slices.Equal(got, tc.want) {
			t.Errorf("cap %d: %v, want %v", tc.cap, got, tc.want)
		}
		all := e.Model().Tokenizer().Encode(long)
		if !slices.Equal(ws[0], all[:len(ws[0])]) {
			t.Errorf("cap %d: the first window is not the text's start", tc.cap)
		}
	}
	q := "query: "
	p := newGolden(t, "tiny-bert-mean", Options{QueryPrefix: &q})
	pre := p.Model().Tokenizer().Encode(q)
	ws := p.Windows(long, true)
	for _, w := range ws {
		if !slices.Equal(w[:len(pre)], pre) || len(w) > 30 {
			t.Errorf("a query window %v does not start with the prefix %v or is too long", w, pre)
		}
	}
	if got := sizes(p.Windows(long, false)); !slices.Equal(got, []int{28, 28, 28}) {
		t.Errorf("the query prefix applies to passages: %v", got)
	}
}

// TestEmbed: vectors are unit length, the same whether texts are embedded
// together or one by one, concurrently or not; a blank text gets a zero
// vector (Inspect embeds it: the reference vector of ""); a long text's
// vector is the normalised mean of its windows'.
func TestEmbed(t *testing.T) {
	ctx := context.Background()
	dir := goldenDir(t, "tiny-bert-cls")
	rows := readGolden(t, dir)
	e := newGolden(t, "tiny-bert-cls", Options{Threads: 2})
	var texts []string
	for _, r := range rows {
		texts = append(texts, r.Text)
	}
	all, err := e.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		one, err := e.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(one[0], all[i]); d > 1e-6 {
			t.Errorf("%.40q: batched and alone differ by %g", text, d)
		}
		if strings.TrimSpace(text) == "" {
			if slices.ContainsFunc(all[i], func(x float32) bool { return x != 0 }) {
				t.Errorf("%q: not a zero vector", text)
			}
			continue
		}
		if d := 1 - norm2(all[i]); d > 1e-5 || d < -1e-5 {
			t.Errorf("%.40q: norm² %v", text, norm2(all[i]))
		}
	}
	ins, err := e.Inspect(ctx, []string{""}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ins[0].Chunks[0], rows[0].InputIDs) || maxAbsDiff(ins[0].Vector, rows[0].Embedding) > 1e-5 {
		t.Errorf("Inspect(\"\") = %v, want the reference %v", ins[0].Chunks, rows[0].InputIDs)
	}
	// Concurrent calls share the model.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			got, err := e.Embed(ctx, texts[g:])
			if err != nil {
				t.Error(err)
				return
			}
			for i := range got {
				if d := maxAbsDiff(got[i], all[g+i]); d > 1e-6 {
					t.Errorf("goroutine %d: text %d differs by %g", g, g+i, d)
				}
			}
		})
	}
	wg.Wait()
	// The mean of the windows.
	long := strings.Repeat("the watcher tails every log file from its committed offset ", 20)
	in, err := e.Inspect(ctx, []string{long}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(in[0].Chunks) < 2 {
		t.Fatalf("%d windows", len(in[0].Chunks))
	}
	mean := make([]float32, e.Dimension())
	for _, c := range in[0].Chunks {
		v := make([]float32, e.Dimension())
		e.Model().forward(&workspace{}, []sequence{{c, make([]int32, len(c))}}, v, cores.Exec{Threads: 1})
		for j := range v {
			mean[j] += v[j]
		}
	}
	unit(mean)
	if d := maxAbsDiff(mean, in[0].Vector); d > 1e-6 {
		t.Errorf("a long text's vector is not the mean of its windows' (%g)", d)
	}
	if _, err := e.Embed(canceled(), texts); err == nil {
		t.Error("Embed ignores a cancelled context")
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func norm2(v []float32) float64 {
	var s float64
	for _, a := range v {
		s += float64(a) * float64(a)
	}
	return s
}

// TestPrefixesAndIdentity: a query is embedded with the query prefix, a
// passage with the passage prefix; the identity names the model's files,
// and changes with the chunk cap and the passage prefix (which change
// the stored vectors), not with the query prefix.
func TestPrefixesAndIdentity(t *testing.T) {
	ctx := context.Background()
	plain := newGolden(t, "tiny-bert-mean", Options{})
	q, p := "query: ", "passage: "
	e5 := newGolden(t, "tiny-bert-mean", Options{QueryPrefix: &q, PassagePrefix: &p})
	got, _ := e5.EmbedQueries(ctx, []string{"hello world"})
	want, _ := plain.Embed(ctx, []string{"query: hello world"})
	if d := maxAbsDiff(got[0], want[0]); d > 1e-6 {
		t.Errorf("a query is not embedded with its prefix (%g)", d)
	}
	got, _ = e5.Embed(ctx, []string{"hello world"})
	want, _ = plain.Embed(ctx, []string{"passage: hello world"})
	if d := maxAbsDiff(got[0], want[0]); d > 1e-6 {
		t.Errorf("a passage is not embedded with its prefix (%g)", d)
	}
	qOnly := newGolden(t, "tiny-bert-mean", Options{QueryPrefix: &q})
	c4 := newGolden(t, "tiny-bert-mean", Options{MaxChunks: 4})
	if !strings.HasPrefix(plain.Identity(), "hf:tiny-bert-mean@sha256-") || !strings.HasSuffix(plain.Identity(), ":64") {
		t.Errorf("identity %q", plain.Identity())
	}
	if qOnly.Identity() != plain.Identity() {
		t.Errorf("a query prefix changed the identity: %q", qOnly.Identity())
	}
	if e5.Identity() == plain.Identity() || c4.Identity() == plain.Identity() || !strings.Contains(c4.Identity(), "-c4:") {
		t.Errorf("identities %q %q %q", plain.Identity(), e5.Identity(), c4.Identity())
	}
	// A file changed: another identity.
	dir := filepath.Join(t.TempDir(), "m")
	if err := os.CopyFS(dir, os.DirFS(goldenDir(t, "tiny-bert-mean"))); err != nil {
		t.Fatal(err)
	}
	same, _ := New(dir, Options{})
	if strings.TrimPrefix(same.Identity(), "hf:m") != strings.TrimPrefix(plain.Identity(), "hf:tiny-bert-mean") {
		t.Errorf("a copy has another identity: %q %q", same.Identity(), plain.Identity())
	}
	cfg := filepath.Join(dir, fileSBert)
	os.Chmod(cfg, 0o600)
	os.WriteFile(cfg, []byte(`{"max_seq_length": 16}`), 0o600)
	other, _ := New(dir, Options{})
	if other.Identity() == same.Identity() {
		t.Error("a changed max_seq_length kept the identity")
	}
	// Default prefixes: the known model's, overridden by the folder's
	// prompts.
	e5k, _ := LookupKnown("intfloat/e5-small-v2")
	if q, p := other.Model().defaultPrefixes(e5k); q != "query: " || p != "passage: " {
		t.Errorf("e5 defaults %q %q", q, p)
	}
	os.WriteFile(filepath.Join(dir, fileSTConfig), []byte(`{"prompts": {"query": "Q: ", "document": "D: "}}`), 0o600)
	withPrompts, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if q, p := withPrompts.Prefixes(); q != "Q: " || p != "D: " {
		t.Errorf("prompts %q %q", q, p)
	}
}

// TestLocate: names resolve in the cache, folders as folders; a name that
// is not installed says how to pull it.
func TestLocate(t *testing.T) {
	cache := useCache(t)
	for _, name := range []string{"bge-small-en-v1.5", "BAAI/bge-small-en-v1.5", "owner/model", "custom"} {
		_, err := Locate(name)
		if err == nil || !strings.Contains(err.Error(), "continuity model pull "+name) || !strings.Contains(err.Error(), cache) {
			t.Errorf("Locate(%q): %v", name, err)
		}
	}
	if _, err := Locate("./no/such/folder"); err == nil || !strings.Contains(err.Error(), "model folder") {
		t.Errorf("a missing folder: %v", err)
	}
	if _, err := Locate("../x:y"); err == nil {
		t.Error("a bad name")
	}
	loc, err := Locate(goldenDir(t, "tiny-bert-cls"))
	if err != nil || loc.Name != "tiny-bert-cls" || loc.Manifest != nil {
		t.Errorf("a folder: %+v %v", loc, err)
	}
}

// TestNoSpecialTokens: a tokenizer without a post-processor adds no
// special tokens; a text with nothing to read then gets a zero vector,
// not a crash.
func TestNoSpecialTokens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	if err := os.CopyFS(dir, os.DirFS(goldenDir(t, "tiny-bert-mean"))); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fileTokenizer)
	b, _ := os.ReadFile(p)
	var tj map[string]any
	if err := json.Unmarshal(b, &tj); err != nil {
		t.Fatal(err)
	}
	tj["post_processor"] = nil
	b, _ = json.Marshal(tj)
	os.Chmod(p, 0o600)
	os.WriteFile(p, b, 0o600)
	e, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ins, err := e.Inspect(context.Background(), []string{"", "\u200b", "hello"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(ins[0].Chunks) != 0 || len(ins[1].Chunks) != 0 || norm2(ins[0].Vector) != 0 || len(ins[2].Chunks) != 1 || ins[2].Chunks[0][0] == 2 {
		t.Errorf("%+v", ins)
	}
}

// TestShardsSameVectors: a call cut into shards embedded in parallel (the
// background worker's batches), a query's call (each product shared among
// threads) and one thread give the same vectors, bit for bit, on both
// tiny models: each sequence is computed the same way in any batch.
func TestShardsSameVectors(t *testing.T) {
	ctx := context.Background()
	for _, name := range goldenModels {
		var texts []string
		for _, r := range readGolden(t, goldenDir(t, name)) {
			texts = append(texts, r.Text)
		}
		texts = append(texts, benchTexts(200, 16)...)
		texts = append(texts, benchTexts(10, 600)...) // several windows
		want, err := newGolden(t, name, Options{Threads: 1}).Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		e := newGolden(t, name, Options{Threads: 3})
		for kind, c := range map[string]context.Context{"sharded": ctx, "query": cores.Query(ctx)} {
			got, err := e.Embed(c, texts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("%s, %s: text %d differs from one thread's", name, kind, i)
				}
			}
		}
	}
}
