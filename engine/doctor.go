package engine

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/workspace"
)

// Check outcomes (Check.Status).
const (
	StatusOK   = "OK"
	StatusWarn = "WARN"
	StatusFail = "FAIL"
)

// embedTimeout bounds the doctor's probe of a remote embedder.
const embedTimeout = 2 * time.Second

// Check is one line of `doctor`: what was checked, the outcome (OK, WARN
// or FAIL), and what to do about it.
type Check struct {
	Name    string `json:"name"`
	Status  string `json:"status"` // OK, WARN or FAIL
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// DoctorReport is `continuity doctor`: every check, in order, and how
// many passed, warned and failed.
type DoctorReport struct {
	Workspace string  `json:"workspace"`
	Checks    []Check `json:"checks"`
	OK        int     `json:"ok"`
	Warnings  int     `json:"warnings"`
	Failures  int     `json:"failures"`
}

// Doctor runs the checks on the workspace. It changes nothing; it reads
// the index on its own (a damaged file may not open as an index at all).
func (c *Client) Doctor(ctx context.Context) DoctorReport {
	d := &doctor{c: c, ws: c.ws, r: DoctorReport{Workspace: c.ws.Root, Checks: []Check{}}}
	d.run(ctx)
	return d.r
}

// Get returns the check named name.
func (r *DoctorReport) Get(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Print writes the report as a table, one check a line, and the counts.
func (r *DoctorReport) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range r.Checks {
		msg := c.Message
		if c.Fix != "" {
			msg += "; " + c.Fix
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Name, msg)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d OK, %d %s, %d %s\n", r.OK,
		r.Warnings, words.Plural(r.Warnings, "warning", "warnings"), r.Failures, words.Plural(r.Failures, "failure", "failures"))
	return err
}

// doctor runs the checks in order; later checks use what earlier ones
// learned.
type doctor struct {
	c  *Client
	ws workspace.Layout
	r  DoctorReport

	logFiles map[string]int64 // regular *.jsonl files of the logs folder: size
	cacheOK  bool             // the cache folder exists
	indexOK  bool             // index.db passed its check
	status   *index.Status    // nil when the index cannot be read
	locked   bool             // a process holds the index lock
	ingest   bool             // it is `continuity ingest`, not a daemon
	holder   int              // its pid, 0 if unknown
	daemon   bool             // the daemon answers on its socket
}

func (d *doctor) add(name, status, message, fix string) {
	d.r.Checks = append(d.r.Checks, Check{Name: name, Status: status, Message: message, Fix: fix})
	switch status {
	case StatusOK:
		d.r.OK++
	case StatusWarn:
		d.r.Warnings++
	case StatusFail:
		d.r.Failures++
	}
}

func (d *doctor) run(ctx context.Context) {
	d.checkLogsFolder()
	d.checkLogFiles()
	d.checkTombstones()
	d.readStatus(ctx)
	d.checkSkipped()
	d.checkCache()
	d.checkLock()
	d.checkDeletedIndex()
	d.checkSocket(ctx)
	d.checkIndex(ctx)
	d.checkFullText(ctx)
	d.checkDiskSpace()
	d.checkWriteLock()
	d.checkLag()
	d.checkRejects()
	d.checkSync(ctx)
	d.checkClock(ctx)
	d.checkEmbedder(ctx)
	d.checkRetention()
	d.checkShare(ctx)
}

func (d *doctor) checkLogsFolder() {
	const name = "logs folder"
	dir := d.ws.Logs
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(name, StatusWarn, fmt.Sprintf("%s does not exist: no agent has logged in this workspace yet", dir),
			d.logsHint())
	case err != nil:
		d.add(name, StatusFail, fmt.Sprintf("cannot read %s: %v", dir, err), "check the permissions of the workspace")
	case fi.Mode()&fs.ModeSymlink != 0:
		d.add(name, StatusFail, fmt.Sprintf("%s is a symbolic link: continuity only reads a real folder inside the workspace", dir),
			fmt.Sprintf("replace the link with a real folder: rm %s && mkdir -m 700 %s, then move the logs into it", dir, dir))
	case !fi.IsDir():
		d.add(name, StatusFail, fmt.Sprintf("%s is not a folder", dir),
			fmt.Sprintf("move it away and create the folder: mkdir -m 700 %s", dir))
	case fi.Mode().Perm()&0o077 != 0:
		d.add(name, StatusWarn, fmt.Sprintf("%s can be read by other users (mode %04o): conversations are private", dir, fi.Mode().Perm()),
			"chmod 700 "+dir)
	default:
		d.add(name, StatusOK, fmt.Sprintf("%s is a private folder (mode %04o)", dir, fi.Mode().Perm()), "")
	}
}

