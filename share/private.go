package share

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PrivateFile, in the logs folder, lists what never leaves the machine:
// one session id a line, or "*" for the whole workspace. It is read at
// every shipping step.
const PrivateFile = ".private"

// Private is the set read from PrivateFile.
type Private struct {
	All      bool
	Sessions map[string]bool
}

// Has reports whether session is private.
func (p Private) Has(session string) bool { return p.All || p.Sessions[session] }

// ReadPrivate reads the private marks of the logs folder.
func ReadPrivate(logs string) (Private, error) {
	p := Private{Sessions: map[string]bool{}}
	f, err := os.Open(filepath.Join(logs, PrivateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("share: read the private marks: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "*":
			p.All = true
		default:
			p.Sessions[line] = true
		}
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("share: read the private marks: %w", err)
	}
	return p, nil
}

// MarkPrivate adds a session ("*": the whole workspace) to the private
// marks (a 0600 file); it reports whether it was new.
func MarkPrivate(logs, session string) (bool, error) {
	session = strings.TrimSpace(session)
	if session == "" || strings.ContainsAny(session, "\n\r") {
		return false, fmt.Errorf("share: not a session id: %q", session)
	}
	p, err := ReadPrivate(logs)
	if err != nil {
		return false, err
	}
	if session == "*" && p.All || p.Sessions[session] {
		return false, nil
	}
	f, err := os.OpenFile(filepath.Join(logs, PrivateFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return false, fmt.Errorf("share: mark private: %w", err)
	}
	if _, err := f.WriteString(session + "\n"); err != nil {
		f.Close()
		return false, fmt.Errorf("share: mark private: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return false, fmt.Errorf("share: mark private: %w", err)
	}
	return true, f.Close()
}

// List is the marks, sorted ("*" first).
func (p Private) List() []string {
	var out []string
	if p.All {
		out = append(out, "*")
	}
	s := make([]string, 0, len(p.Sessions))
	for k := range p.Sessions {
		s = append(s, k)
	}
	slices.Sort(s)
	return append(out, s...)
}
