package server

import (
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
)

// ErrNoDaemon means no daemon answers on the socket: the caller should open
// the index itself.
var ErrNoDaemon = errors.New("no daemon is running for this workspace")

// Client calls a daemon's Server.
type Client struct {
	path string
	hc   *http.Client
}

// NewClient returns a client for the socket at path. It does not connect.
func NewClient(path string) *Client {
	return &Client{path: path, hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}}
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
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return ErrNoDaemon
		}
		return fmt.Errorf("server: call %s: %w", name, err)
	}
	defer hresp.Body.Close()
	data, err := readBody(hresp)
	if err != nil {
		return fmt.Errorf("server: read %s answer: %w", name, err)
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