func (d *doctor) checkLogFiles() {
	const name = "log files"
	entries, err := os.ReadDir(d.ws.Logs)
	if errors.Is(err, fs.ErrNotExist) {
		return // said by the logs folder check
	}
	if err != nil {
		d.add(name, StatusFail, fmt.Sprintf("cannot list %s: %v", d.ws.Logs, err), "check its permissions: chmod 700 "+d.ws.Logs)
		return
	}
	d.logFiles = map[string]int64{}
	var total int64
	for _, en := range entries {
		if _, ok := logformat.ParseLogName(en.Name()); !ok || !en.Type().IsRegular() {
			continue
		}
		if fi, err := en.Info(); err == nil {
			d.logFiles[en.Name()] = fi.Size()
			total += fi.Size()
		}
	}
	if len(d.logFiles) == 0 {
		d.add(name, StatusOK, "no log files (*.jsonl) yet", "")
		return
	}
	d.add(name, StatusOK, fmt.Sprintf("%d log %s (*.jsonl), %s", len(d.logFiles), words.Plural(len(d.logFiles), "file", "files"), HumanBytes(total)), "")
}

// readStatus reads the index summary, if the index can be read; the
// index check says why not.
func (d *doctor) readStatus(ctx context.Context) {
	if _, err := os.Stat(filepath.Join(d.ws.Cache, index.FileName)); err != nil {
		return
	}
	db, err := index.Open(d.ws.Cache, index.Options{ReadOnly: true})
	if err != nil {
		return
	}
	defer db.Close()
	st, err := db.Status(ctx)
	if err != nil {
		return
	}
	d.status = &st
}

func (d *doctor) checkSkipped() {
	const name = "skipped files"
	if d.status == nil {
		return
	}
	if len(d.status.Skipped) == 0 {
		d.add(name, StatusOK, "no log file is skipped as a whole", "")
		return
	}
	var list []string
	for _, s := range d.status.Skipped {
		list = append(list, s.Name+" ("+s.Reason+")")
	}
	d.add(name, StatusWarn, fmt.Sprintf("%d %s not read at all: %s", len(list), words.Plural(len(list), "file is", "files are"), strings.Join(list, ", ")),
		"make them regular files directly in "+d.ws.Logs)
}

func (d *doctor) checkCache() {
	const name = "index files"
	dir := d.ws.Cache
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(name, StatusWarn, fmt.Sprintf("no index yet (%s does not exist)", dir),
			d.startHint())
		return
	case err != nil:
		d.add(name, StatusFail, fmt.Sprintf("cannot read %s: %v", dir, err), "check the permissions of "+filepath.Dir(dir))
		return
	case !fi.IsDir():
		d.add(name, StatusFail, fmt.Sprintf("%s is not a folder", dir), "move it away; the daemon creates the folder")
		return
	}
	d.cacheOK = true
	var open []string
	var fix []string
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		open = append(open, fmt.Sprintf("%s (mode %04o)", dir, perm))
		fix = append(fix, "chmod 700 "+dir)
	}
	var files []string
	for _, f := range []string{index.FileName, index.FileName + "-wal", index.FileName + "-shm", index.LockFileName,
		index.FullTextFileName, index.FullTextFileName + "-wal", index.FullTextFileName + "-shm"} {
		path := filepath.Join(dir, f)
		if fi, err := os.Lstat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			open = append(open, fmt.Sprintf("%s (mode %04o)", f, fi.Mode().Perm()))
			files = append(files, path)
		}
	}
	// Connecting to a unix socket takes write permission.
	sock := server.SocketPath(dir)
	if fi, err := os.Lstat(sock); err == nil && fi.Mode().Perm()&0o022 != 0 {
		open = append(open, fmt.Sprintf("%s (mode %04o)", sock, fi.Mode().Perm()))
		files = append(files, sock)
	}
	if len(files) > 0 {
		fix = append(fix, "chmod 600 "+strings.Join(files, " "))
	}
	if len(open) > 0 {
		d.add(name, StatusWarn, "other users can access the index: "+strings.Join(open, ", "), strings.Join(fix, " && "))
		return
	}
	d.add(name, StatusOK, dir+" and the index files in it are private (0700/0600)", "")
}

