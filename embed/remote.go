package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxis-os/continuity/internal/words"
)

// probeText is what Probe embeds.
const probeText = "continuity embedding probe"

// Bounds of an error response's body: what is read of it, and the excerpt
// of it an error shows.
const (
	errorBodyMax = 64 << 10
	excerptBytes = 512
)

// remote is an Embedder backed by an embedding server that embeds one text
// per HTTP request (Ollama's /api/embeddings, OpenAI's /v1/embeddings).
//
// It speaks the protocol itself, with the requests chromem-go's embedding
// functions send, rather than through them: they drop the body of an error
// response, which holds the useful part ("model not found, try pulling it
// first", "Incorrect API key provided"), and reading it would take sending
// the request again. Each text is sent once; a failure reports the body.
type remote struct {
	provider string // "ollama" or "openai", for messages
	model    string
	base     string // base URL, without "/embeddings"
	endpoint string // base + "/embeddings", the URL requests go to
	idPrefix string // identity without ":<dim>"
	hint     string // what to check when the server cannot be reached
	timeout  time.Duration
	conc     int
	expect   int // configured dimension, 0 if learned

	// encode makes the request body for a text, decode reads the vector
	// out of a 200 response's body; header is sent with each request.
	encode func(text string) ([]byte, error)
	decode func(body []byte) ([]float32, error)
	header http.Header
	client *http.Client

	dim     atomic.Int64 // known dimension, 0 until learned
	probeMu sync.Mutex   // serialises Identity's probes
}

func newRemote(r *remote, cfg Config) *remote {
	r.timeout = cfg.Timeout
	if r.timeout == 0 {
		r.timeout = DefaultTimeout
	}
	r.conc = cfg.Concurrency
	if r.conc == 0 {
		r.conc = DefaultConcurrency
	}
	r.expect = cfg.Dimension
	r.dim.Store(int64(cfg.Dimension))
	r.endpoint = r.base + "/embeddings"
	r.client = &http.Client{}
	return r
}

// Identity returns "<provider>:<model>:<dim>". While the dimension is
// unknown it probes the server (once per call, bounded by the timeout) and,
// if that fails, returns the provisional "<provider>:<model>:?".
func (r *remote) Identity() string {
	if d := r.dim.Load(); d > 0 {
		return r.idPrefix + ":" + strconv.FormatInt(d, 10)
	}
	r.probeMu.Lock()
	defer r.probeMu.Unlock()
	if r.dim.Load() == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		_ = r.Probe(ctx) // Resolve reports the error; here the identity says "?"
		cancel()
	}
	if d := r.dim.Load(); d > 0 {
		return r.idPrefix + ":" + strconv.FormatInt(d, 10)
	}
	return r.idPrefix + ":?"
}

// ProvisionalIdentity is Identity without contacting the server: with
// "?" for a dimension not known yet (see embed.ProvisionalIdentity).
func (r *remote) ProvisionalIdentity() string {
	if d := r.dim.Load(); d > 0 {
		return r.idPrefix + ":" + strconv.FormatInt(d, 10)
	}
	return r.idPrefix + ":?"
}

// Dimension returns the configured or learned dimension, or 0.
func (r *remote) Dimension() int { return int(r.dim.Load()) }

// Probe embeds a short fixed text: it checks that the server answers and
// that the model embeds, and learns or checks the dimension.
func (r *remote) Probe(ctx context.Context) error {
	_, err := r.Embed(ctx, []string{probeText})
	return err
}

// Embed embeds texts with up to Concurrency requests in flight, each
// bounded by Timeout. The first failure cancels the other requests and is
// returned. Texts holding only white space are not sent: they get a zero
// vector (which needs the dimension, so a batch of only such texts probes
// the server if the dimension is unknown).
func (r *remote) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	todo := make([]int, 0, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) != "" {
			todo = append(todo, i)
		}
	}
	if err := r.fanOut(ctx, len(todo), func(ctx context.Context, j int) error {
		v, err := r.embedOne(ctx, texts[todo[j]])
		out[todo[j]] = v
		return err
	}); err != nil {
		return nil, err
	}
	if len(todo) < len(texts) {
		if r.dim.Load() == 0 {
			if err := r.Probe(ctx); err != nil {
				return nil, err
			}
		}
		dim := r.Dimension()
		for i := range out {
			if out[i] == nil {
				out[i] = make([]float32, dim)
			}
		}
	}
	return out, nil
}

