package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// ErrNoDaemon means no daemon answers on the socket: the caller should open
// the index itself.
var ErrNoDaemon = errors.New("no daemon is running for this workspace")

// Client calls a daemon's Server. It is safe for concurrent use.
//
// Each call is one HTTP/1.1 exchange on a connection of its own, written
// and read with net/http's Request.Write and ReadResponse, not through an
// http.Transport: the CLI makes one or two calls and exits, and a
// Transport's connection pool runs three goroutines a connection (the
// dial, a reader and a writer) that hand the request and the answer to
// each other. Without them a search from the shell takes about 1 ms less
// (1.9 in a minimal client; docs/performance.md, "CLI start and round
// trip").
type Client struct {
	path string
}

// NewClient returns a client for the socket at path. It does not connect.
func NewClient(path string) *Client {
	return &Client{path: path}
}

// Call sends req to the call named name and decodes the answer into resp.
// It returns ErrNoDaemon when nothing listens on the socket, and an *Error
// when the daemon answered with one.
func (c *Client) Call(ctx context.Context, name string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("server: encode %s request: %w", name, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://continuity/v1/"+name, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hresp, data, err := c.roundTrip(ctx, hreq)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return ErrNoDaemon
		}
		return fmt.Errorf("server: call %s: %w", name, err)
	}
	if hresp.StatusCode != http.StatusOK {
		e := &Error{Code: 1}
		if json.Unmarshal(data, e) != nil || e.Message == "" {
			e.Message = fmt.Sprintf("daemon answered %s", hresp.Status)
		}
		return e
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("server: decode %s answer: %w", name, err)
	}
	return nil
}

// roundTrip sends hreq on a new connection to the socket and reads the
// answer whole; the connection is closed after it (Connection: close).
// ctx bounds the whole exchange: once it is done (cancelled, or past its
// deadline) a read or write under way stops, and the error is ctx.Err().
func (c *Client) roundTrip(ctx context.Context, hreq *http.Request) (*http.Response, []byte, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	// Only once ctx is done (not at its deadline, which the connection
	// could reach a moment before ctx says so): the error is then ctx's.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	fail := func(err error) (*http.Response, []byte, error) {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, err
	}
	hreq.Close = true
	if err := hreq.Write(conn); err != nil {
		return fail(err)
	}
	hresp, err := http.ReadResponse(bufio.NewReader(conn), hreq)
	if err != nil {
		return fail(err)
	}
	defer hresp.Body.Close()
	data, err := readBody(hresp)
	if err != nil {
		return fail(err)
	}
	return hresp, data, nil
}

// maxPresized bounds the buffer allocated up front for an answer of a
// stated length; a longer one (or one of no stated length) is read as
// it comes.
const maxPresized = 64 << 20

// readBody reads an answer whole: into a buffer of its stated length
// when there is one (the daemon states it), without the doublings of
// io.ReadAll, whose fresh heap pages a one-shot CLI pays for in page
// faults.
func readBody(hresp *http.Response) ([]byte, error) {
	n := hresp.ContentLength
	if n < 0 || n > maxPresized {
		return io.ReadAll(hresp.Body)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(hresp.Body, data); err != nil {
		return nil, err
	}
	return data, nil
}