// checkLock finds out whether a daemon (or an ingest) holds the index
// lock, by trying to take it and releasing it at once.
func (d *doctor) checkLock() {
	const name = "daemon"
	if !d.cacheOK {
		d.add(name, StatusWarn, "no daemon running", d.daemonHint())
		return
	}
	lock, err := index.AcquireLock(d.ws.Cache)
	switch {
	case err == nil:
		if err := lock.Close(); err != nil {
			d.add(name, StatusFail, fmt.Sprintf("cannot release the index lock: %v", err), "")
			return
		}
		d.add(name, StatusWarn, "no daemon running", "start it with `continuity daemon`")
	case errors.Is(err, index.ErrLocked):
		d.locked = true
		d.holder = lockPID(filepath.Join(d.ws.Cache, index.LockFileName))
		d.ingest = processCommand(d.holder) == "ingest"
		pid := "pid unknown"
		if d.holder > 0 {
			pid = "pid " + strconv.Itoa(d.holder)
		}
		if d.ingest {
			d.add(name, StatusOK, fmt.Sprintf("`continuity ingest` is indexing (%s); no daemon running", pid), "")
			return
		}
		d.add(name, StatusOK, fmt.Sprintf("daemon running (%s)", pid), "")
	default:
		d.add(name, StatusFail, fmt.Sprintf("cannot check the index lock: %v", err), "check the permissions of "+d.ws.Cache)
	}
}

// checkDeletedIndex looks for processes that still hold index files of
// this workspace that were deleted (rm -rf of the cache folder): a daemon
// of this version notices within a second and starts again on fresh files,
// rebuilding the index from the logs; an older one (or a stuck one) would
// go on writing a file no query sees.
func (d *doctor) checkDeletedIndex() {
	const name = "deleted index"
	holders := deletedIndexHolders(d.ws.Cache)
	if len(holders) == 0 {
		return
	}
	var pids []string
	for _, pid := range holders {
		pids = append(pids, strconv.Itoa(pid))
	}
	d.add(name, StatusFail,
		fmt.Sprintf("process %s still has index files of this workspace open that were deleted: the cache folder was deleted or replaced under it; "+
			"a current daemon starts again by itself within a second and rebuilds the index from the logs", strings.Join(pids, ", ")),
		fmt.Sprintf("if this stays: kill %s, then start `continuity daemon` (it rebuilds the index from the logs)", strings.Join(pids, " ")))
}

