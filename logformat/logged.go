package logformat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
)

// Logged is a line of a log that already carries the id of a line about
// to be appended (FindLogged).
type Logged struct {
	Line int    // 1-based line number in the file
	Text []byte // the line as written, without its "\n"
	// Same: the same event but for its timestamp, which a retry of
	// 'continuity log --id' or MCP's log_exchange stamps anew: a retry,
	// not another event under a used id.
	Same bool
}

// FindLogged looks in the log at path for a line with the id of line (a
// JSON object); nil when line has no id, the file does not exist or holds
// no such line. A producer that retries with the same id after a failure
// (the idempotency key's purpose) gets its first line back instead of a
// second one, which the index would take for an id reused with other
// content (its timestamp differs) and warn of as a producer's bug.
func FindLogged(path string, line []byte) (*Logged, error) {
	id, ok := lineID(line)
	if !ok {
		return nil, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for id %q in %s: %w", id, path, err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		text, err := r.ReadBytes('\n')
		if len(text) > 0 && text[len(text)-1] == '\n' { // complete lines only
			text = bytes.TrimRight(text, "\r\n")
			if other, ok := lineID(text); ok && other == id {
				return &Logged{Line: n, Text: text, Same: sameButTime(text, line)}, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("look for id %q in %s: %w", id, path, err)
		}
	}
}

// lineID is the "id" of a JSON object line, when it has a string one.
func lineID(line []byte) (string, bool) {
	if !bytes.Contains(line, []byte(`"id"`)) {
		return "", false
	}
	var v struct {
		ID *string `json:"id"`
	}
	if json.Unmarshal(line, &v) != nil || v.ID == nil || *v.ID == "" {
		return "", false
	}
	return *v.ID, true
}

// sameButTime reports whether two JSON object lines hold the same fields
// but for "timestamp".
func sameButTime(a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	delete(x, "timestamp")
	delete(y, "timestamp")
	return reflect.DeepEqual(x, y)
}
