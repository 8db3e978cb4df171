package logformat

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// benchLine builds a realistic exchange line of about size bytes: model
// text with code, quotes, newlines and some non-ASCII, files and metadata.
func benchLine(tb testing.TB, size int) []byte {
	user := "Why does `go test ./...` fail with \"undefined: Parse\" after I moved parse.go into logformat/? I'm on Go 1.26 — here's the error:\n\n    ./main.go:12:9: undefined: Parse\n\nCould you fix it?"
	const para = "The call in main.go still refers to `Parse` unqualified, but it now lives in package `logformat`.\n" +
		"Import it and qualify the call:\n\n```go\nimport \"github.com/praxis-os/continuity/logformat\"\n\n" +
		"ev, err := logformat.Parse(line, name, time.Now())\nif err != nil {\n\treturn fmt.Errorf(\"parse %s: %w\", name, err)\n}\n```\n\n" +
		"I also updated the test in main_test.go (the table uses `\\t` separators) — naïve copy-paste would have kept the old path. ✓\n"
	e := Event{Type: TypeExchange, Timestamp: time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC),
		SessionID: "sess-2025-03-04T05:06:07-7f3a", ID: "0b9f4c1e-8d2a-4e5b-9a7c-3f1e2d4c5b6a", User: user,
		Files:    []string{"main.go", "logformat/parse.go", "main_test.go"},
		Metadata: json.RawMessage(`{"model":"claude-sonnet","tokens":{"in":1834,"out":412},"tools":["read_file","edit_file"],"latency_ms":2310.5}`)}
	base, err := e.MarshalLine()
	if err != nil {
		tb.Fatal(err)
	}
	// Add paragraphs while they fit, then plain text to reach size.
	var ai strings.Builder
	line := base
	for {
		e.AI = ai.String() + para
		next, err := e.MarshalLine()
		if err != nil {
			tb.Fatal(err)
		}
		if len(next)-1 > size {
			break
		}
		ai.WriteString(para)
		line = next
	}
	ai.WriteString(strings.Repeat("x", size-(len(line)-1)))
	e.AI = ai.String()
	line, err = e.MarshalLine()
	if err != nil {
		tb.Fatal(err)
	}
	if len(line)-1 != size {
		tb.Fatalf("line is %d bytes, want %d", len(line)-1, size)
	}
	return line[:len(line)-1]
}

func BenchmarkParse(b *testing.B) {
	for _, size := range []int{2 << 10, 64 << 10} {
		line := benchLine(b, size)
		b.Run(fmt.Sprintf("%dB", len(line)), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(line, "session-x.jsonl", testNow); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkStdlibUnmarshal is a reference point: encoding/json decoding the
// same lines into a struct, without the duplicate-key check.
func BenchmarkStdlibUnmarshal(b *testing.B) {
	for _, size := range []int{2 << 10, 64 << 10} {
		line := benchLine(b, size)
		b.Run(fmt.Sprintf("%dB", len(line)), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				var w wireEvent
				if err := json.Unmarshal(line, &w); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

func BenchmarkMarshalLine(b *testing.B) {
	e, err := Parse(benchLine(b, 2<<10), "session-x.jsonl", testNow)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.MarshalLine(); err != nil {
			b.Fatal(err)
		}
	}
}
