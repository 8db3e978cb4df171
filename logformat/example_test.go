package logformat_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/praxis-os/continuity/logformat"
)

func ExampleParse() {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC) // when the daemon read the line
	line := []byte(`{"type":"exchange","user":"What is \"O_APPEND\"?","ai":"An open flag.\nSee open(2).","files":["append.go"]}`)

	e, err := logformat.Parse(line, "session-7f3a.jsonl", now)
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Type, e.SessionID, e.SessionFromFile)
	fmt.Println(e.Timestamp.Format(time.RFC3339), e.TimestampInferred)
	fmt.Printf("%q %q %q\n", e.User, e.AI, e.Files)

	_, err = logformat.Parse([]byte(`{"type":"exchange","timestamp":"yesterday","user":"hi"}`), "session-7f3a.jsonl", now)
	var perr *logformat.Error
	if errors.As(err, &perr) {
		fmt.Println(perr.Kind, perr.Field, "|", err)
	}

	// Output:
	// exchange 7f3a true
	// 2025-03-04T05:06:07Z true
	// "What is \"O_APPEND\"?" "An open flag.\nSee open(2)." ["append.go"]
	// invalid_field timestamp | field "timestamp": not RFC 3339: "yesterday"
}

func ExampleEvent_MarshalLine() {
	e := logformat.Event{
		Type:      logformat.TypeExchange,
		Timestamp: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC),
		SessionID: "7f3a",
		User:      `say "hi"`,
		AI:        "hi\nthere",
	}
	line, err := e.MarshalLine()
	if err != nil {
		panic(err)
	}
	fmt.Print(string(line))
	// Output:
	// {"type":"exchange","timestamp":"2025-03-04T05:06:07Z","session_id":"7f3a","user":"say \"hi\"","ai":"hi\nthere"}
}
