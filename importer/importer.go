package importer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Importer imports native transcripts of one agent into a logs folder.
type Importer struct {
	Agent   string
	Logs    string // <workspace>/.praxis-os/.conversations
	Options Options

	store *Store
	// listed: files of the folders walked that look like the agent's
	// but were left out, with why (Files fills it; Import reports it).
	listed []string
}

// New returns an importer of agent's transcripts into logs.
func New(agent, logs string, o Options) (*Importer, error) {
	name, ok := Canonical(agent)
	if !ok {
		return nil, fmt.Errorf("unknown agent %q (want one of %s; also accepted: %s)", agent, strings.Join(Agents, ", "), AliasHelp())
	}
	return &Importer{Agent: name, Logs: logs, Options: o}, nil
}

// Files lists the native files under paths (files or folders in the
// agent's layout), in the order they are imported: older sessions first,
// so that a resumed session's copied history is found in its original.
// Symbolic links inside folders are not followed.
func (im *Importer) Files(paths []string) ([]string, error) {
	im.listed = nil
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !fi.IsDir() {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable subfolder: go on
			}
			if d.Type()&fs.ModeSymlink != 0 || !d.Type().IsRegular() {
				return nil
			}
			if seen[path] {
				return nil
			}
			if im.wants(path) || im.Agent == Aider && im.sniffAider(path) {
				seen[path] = true
				found = append(found, path)
			} else if db := dumpDatabase(im.Agent); db != "" && strings.EqualFold(filepath.Ext(path), ".sql") {
				// a dump of the agent's database (as test fixtures and
				// bug reports ship them) is not read: say so and how
				im.listed = append(im.listed, fmt.Sprintf("%s: a SQL dump, not a database: load it into one (sqlite3 %s < %s) and import that", path, db, filepath.Base(path)))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(im.Agent, out[i]) < rank(im.Agent, out[j]) })
	return out, nil
}

// dumpDatabase is the file name under which agent's importer reads its
// SQLite database ("" for agents without one).
func dumpDatabase(agent string) string {
	switch agent {
	case OpenCode:
		return "opencode.db"
	case Kilo:
		return "kilo.db"
	case Goose:
		return "sessions.db"
	case Cursor:
		return "state.vscdb"
	}
	return ""
}

// wants tells which files of a folder walk belong to the agent's layout.
func (im *Importer) wants(path string) bool {
	b := filepath.Base(path)
	switch im.Agent {
	case ClaudeCode, Codex:
		return strings.HasSuffix(b, ".jsonl")
	case Copilot:
		return strings.HasSuffix(b, ".jsonl") || strings.HasSuffix(b, ".json") && filepath.Base(filepath.Dir(path)) == "history-session-state"
	case Gemini:
		return b == "logs.json" || strings.HasPrefix(b, "session-") && (strings.HasSuffix(b, ".json") || strings.HasSuffix(b, ".jsonl")) ||
			strings.HasPrefix(b, "checkpoint") && strings.HasSuffix(b, ".json")
	case Cursor:
		return b == "state.vscdb"
	case Aider:
		return aiderName(b)
	case Cline, Roo, Kilo:
		return b == clineUIFile || b == clineAPIFile && !regular(filepath.Join(filepath.Dir(path), clineUIFile)) ||
			im.Agent == Cline && strings.HasSuffix(b, clineSessionSuffix) ||
			im.Agent == Kilo && openCodeLayout(path) && (!strings.HasSuffix(b, ".db") || strings.HasPrefix(b, "kilo") || strings.HasPrefix(b, "opencode"))
	case OpenCode:
		return strings.HasSuffix(b, ".json") && filepath.Base(filepath.Dir(filepath.Dir(path))) == "session" ||
			strings.HasPrefix(b, "opencode") && strings.HasSuffix(b, ".db")
	case Goose:
		return strings.HasSuffix(b, ".jsonl") || b == "sessions.db"
	}
	return false
}

// aiderName reports whether a file name is an Aider chat history's:
// .aider.chat.history.md (Aider's default), any *.chat.history.md
// (--chat-history-file), or a copy named *chat-history.md.
func aiderName(b string) bool {
	return strings.HasSuffix(b, ".chat.history.md") || strings.HasSuffix(b, "chat-history.md")
}