// fanOut calls fn for 0..n-1 on up to r.conc goroutines and returns the
// first error, after every call has returned.
func (r *remote) fanOut(parent context.Context, n int, fn func(context.Context, int) error) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		next, done atomic.Int64
		once       sync.Once
		first      error
		wg         sync.WaitGroup
	)
	for range min(r.conc, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				j := int(next.Add(1) - 1)
				if j >= n {
					return
				}
				if err := fn(ctx, j); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	if int(done.Load()) < n {
		return r.wrap(context.Cause(parent))
	}
	return nil
}

// embedOne embeds one non-blank text.
func (r *remote) embedOne(ctx context.Context, text string) ([]float32, error) {
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v, err := r.post(cctx, text)
	if err != nil {
		return nil, r.classify(ctx, cctx, err)
	}
	if err := r.learn(len(v)); err != nil {
		return nil, err
	}
	if err := normalize(v); err != nil {
		return nil, r.wrap(fmt.Errorf("%w: the server returned a zero or non-finite vector", err))
	}
	return v, nil
}

// learn checks a vector length against the known dimension, or makes it
// the known dimension.
func (r *remote) learn(n int) error {
	for {
		d := r.dim.Load()
		if d == 0 {
			if r.dim.CompareAndSwap(0, int64(n)) {
				return nil
			}
			continue
		}
		if int(d) == n {
			return nil
		}
		why := "the dimension learned from earlier responses; did the model change?"
		if r.expect > 0 {
			why = "the configured dimension"
		}
		return r.wrap(fmt.Errorf("%w: the server returned a %d-dimensional vector, expected %d (%s)", ErrDimensionMismatch, n, d, why))
	}
}

func (r *remote) wrap(err error) error {
	return fmt.Errorf("embed: %s %s: %w", r.provider, r.model, err)
}

// post sends the request for text, once, and returns the vector of a 200
// response, or a *StatusError with an excerpt of the body of any other.
// Its messages are chromem-go's for the same failures.
func (r *remote) post(ctx context.Context, text string) ([]float32, error) {
	body, err := r.encode(text)
	if err != nil {
		return nil, fmt.Errorf("couldn't marshal request body: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("couldn't create request: %w", err)
	}
	req.Header = r.header.Clone()
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("couldn't send request: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyMax))
		return nil, &StatusError{URL: r.endpoint, StatusCode: resp.StatusCode, Status: resp.Status, Body: excerpt(b)}
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("couldn't read response body: %w", err)
	}
	return r.decode(b)
}

// decodeJSON unmarshals a 200 response's body into v.
func decodeJSON(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("couldn't unmarshal response body: %w", err)
	}
	return nil
}

// errNoEmbedding is a 200 response without a vector.
var errNoEmbedding = errors.New("no embeddings found in the response")

// classify turns an error of post into a clear one. ctx is the batch
// context, cctx the request's.
func (r *remote) classify(ctx, cctx context.Context, err error) error {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var se *StatusError
	switch {
	case ctx.Err() != nil: // the caller gave up, or another request failed
		return r.wrap(context.Cause(ctx))
	case cctx.Err() != nil && errors.Is(err, context.DeadlineExceeded):
		return r.wrap(fmt.Errorf("no response from %s within %s (Config.Timeout): %w", r.endpoint, r.timeout, err))
	case errors.As(err, &dnsErr), errors.As(err, &opErr) && opErr.Op == "dial":
		return r.wrap(fmt.Errorf("%w at %s (%s): %w", ErrUnavailable, r.base, r.hint, err))
	case errors.As(err, &se):
		return r.wrap(se)
	}
	return r.wrap(fmt.Errorf("POST %s: %w", r.endpoint, err))
}

// excerpt extracts the message of a JSON error body ({"error":"..."} as
// Ollama sends, {"error":{"message":"..."}} as OpenAI sends) or else
// returns the body, white space collapsed, cut to excerptBytes.
func excerpt(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	s := ""
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var str string
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(e.Error, &str) == nil:
			s = str
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			s = obj.Message
		}
	}
	if s == "" {
		s = string(body)
	}
	s = strings.Join(strings.Fields(s), " ")
	if cut, more := words.Cut(s, excerptBytes); more {
		s = cut + "…"
	}
	return s
}
