package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestStdin: the SDK reads only the lines that are JSON-RPC messages; each
// other line is answered on stdout with its error code and the request's
// id when it has one, and reading goes on.
func TestStdin(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tt := range []struct {
		name, in string
		passed   []string // the lines handed to the SDK
		codes    []int    // the errors answered, in order
		ids      []string
	}{
		{"only messages", ping + "\n", []string{ping}, nil, nil},
		{"not json", "not json\n" + ping + "\n", []string{ping}, []int{-32700}, []string{"null"}},
		{"truncated request", `{"jsonrpc":"2.0","id":2,"met` + "\n" + ping, []string{ping}, []int{-32700}, []string{"null"}},
		{"json but not json-rpc", `{"id":7,"hello":1}` + "\n" + ping + "\n", []string{ping}, []int{-32600}, []string{"7"}},
		{"a batch", `[` + ping + `]` + "\n", nil, []int{-32600}, []string{"null"}},
		{"blank lines skipped", "\n  \r\n" + ping + "\r\n", []string{ping}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			so := NewStdout(&out)
			in := NewStdin(strings.NewReader(tt.in), so, slog.New(slog.DiscardHandler), time.Millisecond)
			data, err := io.ReadAll(in)
			if err != nil {
				t.Fatal(err)
			}
			var passed []string
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if l != "" {
					passed = append(passed, l)
				}
			}
			if strings.Join(passed, "|") != strings.Join(tt.passed, "|") {
				t.Errorf("handed to the SDK %q, want %q", passed, tt.passed)
			}
			dec := json.NewDecoder(&out)
			for i, code := range tt.codes {
				var r struct {
					ID    json.RawMessage    `json:"id"`
					Error struct{ Code int } `json:"error"`
				}
				if err := dec.Decode(&r); err != nil {
					t.Fatalf("answer %d: %v (stdout %q)", i, err, out.String())
				}
				if r.Error.Code != code || string(r.ID) != tt.ids[i] {
					t.Errorf("answer %d: code %d id %s, want %d %s", i, r.Error.Code, r.ID, code, tt.ids[i])
				}
			}
			if dec.More() {
				t.Errorf("more answers than %d", len(tt.codes))
			}
		})
	}
}
