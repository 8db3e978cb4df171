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
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// TombstoneFile is the name the files, in the logs folder, that record
// the sessions `continuity forget` removed start with: one JSON object a
// line, appended. They live beside the logs, not in the cache, so that a
// forget outlives the index: a rebuild (the cache deleted, a migration, a
// new embedder, a restored backup) and an import read them and leave the
// session's old lines out. Each machine appends to its own,
// .forgotten.<machine> (TombstoneFileOf), so that two machines sharing
// the logs (a sync tool, a git repository) never write the same file;
// every file of the folder named .forgotten, .forgotten.<anything> or
// ".forgotten (...)" is read (TombstoneFiles): the others' forgets, the
// .forgotten of older versions, a sync tool's conflict copies of them.
// Their names do not end in .jsonl: they are not logs. They are private
// and git-ignored like the logs (the folder's .gitignore).
const TombstoneFile = ".forgotten"

// TombstoneFileOf is the tombstone file machine appends to.
func TombstoneFileOf(machine string) string {
	return TombstoneFile + "." + machine
}

// TombstoneFiles lists the tombstone files of dir, sorted by name (none:
// an empty list; no folder: none).
func TombstoneFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the forgotten sessions: %w", err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !(n == TombstoneFile || strings.HasPrefix(n, TombstoneFile+".") || strings.HasPrefix(n, TombstoneFile+" ")) ||
			strings.HasSuffix(n, ".tmp") {
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// Tombstone is one forget: the session, when it was forgotten (its lines
// without a timestamp, or timestamped at or before it, stay out), and the
// sessions it resumed when it was forgotten (a session that resumed it
// resumes those: forgetting the middle of a chain does not cut it).
type Tombstone struct {
	Session string    `json:"session"`
	At      time.Time `json:"forgotten_at"`
	Resumes []string  `json:"resumes,omitempty"`
}

// Covers reports whether an event of t's session, timestamped ts
// (inferred: it has none of its own), is part of what was forgotten.
func (t Tombstone) Covers(ts time.Time, inferred bool) bool {
	return inferred || !ts.After(t.At)
}

// ReadTombstones reads dir's tombstone files (TombstoneFiles; none: no
// tombstones), one per session: the latest forget, with every session any
// of its forgets resumed. A line that is not a tombstone is an error
// naming the file, the line and why: a forget that cannot be read must
// not let a forgotten session back in. An unfinished last line (a write
// cut short, a sync tool's copy taken mid-write) is left out: the forget
// it was recording is recorded again from the index.
func ReadTombstones(dir string) (map[string]Tombstone, error) {
	names, err := TombstoneFiles(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]Tombstone{}
	for _, n := range names {
		path := filepath.Join(dir, n)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since listed (a sync tool's rename)
		}
		if err != nil {
			return nil, fmt.Errorf("read the forgotten sessions: %w", err)
		}
		if err := readTombstones(path, data, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readTombstones adds the tombstones of one file (path, holding data) to
// out.
func readTombstones(path string, data []byte, out map[string]Tombstone) error {
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		data = data[:i+1]
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if IsBlank(line) {
			continue
		}
		var t Tombstone
		var fields map[string]json.RawMessage
		err := json.Unmarshal(line, &fields)
		if err == nil {
			err = json.Unmarshal(line, &t)
		}
		if err != nil {
			return fmt.Errorf("%s:%d: not a forgotten session's record: %v (fix the line, or delete it if it records no forget: a forget that cannot be read stops the daemon rather than let a forgotten session back in)", path, n, err)
		}
		for name := range fields {
			if k := looksLikeTombstoneField(name); k != "" {
				return fmt.Errorf("%s:%d: not a forgotten session's record: field %q looks like %q (write %q: a forget read without it could let a forgotten session back in)", path, n, name, k, k)
			}
		}
		if err := ValidSessionID(t.Session); err != nil {
			return fmt.Errorf("%s:%d: session: %v", path, n, err)
		}
		if t.At.IsZero() {
			return fmt.Errorf("%s:%d: forgotten_at is missing", path, n)
		}
		if prev, ok := out[t.Session]; ok {
			if prev.At.After(t.At) {
				t.At = prev.At
			}
			t.Resumes = append(t.Resumes, prev.Resumes...)
		}
		slices.Sort(t.Resumes)
		t.Resumes = slices.Compact(t.Resumes)
		out[t.Session] = t
	}
	return sc.Err()
}

// tombstoneFields are the fields of a tombstone line.
var tombstoneFields = []string{"session", "forgotten_at", "resumes"}

// looksLikeTombstoneField is the tombstone field that name, not one of
// them, looks like ("session_id", "resume", "forgottenAt", a typo), or ""
// when it looks like none. Other fields are ignored: a later version may
// add some, and an older daemon must still carry out its forgets (it
// stopped on them before); a misspelt field must not be ignored, since a
// forget read without its resumes or time would keep back less than was
// forgotten.
func looksLikeTombstoneField(name string) string {
	if slices.Contains(tombstoneFields, name) {
		return ""
	}
	switch bare := bareName(name); bare {
	case "sessionid":
		return "session"
	case "resume", "resumed":
		return "resumes"
	case "forgotten", "forgottenat":
		return "forgotten_at"
	default:
		for _, k := range tombstoneFields {
			if editDistance(bare, bareName(k), maxTypo(k)) <= maxTypo(k) {
				return k
			}
		}
	}
	return ""
}

// AppendTombstones appends ts to this machine's tombstone file in dir
// (TombstoneFileOf(MachineName()), created 0600), in one write on a
// fresh line, and syncs it to disk before returning.
func AppendTombstones(dir string, ts []Tombstone) error {
	return AppendTombstonesTo(dir, TombstoneFileOf(MachineName()), ts)
}

// AppendTombstonesTo appends ts to the tombstone file name in dir.
func AppendTombstonesTo(dir, name string, ts []Tombstone) error {
	if len(ts) == 0 {
		return nil
	}
	var b bytes.Buffer
	for _, t := range ts {
		t.At = t.At.UTC()
		line, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("record the forget of %s: %w", t.Session, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, name)
	_, statErr := os.Lstat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("record the forget: %w", err)
	}
	defer f.Close()
	// A write cut short left an unfinished line (the forget it recorded
	// is in the index, which Open writes out again): it goes.
	old, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("record the forget in %s: %w", path, err)
	}
	if n := len(old); n > 0 && old[n-1] != '\n' {
		if err := f.Truncate(int64(bytes.LastIndexByte(old, '\n') + 1)); err != nil {
			return fmt.Errorf("record the forget in %s: %w", path, err)
		}
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		return fmt.Errorf("record the forget in %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("record the forget in %s: %w", path, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		// The new file's name, durable too.
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return f.Close()
}