// deletedIndexHolders lists the processes (by /proc, Linux only; none
// elsewhere) with an open descriptor on a deleted file of the cache folder.
func deletedIndexHolders(cache string) []int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue // another user's, or gone
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err == nil && strings.HasPrefix(target, cache+string(filepath.Separator)) && strings.HasSuffix(target, " (deleted)") {
				out = append(out, pid)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkSocket pings the daemon that holds the lock.
func (d *doctor) checkSocket(ctx context.Context) {
	const name = "daemon socket"
	if !d.locked || d.ingest {
		return
	}
	path := server.SocketPath(d.ws.Cache)
	restart := "restart it: kill it, then start `continuity daemon`"
	if d.holder > 0 {
		restart = fmt.Sprintf("restart it: kill %d (kill -9 %d if it does not exit), then start `continuity daemon`", d.holder, d.holder)
	}
	cctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	var out PingReply
	err := server.NewClient(path).Call(cctx, "ping", struct{}{}, &out)
	switch {
	case err == nil:
		if out.Version != Version {
			d.daemon = true
			d.add(name, StatusWarn, fmt.Sprintf("the daemon (pid %d) answers on %s but runs continuity %s, this is %s", out.PID, path, out.Version, Version),
				"restart it to run this version")
			return
		}
		d.daemon = true
		d.add(name, StatusOK, fmt.Sprintf("the daemon answers on %s (pid %d, version %s)", path, out.PID, out.Version), "")
	case errors.Is(err, server.ErrNoDaemon):
		d.add(name, StatusFail, fmt.Sprintf("the process holding the index lock does not listen on %s (an older continuity, or an ingest)", path),
			"if it is a daemon, "+restart)
	case cctx.Err() != nil:
		d.add(name, StatusFail, fmt.Sprintf("the daemon does not answer on %s within %s: it is stuck", path, pingTimeout), restart)
	default:
		d.add(name, StatusFail, fmt.Sprintf("the daemon on %s: %v", path, err), restart)
	}
}

// checkIndex runs SQLite's quick_check on the database, opened read-only
// on its own (a damaged file may not open as an index at all), and checks
// the schema version.
func (d *doctor) checkIndex(ctx context.Context) {
	const name = "index"
	if !d.cacheOK {
		return
	}
	path := filepath.Join(d.ws.Cache, index.FileName)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		d.add(name, StatusWarn, "no index yet ("+path+" does not exist)", d.startHint())
		return
	}
	rebuild := fmt.Sprintf("rebuild it from the logs: stop the daemon, move %s* away, then run `continuity ingest`", path)
	if err != nil {
		d.add(name, StatusFail, fmt.Sprintf("cannot read %s: %v", path, err), "check its permissions: chmod 600 "+path)
		return
	}
	problems, schema, err := quickCheck(ctx, path)
	var serr sqlite3.Error
	switch {
	case errors.As(err, &serr) && serr.Code == sqlite3.ErrNotADB:
		d.add(name, StatusFail, fmt.Sprintf("%s is not a SQLite database (%v)", path, err), rebuild)
		return
	case errors.As(err, &serr) && serr.Code == sqlite3.ErrCorrupt:
		d.add(name, StatusFail, fmt.Sprintf("%s is damaged (%v)", path, err), rebuild)
		return
	case err != nil:
		d.add(name, StatusFail, fmt.Sprintf("cannot check %s: %v", path, err), rebuild)
		return
	}
	if len(problems) > 0 {
		if len(problems) > 3 {
			problems = append(problems[:3], "…")
		}
		d.add(name, StatusFail, fmt.Sprintf("%s is damaged: quick_check says %s", path, strings.Join(problems, "; ")), rebuild)
		return
	}
	db, err := index.Open(d.ws.Cache, index.Options{ReadOnly: true})
	switch {
	case errors.Is(err, index.ErrSchemaTooOld):
		d.add(name, StatusWarn, fmt.Sprintf("%s is sound but has the older schema version %d", path, schema),
			"start `continuity daemon` (or run `continuity ingest`) to migrate it")
		return
	case errors.Is(err, index.ErrSchemaTooNew):
		d.add(name, StatusFail, fmt.Sprintf("%s has schema version %d, written by a newer continuity than this one (%s)", path, schema, Version),
			"upgrade continuity")
		return
	case err != nil:
		d.add(name, StatusFail, fmt.Sprintf("cannot open %s: %v", path, err), rebuild)
		return
	}
	db.Close()
	d.indexOK = true
	events := ""
	if d.status != nil {
		events = fmt.Sprintf(", %d %s", d.status.Events, words.Plural(int(d.status.Events), "event", "events"))
	}
	d.add(name, StatusOK, fmt.Sprintf("%s passes quick_check (schema version %d%s, %s)", path, schema, events, HumanBytes(fi.Size())), "")
}

