package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP server's stdin, one JSON-RPC message a line. The SDK's stdio
// transport decodes a stream of JSON values and ends the session at the
// first that is not one (or not a JSON-RPC message): one stray line from
// a client, or a truncated request, would end the server without an
// answer. So stdin is read a line at a time first: a line that is not
// JSON is answered with a parse error (-32700), one that is JSON but not
// a JSON-RPC message with an invalid request (-32600), both with id null
// (or the request's id when it has one), and left out; the server goes on
// with the next line.
//
// The SDK also ends the session as soon as stdin ends, dropping the
// answers to the requests still running: a client that writes its
// requests and closes its end (printf ... | continuity mcp) would get few
// of them. So the end of stdin is handed over only once every request
// read has been answered (or the Stdin's drain time has passed).

// maxLine bounds one line of stdin, as the SDK bounds a message.
const maxLine = mcp.DefaultMaxLineLength

// Stdout serialises writes to stdout (the SDK writes each message with
// one Write, and so do the answers to refused lines), and keeps count of
// the requests read that are not answered yet.
type Stdout struct {
	mu       sync.Mutex
	w        io.Writer
	open     map[jsonrpc.ID]bool // requests handed to the SDK, not answered yet
	answered chan struct{}       // closed and replaced at each answer
}

// NewStdout writes the server's messages to w, one a line, counting the
// requests still unanswered.
func NewStdout(w io.Writer) *Stdout {
	return &Stdout{w: w, open: map[jsonrpc.ID]bool{}, answered: make(chan struct{})}
}

func (o *Stdout) Write(p []byte) (int, error) {
	var resp *jsonrpc.Response
	if msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(p)); err == nil {
		resp, _ = msg.(*jsonrpc.Response)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.w.Write(p)
	if resp != nil && o.open[resp.ID] {
		delete(o.open, resp.ID)
		close(o.answered)
		o.answered = make(chan struct{})
	}
	return n, err
}

// request records a request handed to the SDK, to be answered.
func (o *Stdout) request(id jsonrpc.ID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.open[id] = true
}

// drain waits until every request recorded is answered, or until the
// deadline; false when some are not.
func (o *Stdout) drain(deadline time.Time) bool {
	for {
		o.mu.Lock()
		n, answered := len(o.open), o.answered
		o.mu.Unlock()
		if n == 0 {
			return true
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return false
		}
		select {
		case <-answered:
		case <-time.After(wait):
		}
	}
}

// Stdin hands the SDK the lines of r that are JSON-RPC messages, and
// answers the others on out.
type Stdin struct {
	r       *bufio.Reader
	out     *Stdout
	log     *slog.Logger
	line    int    // lines read
	pending []byte // the part of a message line (with its '\n') not read yet
	err     error  // the reader's error, once its last line is handed over
	drain   time.Duration
}

// NewStdin reads the messages of r, answering those that are not
// JSON-RPC requests on out. Once r ends, it waits up to drain for the
// answers to the requests read (a tool call's time limit and a margin)
// before it says so to the SDK.
func NewStdin(r io.Reader, out *Stdout, log *slog.Logger, drain time.Duration) *Stdin {
	return &Stdin{r: bufio.NewReaderSize(r, 64<<10), out: out, log: log, drain: drain}
}

// Read implements io.Reader.
func (s *Stdin) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		line, err := s.next()
		if err != nil {
			s.err = err
			if line == nil && !s.out.drain(time.Now().Add(s.drain)) {
				s.log.Warn("mcp: stdin ended; some requests were not answered in time", "waited", s.drain)
			}
		}
		if line != nil {
			s.pending = append(line, '\n')
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// next returns the next line that is a JSON-RPC message (nil when the
// lines up to the end of r are not), and r's error once it ends.
func (s *Stdin) next() ([]byte, error) {
	for {
		line, tooLong, err := s.readLine()
		if len(line) > 0 || tooLong {
			s.line++
			if msg := s.check(line, tooLong); msg != nil {
				return msg, err
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

// readLine reads one line without its "\n" (and "\r"); a line longer than
// maxLine is read to its end and dropped (tooLong).
func (s *Stdin) readLine() (line []byte, tooLong bool, err error) {
	for {
		frag, err := s.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > maxLine+2 {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		return line, tooLong, err
	}
}

// check returns line when it is a JSON-RPC message; else it answers it
// and returns nil. Blank lines are skipped quietly.
func (s *Stdin) check(line []byte, tooLong bool) []byte {
	t := bytes.TrimSpace(line)
	if len(t) == 0 && !tooLong {
		return nil
	}
	var code int
	var id any
	var why string
	switch {
	case tooLong:
		code, why = jsonrpc.CodeParseError, fmt.Sprintf("parse error: line %d is longer than %d bytes", s.line, maxLine)
	case !json.Valid(t):
		var v any
		err := json.Unmarshal(t, &v)
		code, why = jsonrpc.CodeParseError, fmt.Sprintf("parse error: line %d is not JSON (%v): send one JSON-RPC message per line", s.line, err)
	case t[0] == '[':
		code, why = jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: line %d is a batch (a JSON array); send one JSON-RPC message per line", s.line)
	default:
		msg, err := jsonrpc.DecodeMessage(t)
		if err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
				s.out.request(req.ID)
			}
			return t
		}
		code, why = jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: line %d is not a JSON-RPC 2.0 message: %v", s.line, err)
		id = requestID(t)
	}
	s.log.Warn("mcp: a line of stdin is not a JSON-RPC message; answered with an error", "line", s.line, "code", code, "why", why)
	s.answer(code, id, why)
	return nil
}

// requestID is the id of a JSON object, when it is one a response can
// carry (a string or a number); nil otherwise.
func requestID(obj []byte) any {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(obj, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	switch m.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return m.ID
	}
	return nil
}

// answer writes an error response to a refused line.
func (s *Stdin) answer(code int, id any, message string) {
	resp := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, message
	data, err := json.Marshal(resp)
	if err != nil {
		s.log.Error("mcp: cannot encode an error response", "err", err)
		return
	}
	if _, err := s.out.Write(append(data, '\n')); err != nil {
		s.log.Warn("mcp: cannot write an error response", "err", err)
	}
}
