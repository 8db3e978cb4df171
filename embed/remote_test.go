package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer speaks the embedding wire protocol, Ollama's or OpenAI's (as
// chromem-go v0.7.0 sends it), checks every request against it and
// records the texts it was sent.
type fakeServer struct {
	t        *testing.T
	provider string // ProviderOllama or ProviderOpenAI
	model    string
	apiKey   string // expected bearer token (openai)
	path     string // expected request path
	dim      int

	// dimFor, when set, overrides dim per text.
	dimFor func(text string) int
	// fail, when set, may write an error response and return true.
	fail func(w http.ResponseWriter, r *http.Request, text string) bool
	// delay, when set, holds each request (until the client gives up).
	delay time.Duration

	srv         *httptest.Server
	mu          sync.Mutex
	texts       []string
	inFlight    atomic.Int32
	maxInFlight atomic.Int32
}

func newFakeServer(t *testing.T, provider string, dim int) *fakeServer {
	f := &fakeServer{t: t, provider: provider, dim: dim, model: "nomic-embed-text", path: "/api/embeddings"}
	if provider == ProviderOpenAI {
		f.model, f.apiKey, f.path = "text-embedding-3-small", "sk-test-123", "/v1/embeddings"
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// config returns a Config pointing at the fake server.
func (f *fakeServer) config() Config {
	cfg := Config{Provider: f.provider, Model: f.model, URL: f.srv.URL + strings.TrimSuffix(f.path, "/embeddings")}
	if f.provider == ProviderOpenAI {
		cfg.APIKey = f.apiKey
	}
	return cfg
}

func (f *fakeServer) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.texts)
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxInFlight.Load()
		if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}

	// The request, exactly as chromem-go would send it.
	if r.Method != http.MethodPost || r.URL.Path != f.path || r.URL.RawQuery != "" {
		f.t.Errorf("request %s %s, want POST %s", r.Method, r.URL, f.path)
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("Content-Type %q, want application/json", ct)
	}
	if f.provider == ProviderOpenAI {
		if got := r.Header.Get("Authorization"); got != "Bearer "+f.apiKey {
			f.t.Errorf("Authorization %q, want %q", got, "Bearer "+f.apiKey)
		}
	} else if got := r.Header.Get("Authorization"); got != "" {
		f.t.Errorf("Ollama request with Authorization %q", got)
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.t.Errorf("request body: %v", err)
		http.Error(w, `{"error":"bad json"}`, http.StatusBadRequest)
		return
	}
	textKey := "prompt"
	if f.provider == ProviderOpenAI {
		textKey = "input"
	}
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"model", textKey}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		f.t.Errorf("request body fields %v, want %v", keys, want)
	}
	if body["model"] != f.model {
		f.t.Errorf("model %v, want %q", body["model"], f.model)
	}
	text, ok := body[textKey].(string)
	if !ok {
		f.t.Errorf("%s is %T, want a string", textKey, body[textKey])
	}
	f.mu.Lock()
	f.texts = append(f.texts, text)
	f.mu.Unlock()

	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.fail != nil && f.fail(w, r, text) {
		return
	}

	dim := f.dim
	if f.dimFor != nil {
		dim = f.dimFor(text)
	}
	vec := fakeVector(text, dim)
	w.Header().Set("Content-Type", "application/json")
	if f.provider == ProviderOllama {
		// POST /api/embeddings -> {"embedding":[...]}
		json.NewEncoder(w).Encode(map[string]any{"embedding": vec})
		return
	}
	// POST /v1/embeddings -> an OpenAI list object.
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data": []any{map[string]any{
			"object":    "embedding",
			"index":     0,
			"embedding": vec,
		}},
		"model": f.model,
		"usage": map[string]int{"prompt_tokens": 5, "total_tokens": 5},
	})
}

// fakeVector is a deterministic, non-normalised vector for text, like
// nomic-embed-text's (norm around 20).
func fakeVector(text string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	s := h.Sum64()
	v := make([]float32, dim)
	for i := range v {
		s = s*6364136223846793005 + 1442695040888963407
		v[i] = float32(int64(s>>40)%2001-1000) / 1000 * 1.3
	}
	return v
}