// sniffAider reports whether a markdown file of a folder walk not named
// like an Aider history is one anyway (it has a "# aider chat started
// at" line near its start); a markdown file that is not is listed as
// left out, so that a folder import says what it did not read.
func (im *Importer) sniffAider(path string) bool {
	if !strings.HasSuffix(strings.ToLower(path), ".md") {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		im.listed = append(im.listed, path+": "+err.Error())
		return false
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	if bytes.Contains(head[:n], []byte(aiderStart)) {
		return true
	}
	im.listed = append(im.listed, path+": not an aider chat history (no '"+strings.TrimSpace(aiderStart)+"' line)")
	return false
}

// rank orders files: Gemini chat recordings before logs.json (which only
// repeats their prompts); Claude Code sessions, and the sessions of the
// agents whose stores are shared by all projects, by modification time.
func rank(agent, path string) int64 {
	b := filepath.Base(path)
	switch agent {
	case Gemini:
		if b == "logs.json" {
			return 2
		}
		if strings.HasPrefix(b, "checkpoint") {
			return 1
		}
		return 0
	case Codex, Cursor, Aider:
		return 0
	}
	if fi, err := os.Stat(path); err == nil {
		return fi.ModTime().UnixNano()
	}
	return 0
}

// Import imports the native files under paths. A malformed native record
// is counted in Errors with its file and line and skipped; only a failure
// to write the logs stops the import.
func (im *Importer) Import(ctx context.Context, paths []string) (Result, error) {
	var res Result
	files, err := im.Files(paths)
	if err != nil {
		return res, err
	}
	res.Skipped += len(im.listed)
	res.Skips = append(res.Skips, im.listed...)
	if err := im.open(); err != nil {
		return res, err
	}
	im.store.BeginRun()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		r, err := im.ImportFile(f, im.Options)
		res.Add(r)
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

func (im *Importer) open() error {
	if im.store != nil {
		return nil
	}
	st, err := OpenStore(im.Logs, im.Agent)
	if err != nil {
		return err
	}
	im.store = st
	return nil
}

// ImportFile imports one native file with options o.
func (im *Importer) ImportFile(path string, o Options) (Result, error) {
	var res Result
	if err := im.open(); err != nil {
		return res, err
	}
	res.Files = 1
	p, size, err := parseFile(im.Agent, path, o.Roots)
	res.Bytes = size
	if err != nil {
		res.Errors++
		res.Problems = append(res.Problems, Problem{File: path, Reason: err.Error()}.String())
		return res, nil
	}
	for _, pr := range p.Problems {
		res.Errors++
		res.Problems = append(res.Problems, pr.String())
	}
	res.Skipped += p.Skipped
	res.Skips = append(res.Skips, p.SkipReasons...)
	for _, s := range p.Sessions {
		if !validID(s.ID) {
			res.Errors++
			res.Problems = append(res.Problems, Problem{File: path, Reason: fmt.Sprintf("session id %q is not usable", oneLine(s.ID, 80))}.String())
			continue
		}
		if im.Agent == Gemini && filepath.Base(path) == "logs.json" && im.store.hasSession(s.ID) {
			res.Skipped++
			res.Skips = append(res.Skips, path+": session "+s.ID+": prompts already imported from its chat recording")
			continue
		}
		if len(o.Roots) > 0 && s.Cwd != "" && !within(s.Cwd, o.Roots) {
			res.Skipped++
			res.Skips = append(res.Skips, path+": session "+s.ID+": ran in "+s.Cwd+", not in this workspace")
			continue
		}
		res.Sessions++
		if err := im.store.Import(s, o, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// parseFile reads one native file of agent; a database's sessions are
// those that ran in one of roots (all when roots is empty).
func parseFile(agent, path string, roots []string) (Parsed, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return Parsed{}, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Parsed{}, 0, err
	}
	if !fi.Mode().IsRegular() {
		return Parsed{}, 0, fmt.Errorf("not a regular file")
	}
	switch agent {
	case ClaudeCode:
		return ParseClaudeCode(f, path), fi.Size(), nil
	case Codex:
		return ParseCodex(f, path), fi.Size(), nil
	case Gemini:
		return ParseGemini(f, path, fi.ModTime()), fi.Size(), nil
	case Cursor:
		f.Close()
		p, err := ParseCursor(path)
		return p, fi.Size(), err
	case Aider:
		return ParseAider(f, path, fi.ModTime()), fi.Size(), nil
	case Cline, Roo, Kilo:
		f.Close()
		if agent == Kilo && openCodeLayout(path) {
			// Kilo Code 5 keeps OpenCode's layout (kilo.db, storage/)
			p, size, err := parseOpenCodeFile(path, roots, fi.Size())
			for _, s := range p.Sessions {
				s.Agent = Kilo
			}
			return p, size, err
		}
		if strings.HasSuffix(path, clineSessionSuffix) {
			return ParseClineSession(path), fi.Size(), nil
		}
		return ParseClineTask(agent, path), fi.Size(), nil
	case OpenCode:
		f.Close()
		return parseOpenCodeFile(path, roots, fi.Size())
	case Copilot:
		if strings.HasSuffix(path, ".json") {
			f.Close()
			data, err := readCapped(path, maxClineFile)
			if err != nil {
				return Parsed{}, fi.Size(), err
			}
			return ParseCopilotLegacy(data, path), fi.Size(), nil
		}
		return ParseCopilot(f, path), fi.Size(), nil
	case Goose:
		if isSQLite(f) {
			f.Close()
			p, err := ParseGooseDB(path, roots)
			return p, fi.Size(), err
		}
		return ParseGoose(f, path), fi.Size(), nil
	}
	return Parsed{}, 0, fmt.Errorf("unknown agent %q", agent)
}

// parseOpenCodeFile reads an OpenCode database, a session file of its
// JSON storage, or an `opencode export`.
func parseOpenCodeFile(path string, roots []string, size int64) (Parsed, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return Parsed{}, size, err
	}
	sqlite := isSQLite(f)
	f.Close()
	switch {
	case sqlite:
		p, err := ParseOpenCodeDB(path, roots)
		return p, size, err
	case filepath.Base(filepath.Dir(filepath.Dir(path))) == "session":
		return ParseOpenCodeStorage(path), size, nil
	}
	data, err := readCapped(path, maxClineFile)
	if err != nil {
		return Parsed{}, size, err
	}
	return ParseOpenCodeExport(data, path), size, nil
}

// isSQLite reports whether f starts with SQLite's file header.
func isSQLite(f *os.File) bool {
	var head [16]byte
	n, _ := f.ReadAt(head[:], 0)
	return n == 16 && string(head[:]) == "SQLite format 3\x00"
}

// mtimeOr is t, or now when t is zero.
func mtimeOr(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now().UTC()
	}
	return t
}