// checkFullText checks the full-text index (fulltext.db): derived from
// index.db, so the fix for any damage is to let the daemon rebuild it.
func (d *doctor) checkFullText(ctx context.Context) {
	const name = "full-text index"
	if !d.indexOK {
		return // checkIndex said what is wrong
	}
	path := filepath.Join(d.ws.Cache, index.FullTextFileName)
	rebuild := fmt.Sprintf("stop the daemon, delete %s*, start it again: it rebuilds the file from the index", path)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		d.add(name, StatusWarn, "not built yet ("+path+" does not exist); search finds nothing lexically", "start `continuity daemon` or run `continuity ingest`")
		return
	}
	problems, _, err := quickCheck(ctx, path)
	if err == nil && len(problems) > 0 {
		err = errors.New(strings.Join(problems[:min(3, len(problems))], "; "))
	}
	if err != nil {
		d.add(name, StatusFail, fmt.Sprintf("%s is damaged: %v", path, err), rebuild)
		return
	}
	db, err := index.Open(d.ws.Cache, index.Options{ReadOnly: true})
	if err != nil {
		return // checkIndex said it
	}
	defer db.Close()
	pending, err := db.FullTextPending(ctx)
	if err != nil {
		d.add(name, StatusFail, fmt.Sprintf("cannot read %s: %v", path, err), rebuild)
		return
	}
	if pending > 0 && !d.locked {
		d.add(name, StatusWarn, fmt.Sprintf("%d exchanges wait to be indexed and no daemon runs", pending), "start `continuity daemon` or run `continuity ingest`")
		return
	}
	d.add(name, StatusOK, fmt.Sprintf("%s passes quick_check, %d exchanges waiting", path, pending), "")
}