func unit(v []float32) []float32 {
	v = slices.Clone(v)
	if err := normalize(v); err != nil {
		panic(err)
	}
	return v
}

func closeTo(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return true
}

func mustNew(t *testing.T, cfg Config) Embedder {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return e
}

func TestRemoteBatchWire(t *testing.T) {
	for _, provider := range []string{ProviderOllama, ProviderOpenAI} {
		t.Run(provider, func(t *testing.T) {
			f := newFakeServer(t, provider, 768)
			e := mustNew(t, f.config())
			if d := e.Dimension(); d != 0 {
				t.Errorf("Dimension before any call = %d, want 0", d)
			}
			texts := []string{"first exchange", "", "second exchange", "  \n\t", "ünïcode – “quotes” and \"json\" \\ escapes", "last"}
			for i := range 20 {
				texts = append(texts, fmt.Sprintf("exchange number %d", i))
			}
			vecs, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if len(vecs) != len(texts) {
				t.Fatalf("got %d vectors for %d texts", len(vecs), len(texts))
			}
			sent := 0
			for i, text := range texts {
				if len(vecs[i]) != 768 {
					t.Fatalf("vector %d has length %d", i, len(vecs[i]))
				}
				if strings.TrimSpace(text) == "" {
					if slices.ContainsFunc(vecs[i], func(x float32) bool { return x != 0 }) {
						t.Errorf("blank text %d: want a zero vector", i)
					}
					continue
				}
				sent++
				if !closeTo(vecs[i], unit(fakeVector(text, 768))) {
					t.Errorf("vector %d is not the normalised server vector of %q", i, text)
				}
			}
			got := f.requests()
			if len(got) != sent {
				t.Errorf("server got %d requests, want %d (one per non-blank text)", len(got), sent)
			}
			slices.Sort(got)
			var want []string
			for _, text := range texts {
				if strings.TrimSpace(text) != "" {
					want = append(want, text)
				}
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("server got texts %q, want %q", got, want)
			}
			if d := e.Dimension(); d != 768 {
				t.Errorf("Dimension = %d, want 768", d)
			}
			wantID := "ollama:nomic-embed-text:768"
			if provider == ProviderOpenAI {
				wantID = "openai:" + strings.TrimPrefix(f.srv.URL, "http://") + "/text-embedding-3-small:768"
			}
			if id := e.Identity(); id != wantID {
				t.Errorf("Identity = %q, want %q", id, wantID)
			}
			if n := len(f.requests()); n != sent {
				t.Errorf("Identity with a known dimension sent a request")
			}
			if vecs, err := e.Embed(context.Background(), nil); err != nil || len(vecs) != 0 {
				t.Errorf("Embed(nil) = %v, %v", vecs, err)
			}
		})
	}
}

func TestRemoteConcurrencyBound(t *testing.T) {
	for _, conc := range []int{1, 3} {
		t.Run(fmt.Sprint(conc), func(t *testing.T) {
			f := newFakeServer(t, ProviderOllama, 16)
			f.delay = 30 * time.Millisecond
			cfg := f.config()
			cfg.Concurrency = conc
			e := mustNew(t, cfg)
			texts := make([]string, 9)
			for i := range texts {
				texts[i] = fmt.Sprintf("text %d", i)
			}
			start := time.Now()
			if _, err := e.Embed(context.Background(), texts); err != nil {
				t.Fatal(err)
			}
			if m := f.maxInFlight.Load(); m != int32(conc) {
				t.Errorf("max requests in flight = %d, want %d", m, conc)
			}
			if min := time.Duration(len(texts)/conc) * f.delay; time.Since(start) < min {
				t.Errorf("took %s, less than %s: not bounded", time.Since(start), min)
			}
		})
	}
}

func TestRemoteServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more: connection refused

	for _, cfg := range []Config{
		{Provider: ProviderOllama, Model: "nomic-embed-text", URL: "http://" + addr},
		{Provider: ProviderOpenAI, Model: "text-embedding-3-small", URL: "http://" + addr + "/v1"},
	} {
		t.Run(cfg.Provider, func(t *testing.T) {
			e := mustNew(t, cfg)
			// It fails by itself (connection refused), not by running out
			// of the time it is given.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := e.Embed(ctx, []string{"a", "b", "c"})
			if err == nil {
				t.Fatal("Embed succeeded against a closed port")
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Embed ran out of its minute instead of failing: %v", err)
			}
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("error %q does not wrap ErrUnavailable", err)
			}
			msg := err.Error()
			for _, want := range []string{"embed: " + cfg.Provider + " " + cfg.Model, addr, "connection refused"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %q", msg, want)
				}
			}
			t.Log(msg)

			if id := e.Identity(); !strings.HasSuffix(id, ":?") {
				t.Errorf("Identity with the server down = %q, want a provisional :? identity", id)
			}
			if id, err := Resolve(context.Background(), e); err == nil || !errors.Is(err, ErrUnavailable) {
				t.Errorf("Resolve = %q, %v; want ErrUnavailable", id, err)
			}
		})
	}
}

func TestRemoteHTTPError(t *testing.T) {
	tests := []struct {
		name       string
		provider   string
		status     int
		body       string
		wantStatus int
		wantBody   string
	}{
		{
			name: "ollama model not pulled", provider: ProviderOllama,
			status: http.StatusNotFound, body: `{"error":"model \"nomic-embed-text\" not found, try pulling it first"}`,
			wantStatus: 404, wantBody: `model "nomic-embed-text" not found, try pulling it first`,
		},
		{
			name: "openai bad key", provider: ProviderOpenAI,
			status: http.StatusUnauthorized,
			body: `{
  "error": {
    "message": "Incorrect API key provided: sk-test-123. You can find your API key at https://platform.openai.com/account/api-keys.",
    "type": "invalid_request_error",
    "param": null,
    "code": "invalid_api_key"
  }
}`,
			wantStatus: 401, wantBody: "Incorrect API key provided: sk-test-123.",
		},
		{
			name: "plain text 500", provider: ProviderOllama,
			status: http.StatusInternalServerError, body: "llama runner process has terminated: signal: killed\n",
			wantStatus: 500, wantBody: "llama runner process has terminated: signal: killed",
		},
		{
			name: "long body cut", provider: ProviderOpenAI,
			status: http.StatusBadGateway, body: strings.Repeat("upstream exploded ", 200),
			wantStatus: 502, wantBody: "upstream exploded upstream exploded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, tt.provider, 8)
			f.fail = func(w http.ResponseWriter, r *http.Request, text string) bool {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
				return true
			}
			e := mustNew(t, f.config())
			texts := []string{"x", "y", "z", "w", "v"}
			_, err := e.Embed(context.Background(), texts)
			if err == nil {
				t.Fatal("Embed succeeded")
			}
			// Each text is sent at most once, and the first failure
			// stops the batch: no request is sent again to read the
			// error's body.
			got := f.requests()
			if len(got) == 0 || len(got) > DefaultConcurrency {
				t.Errorf("server got %d requests, want 1 to %d", len(got), DefaultConcurrency)
			}
			slices.Sort(got)
			if len(slices.Compact(got)) != len(got) {
				t.Errorf("a text was sent twice: %q", f.requests())
			}
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %q is not a *StatusError", err)
			}
			if se.StatusCode != tt.wantStatus || !strings.HasPrefix(se.Status, fmt.Sprint(tt.wantStatus)) {
				t.Errorf("status %d %q, want %d", se.StatusCode, se.Status, tt.wantStatus)
			}
			if !strings.Contains(se.Body, tt.wantBody) {
				t.Errorf("body excerpt %q does not contain %q", se.Body, tt.wantBody)
			}
			if len(se.Body) > excerptBytes+len("…") {
				t.Errorf("body excerpt has %d bytes", len(se.Body))
			}
			if !strings.HasSuffix(se.URL, f.path) {
				t.Errorf("URL %q, want …%s", se.URL, f.path)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "embed: "+tt.provider+" "+f.model+": HTTP ") || !strings.Contains(msg, tt.wantBody) {
				t.Errorf("unclear error %q", msg)
			}
			t.Log(msg)
		})
	}
}

// A failing server sees exactly one request per attempt, and the error
// shows its body: the body is read from the response that failed.
func TestRemoteErrorOneRequest(t *testing.T) {
	for _, provider := range []string{ProviderOllama, ProviderOpenAI} {
		t.Run(provider, func(t *testing.T) {
			f := newFakeServer(t, provider, 8)
			f.fail = func(w http.ResponseWriter, r *http.Request, text string) bool {
				http.Error(w, `{"error":"model not found"}`, http.StatusNotFound)
				return true
			}
			cfg := f.config()
			cfg.Concurrency = 1
			e := mustNew(t, cfg)
			for attempt := 1; attempt <= 3; attempt++ {
				_, err := e.Embed(context.Background(), []string{"a", "b", "c"})
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 404 || se.Body != "model not found" {
					t.Fatalf("attempt %d: error %v, want a 404 StatusError with the body", attempt, err)
				}
				if n := len(f.requests()); n != attempt {
					t.Fatalf("after %d attempts the server got %d requests (%q), want %d", attempt, n, f.requests(), attempt)
				}
			}
			// Probe (and so Resolve and Identity) is one attempt too.
			if err := e.(Prober).Probe(context.Background()); err == nil {
				t.Fatal("Probe succeeded")
			}
			if n := len(f.requests()); n != 4 {
				t.Errorf("Probe sent %d requests, want 1", n-3)
			}
		})
	}
}

func TestRemoteDimensionMismatch(t *testing.T) {
	t.Run("learned", func(t *testing.T) {
		f := newFakeServer(t, ProviderOllama, 8)
		f.dimFor = func(text string) int {
			if text == "odd one" {
				return 6
			}
			return 8
		}
		e := mustNew(t, f.config())
		if _, err := e.Embed(context.Background(), []string{"fine"}); err != nil {
			t.Fatal(err)
		}
		_, err := e.Embed(context.Background(), []string{"fine", "odd one", "also fine"})
		if !errors.Is(err, ErrDimensionMismatch) {
			t.Fatalf("error %v, want ErrDimensionMismatch", err)
		}
		if !strings.Contains(err.Error(), "6-dimensional") || !strings.Contains(err.Error(), "expected 8") {
			t.Errorf("unclear error %q", err)
		}
		if d := e.Dimension(); d != 8 {
			t.Errorf("Dimension changed to %d", d)
		}
	})
	t.Run("configured", func(t *testing.T) {
		f := newFakeServer(t, ProviderOpenAI, 8)
		cfg := f.config()
		cfg.Dimension = 1536
		e := mustNew(t, cfg)
		if id := e.Identity(); !strings.HasSuffix(id, "/text-embedding-3-small:1536") {
			t.Errorf("Identity with a configured dimension = %q", id)
		}
		if len(f.requests()) != 0 {
			t.Errorf("Identity probed although the dimension is configured")
		}
		_, err := e.Embed(context.Background(), []string{"hello"})
		if !errors.Is(err, ErrDimensionMismatch) || !strings.Contains(err.Error(), "configured") {
			t.Fatalf("error %v, want ErrDimensionMismatch naming the configured dimension", err)
		}
	})
}