// quickCheck runs PRAGMA quick_check on the database at path, opened
// read-only, and returns what it reports other than "ok", and the schema
// version.
func quickCheck(ctx context.Context, path string) (problems []string, schema int, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, 0, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	db, err := sql.Open("sqlite3", u.String()+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return nil, 0, fmt.Errorf("open: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return nil, 0, fmt.Errorf("quick_check: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, 0, fmt.Errorf("quick_check: %w", err)
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("quick_check: %w", err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&schema); err != nil {
		return nil, 0, fmt.Errorf("read schema version: %w", err)
	}
	return problems, schema, nil
}

// checkLag compares the size of each log with the offset the index has
// committed in it.
func (d *doctor) checkLag() {
	const name = "lag"
	if d.status == nil || d.logFiles == nil {
		return
	}
	offsets := map[string]int64{}
	for _, f := range d.status.Files {
		if !f.Gone {
			offsets[f.Path] = max(offsets[f.Path], f.Offset)
		}
	}
	var lag, pending, total int64
	files := 0
	for name, size := range d.logFiles {
		total += size
		l := max(0, size-offsets[name])
		if l == 0 {
			continue
		}
		// Bytes after the last newline wait for it: they are not lag.
		p := min(l, unfinishedTail(filepath.Join(d.ws.Logs, name), size))
		pending += p
		if l > p {
			lag += l - p
			files++
		}
	}
	wait := ""
	if pending > 0 {
		wait = fmt.Sprintf("; %s of unfinished last lines wait for their newline", HumanBytes(pending))
	}
	switch {
	case lag == 0:
		d.add(name, StatusOK, fmt.Sprintf("every complete line is indexed (%s of logs)%s", HumanBytes(total), wait), "")
	case d.locked:
		d.add(name, StatusOK, fmt.Sprintf("%s in %d %s being indexed%s", HumanBytes(lag), files, words.Plural(files, "file", "files"), wait), "")
	default:
		d.add(name, StatusWarn, fmt.Sprintf("%s in %d %s not indexed yet, and no daemon runs%s", HumanBytes(lag), files, words.Plural(files, "file", "files"), wait),
			"run `continuity ingest`, or start `continuity daemon`")
	}
}

// unfinishedTail returns how many bytes follow the last newline of the
// file (looking at its last 64 KiB at most).
func unfinishedTail(path string, size int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := min(size, 64<<10)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return 0
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		return n - int64(i) - 1
	}
	return n
}

func (d *doctor) checkRejects() {
	const name = "rejects"
	if d.status == nil {
		return
	}
	// Lines of forgotten sessions and identical replays of a line with
	// an id are listed by `rejects` but are no agent's mistake: the count
	// is status's (RejectCounts), and says so.
	c := rejectCounts(d.status)
	if n := c.Invalid; n > 0 {
		d.add(name, StatusWarn, fmt.Sprintf("%d log %s rejected (%s)", n, words.Plural(int(n), "line was", "lines were"), c.Note()),
			"run `continuity rejects` to see each file:line and reason, then fix the agent that wrote them")
		return
	}
	d.add(name, StatusOK, fmt.Sprintf("no rejected lines (%s)", c.Note()), "")
}

// checkEmbedder checks the running daemon's embedder when one answers
// (checkDaemonEmbedder); else it builds the embedder the environment
// configures and, for a remote one, embeds a probe text.
func (d *doctor) checkEmbedder(ctx context.Context) {
	const name = "embedder"
	if d.daemon {
		if p, ok := d.c.daemonEmbedder(ctx); ok {
			d.checkDaemonEmbedder(p)
			return
		}
	}
	envFix := fmt.Sprintf("fix %s, %s and %s, or set %s=%s", embed.EnvProvider, embed.EnvModel, embed.EnvURL, embed.EnvProvider, embed.DefaultProvider)
	cfg, err := embed.ConfigFromEnv()
	if err != nil {
		d.add(name, StatusFail, err.Error(), "fix the variable")
		return
	}
	e, err := embed.New(cfg)
	if err != nil {
		d.add(name, StatusFail, err.Error(), envFix)
		return
	}
	p, remote := e.(embed.Prober)
	if !remote {
		// In the binary: embedding a probe checks the model reads and runs.
		if _, err := e.Embed(ctx, []string{"continuity doctor probe"}); err != nil {
			d.add(name, StatusFail, fmt.Sprintf("%s embedder (%s) fails: %v", providerName(cfg.Provider), e.Identity(), err), "rebuild the binary; meanwhile "+envFix)
			return
		}
		d.add(name, StatusOK, fmt.Sprintf("%s embedder (%s), in the binary, offline", providerName(cfg.Provider), e.Identity()), "")
		return
	}
	provider := strings.ToLower(strings.TrimSpace(cfg.Provider))
	where := cfg.URL
	if where == "" {
		where = embed.DefaultOllamaURL
		if provider == embed.ProviderOpenAI {
			where = embed.DefaultOpenAIURL
		}
	}
	cctx, cancel := context.WithTimeout(ctx, embedTimeout)
	defer cancel()
	err = p.Probe(cctx)
	switch {
	case err == nil:
		d.add(name, StatusOK, fmt.Sprintf("%s embedder answers at %s (%s)", provider, where, e.Identity()), "")
	case errors.Is(err, embed.ErrUnavailable) || cctx.Err() != nil:
		fix := fmt.Sprintf("check that the server runs at that address, or set %s=%s", embed.EnvProvider, embed.DefaultProvider)
		if provider == embed.ProviderOllama {
			fix = fmt.Sprintf("start Ollama (`ollama serve`) or set %s=%s", embed.EnvProvider, embed.DefaultProvider)
		}
		d.add(name, StatusFail, fmt.Sprintf("%s embedder %s is not reachable at %s", provider, cfg.Model, where), fix)
	default:
		d.add(name, StatusFail, fmt.Sprintf("%s embedder %s at %s: %v", provider, cfg.Model, where, err), envFix)
	}
}

// checkDaemonEmbedder describes the daemon's embedder as it reports it
// (its last failure tells whether it reaches a remote one; the daemon
// retries by itself), then warns when the environment chooses another
// one.
func (d *doctor) checkDaemonEmbedder(p embedding.Progress) {
	const name = "embedder"
	s := ofDaemon(p)
	what := fmt.Sprintf("the daemon's %s embedder (%s)", cmp.Or(s.Provider, "unknown"), s.Name())
	if s.Space == "" {
		what = fmt.Sprintf("the daemon's %s embedder %s (its dimension not learned yet)", cmp.Or(s.Provider, "unknown"), s.Model)
	}
	backlog := ""
	if p.Pending > 0 {
		backlog = fmt.Sprintf("; %d %s waiting for a vector", p.Pending, words.Plural(int(p.Pending), "exchange", "exchanges"))
		if p.Rate > 0 && p.LastError == "" {
			backlog += fmt.Sprintf(", %.0f/s", p.Rate)
		}
	}
	switch {
	case s.Remote && s.LastError != "":
		fix := "check that the server runs at that address (the daemon retries by itself), or restart the daemon with another embedder"
		if s.Provider == embed.ProviderOllama {
			fix = "start Ollama (`ollama serve`; the daemon retries by itself), or restart the daemon with another embedder"
		}
		d.add(name, StatusFail, fmt.Sprintf("%s at %s fails: %s%s", what, s.URL, s.LastError, backlog), fix)
	case s.LastError != "":
		d.add(name, StatusWarn, fmt.Sprintf("%s, %s: its last embedding failed: %s%s", what, s.Where(), s.LastError, backlog),
			"the daemon retries by itself; its log says more")
	case s.Remote && s.Stored > 0:
		d.add(name, StatusOK, fmt.Sprintf("%s answers at %s%s", what, s.URL, backlog), "")
	case s.Remote:
		d.add(name, StatusOK, fmt.Sprintf("%s at %s: not called since the daemon started (nothing to embed yet)%s", what, s.URL, backlog), "")
	default:
		d.add(name, StatusOK, fmt.Sprintf("%s, %s, offline%s", what, s.Where(), backlog), "")
	}
	emb, err := d.c.embedder()
	env := compareEnvironment(&s, emb, err)
	switch {
	case err != nil:
		d.add("embedder settings", StatusWarn, fmt.Sprintf("this environment's embedder settings are invalid: %v; the daemon embeds with %s", err, s.Name()),
			fmt.Sprintf("fix %s, %s and %s, or set %s", embed.EnvProvider, embed.EnvModel, embed.EnvURL, EnvSettings(s.Description)))
	case env != nil:
		d.add("embedder settings", StatusWarn, fmt.Sprintf("the daemon embeds with %s but this environment (%s and the others) chooses %s: "+
			"answers without the daemon, and MCP servers started from here, would use it, without its vectors", s.Name(), embed.EnvProvider, env.Name()),
			fmt.Sprintf("align them: restart the daemon with the same settings as here (%s), or set %s here", DaemonCommand(env.Description), EnvSettings(s.Description)))
	}
}

// lockPID reads the pid the lock holder wrote in the lock file, 0 if none.
func lockPID(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// processCommand says which continuity command process pid runs, "daemon"
// or "ingest", from its command line (Linux /proc); "" when unknown.
func processCommand(pid int) string {
	if pid <= 0 {
		return ""
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	for _, arg := range bytes.Split(data, []byte{0}) {
		switch string(arg) {
		case "daemon", "ingest":
			return string(arg)
		}
	}
	return ""
}

// HumanBytes writes n bytes in B, KiB, MiB or GiB, as continuity's
// messages do.
func HumanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// providerName is the configured provider as the user knows it: the
// default when none is set, and "hash" for its deprecated alias.
func providerName(p string) string {
	switch p = strings.ToLower(strings.TrimSpace(p)); p {
	case "":
		return embed.DefaultProvider
	case embed.ProviderBuiltin:
		return embed.ProviderHash + " (set as the deprecated \"builtin\")"
	}
	return p
}

// startHint is how to get an index: ingest or the daemon, or, in a broad
// folder where both refuse, where to run continuity instead.
func (d *doctor) startHint() string {
	if d.ws.CheckCreate() != nil {
		return d.ws.StartHint()
	}
	return "run `continuity ingest`, or start `continuity daemon`"
}

// daemonHint is how to start the daemon, or, in a broad folder where it
// refuses, where to run it instead.
func (d *doctor) daemonHint() string {
	if d.ws.CheckCreate() != nil {
		return d.ws.StartHint()
	}
	return "start it with `continuity daemon`"
}

// logsHint says who creates the logs folder, or, in a broad folder where
// nothing creates it unless told, where to run continuity instead.
func (d *doctor) logsHint() string {
	if d.ws.CheckCreate() != nil {
		return d.ws.StartHint()
	}
	return "agents create it with their first line (see protocol.md), and `continuity daemon` creates it"
}