func TestRemoteCancel(t *testing.T) {
	f := newFakeServer(t, ProviderOllama, 8)
	f.delay = time.Minute // hold every request until the client gives up
	e := mustNew(t, f.config())
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	// Held a minute, the requests would be answered: an error means the
	// cancellation ended the call.
	_, err := e.Embed(ctx, []string{"a", "b", "c", "d", "e", "f", "g", "h"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := len(f.requests()); n > DefaultConcurrency {
		t.Errorf("%d requests sent, want at most %d", n, DefaultConcurrency)
	}

	// Already cancelled: no request at all.
	before := len(f.requests())
	if _, err := e.Embed(ctx, []string{"z"}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if len(f.requests()) != before {
		t.Errorf("a request was sent with a cancelled context")
	}
}

func TestRemoteTimeout(t *testing.T) {
	f := newFakeServer(t, ProviderOpenAI, 8)
	f.delay = time.Minute
	cfg := f.config()
	cfg.Timeout = 100 * time.Millisecond
	e := mustNew(t, cfg)
	// Held a minute, the request would be answered: the error is the
	// timeout's.
	_, err := e.Embed(context.Background(), []string{"slow"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "within 100ms") {
		t.Fatalf("error %v, want a timeout naming 100ms", err)
	}
}

func TestRemoteBadResponses(t *testing.T) {
	f := newFakeServer(t, ProviderOllama, 8)
	f.fail = func(w http.ResponseWriter, r *http.Request, text string) bool {
		switch text {
		case "zero":
			fmt.Fprint(w, `{"embedding":[0,0,0,0,0,0,0,0]}`)
		case "empty":
			fmt.Fprint(w, `{"embedding":[]}`)
		case "garbage":
			fmt.Fprint(w, `<html>proxy login</html>`)
		default:
			return false
		}
		return true
	}
	e := mustNew(t, f.config())
	if _, err := e.Embed(context.Background(), []string{"zero"}); !errors.Is(err, ErrBadVector) {
		t.Errorf("zero vector: error %v, want ErrBadVector", err)
	}
	for _, text := range []string{"empty", "garbage"} {
		_, err := e.Embed(context.Background(), []string{text})
		if err == nil || !strings.HasPrefix(err.Error(), "embed: ollama nomic-embed-text: POST ") {
			t.Errorf("%s: error %v", text, err)
		}
	}
}

func TestRemoteProbeAndIdentity(t *testing.T) {
	f := newFakeServer(t, ProviderOllama, 384)
	e := mustNew(t, f.config())
	if id := e.Identity(); id != "ollama:nomic-embed-text:384" {
		t.Errorf("Identity = %q", id)
	}
	if got := f.requests(); !slices.Equal(got, []string{probeText}) {
		t.Errorf("Identity sent %q, want one probe", got)
	}
	e.Identity()
	if id, err := Resolve(context.Background(), e); err != nil || id != "ollama:nomic-embed-text:384" {
		t.Errorf("Resolve = %q, %v", id, err)
	}
	if len(f.requests()) != 1 {
		t.Errorf("probed again with a known dimension")
	}
	if err := e.(Prober).Probe(context.Background()); err != nil {
		t.Errorf("Probe: %v", err)
	}

	// A batch of blank texts needs the dimension: it probes.
	f2 := newFakeServer(t, ProviderOpenAI, 12)
	e2 := mustNew(t, f2.config())
	vecs, err := e2.Embed(context.Background(), []string{"", " "})
	if err != nil || len(vecs) != 2 || len(vecs[0]) != 12 {
		t.Fatalf("Embed(blanks) = %v, %v", vecs, err)
	}
	if got := f2.requests(); !slices.Equal(got, []string{probeText}) {
		t.Errorf("sent %q, want one probe", got)
	}
}

func TestRemoteURLs(t *testing.T) {
	// Ollama's API lives under /api; a bare host gets it.
	f := newFakeServer(t, ProviderOllama, 4)
	for _, u := range []string{f.srv.URL, f.srv.URL + "/", f.srv.URL + "/api/", f.srv.URL + "/api/embeddings"} {
		e := mustNew(t, Config{Provider: "Ollama", Model: f.model, URL: u})
		if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
			t.Errorf("URL %q: %v", u, err)
		}
	}
	g := newFakeServer(t, ProviderOpenAI, 4)
	for _, u := range []string{g.srv.URL, g.srv.URL + "/v1", g.srv.URL + "/v1/embeddings"} {
		e := mustNew(t, Config{Provider: ProviderOpenAI, Model: g.model, URL: u, APIKey: g.apiKey})
		if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
			t.Errorf("URL %q: %v", u, err)
		}
	}
}
