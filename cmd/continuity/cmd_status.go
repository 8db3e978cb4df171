package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/server"
)

// openReader opens the index read-only, for queries that may run while a
// daemon writes.
func openReader(p paths) (*index.DB, error) {
	if _, err := os.Stat(filepath.Join(p.cache, "index.db")); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no index yet in %s: start 'continuity daemon' or run 'continuity ingest'", p.root)
	}
	return index.Open(p.cache, index.Options{ReadOnly: true})
}

// openIndex resolves the workspace and opens its index read-only.
func (e *env) openIndex() (paths, *index.DB, error) {
	p, err := e.paths()
	if err != nil {
		return p, nil, err
	}
	db, err := openReader(p)
	return p, db, err
}

// printJSON writes v as indented JSON: the --json output of every command.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// fileStatus is one log file in `status`: where the index is in it.
type fileStatus struct {
	Path       string `json:"path"`
	Generation int64  `json:"generation"`
	Offset     int64  `json:"offset"`
	Line       int64  `json:"line"`
	Size       int64  `json:"size"`
	Lag        int64  `json:"lag_bytes"`
	Gone       bool   `json:"gone,omitempty"`
	// NotSeen: a file of the folder that no generation follows yet (new,
	// or replaced, since the daemon last looked): all of it is lag.
	NotSeen bool `json:"not_seen,omitempty"`
	// Missing: the generation's file is no longer in the folder, and no
	// daemon has noticed yet.
	Missing bool `json:"missing,omitempty"`
}

// daemonInfo says whether a process indexes the workspace now.
type daemonInfo struct {
	Running bool   `json:"running"`          // a daemon answers on the socket
	PID     int    `json:"pid,omitempty"`    // the daemon's, or the lock holder's
	Holder  string `json:"holder,omitempty"` // without a daemon: "ingest" or another process holding the lock
	Socket  string `json:"socket"`
}

type statusReport struct {
	Workspace         string           `json:"workspace"`
	Daemon            daemonInfo       `json:"daemon"`
	LagBytes          int64            `json:"lag_bytes"` // bytes of the logs not indexed yet, all files
	Events            int64            `json:"events"`
	Exchanges         int64            `json:"exchanges"`
	Sessions          int64            `json:"sessions"`
	Rejects           int64            `json:"rejects"`
	Redactions        int64            `json:"redactions"`
	DuplicatesSkipped int64            `json:"duplicates_skipped"`
	UnknownTypes      int64            `json:"unknown_types"`
	UnknownFields     int64            `json:"unknown_fields"`
	EventsByType      map[string]int64 `json:"events_by_type"`
	Embedder          string           `json:"embedder"`
	Vectors           map[string]int64 `json:"vectors"`
	EmbedPending      int64            `json:"embed_pending"`
	Embedding         *embedProgress   `json:"embedding,omitempty"`
	// FullTextPending: exchanges not in the full-text index yet (plus
	// deletions not applied); -1 when it is not built yet.
	FullTextPending int64 `json:"fulltext_pending"`
	// BM25: the daemon's bm25 engine (search.Lexicon); null when no
	// daemon answers.
	BM25    *search.LexiconStatus `json:"bm25"`
	Files   []fileStatus          `json:"files"`
	Skipped []index.SkippedFile   `json:"skipped_files"`

	producerCounts
}

func runStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "status [--json]", `
Show whether a daemon runs (it answers on its socket; else who holds the
index), and what the index holds: per log file its generation, committed
offset, size and lag (bytes not indexed yet; a file no daemon has seen yet,
new or replaced while none ran, counts whole); counts of events by type,
exchanges, sessions, rejected lines and duplicates skipped; what waits for
the full-text index and for a vector; the daemon's bm25 engine (ready, or
building while FTS5 answers; the exchanges it holds, the queries it
answered); files skipped as a whole (symlinks, FIFOs, unreadable) with the
reason.`)
	asJSON := fs.Bool("json", false, "print JSON")
	var ef embedFlags
	ef.register(fs)
	if _, err := parse(e, fs, args); err != nil {
		return err
	}
	p, db, err := e.openIndex()
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := db.Status(ctx)
	if err != nil {
		return err
	}
	r := statusReport{
		Workspace: p.root, Events: st.Events, Exchanges: st.Exchanges, Sessions: st.Sessions,
		Rejects: st.Rejects, Redactions: st.Redactions, DuplicatesSkipped: st.DuplicatesSkipped, UnknownTypes: st.UnknownTypes,
		UnknownFields: st.UnknownFields, EventsByType: st.EventsByType, Skipped: st.Skipped,
		Files: []fileStatus{}, producerCounts: producerCountsOf(st),
	}
	if r.Skipped == nil {
		r.Skipped = []index.SkippedFile{}
	}
	r.Vectors, r.EmbedPending = st.Vectors, -1
	switch r.FullTextPending, err = db.FullTextPending(ctx); {
	case errors.Is(err, index.ErrNoFullText):
		r.FullTextPending = -1
	case err != nil:
		return err
	}
	if emb, err := ef.embedder(); err == nil {
		if id, ok := knownIdentity(emb); ok {
			r.Embedder = id
			if r.EmbedPending, err = db.CountPending(ctx, id); err != nil {
				return err
			}
			r.Embedding = readEmbedProgress(ctx, p.cache, id, r.Vectors[id], r.EmbedPending)
		} else {
			r.Embedder = emb.Identity()
		}
	}
	r.Daemon = daemonState(ctx, p)
	if r.Daemon.Running {
		r.BM25 = readLexiconStatus(ctx, p.cache)
	}
	r.Files = fileLags(p.logs, st.Files)
	for _, f := range r.Files {
		r.LagBytes += f.Lag
	}
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Path < r.Files[j].Path })
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "workspace\t%s\n", r.Workspace)
	switch d := r.Daemon; {
	case d.Running:
		fmt.Fprintf(w, "daemon\trunning (pid %d)\n", d.PID)
	case d.Holder != "":
		fmt.Fprintf(w, "daemon\tnot running; %s (pid %d) holds the index\n", d.Holder, d.PID)
	default:
		fmt.Fprintf(w, "daemon\tnot running: new lines are not indexed until `continuity daemon` (or `ingest`) runs\n")
	}
	fmt.Fprintf(w, "not indexed yet\t%d bytes\n", r.LagBytes)
	fmt.Fprintf(w, "events\t%d\n", r.Events)
	types := make([]string, 0, len(r.EventsByType))
	for t := range r.EventsByType {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		fmt.Fprintf(w, "  %s\t%d\n", t, r.EventsByType[t])
	}
	fmt.Fprintf(w, "sessions\t%d\n", r.Sessions)
	if r.FullTextPending >= 0 {
		fmt.Fprintf(w, "waiting for full-text indexing\t%d\n", r.FullTextPending)
	} else {
		fmt.Fprintf(w, "full-text index\tnot built yet\n")
	}
	fmt.Fprintf(w, "bm25 engine\t%s\n", lexiconLine(r.BM25, r.Daemon.Running))
	fmt.Fprintf(w, "embedder\t%s\n", r.Embedder)
	if r.EmbedPending >= 0 {
		fmt.Fprintf(w, "  waiting for a vector\t%d\n", r.EmbedPending)
	}
	if r.Embedding != nil {
		fmt.Fprintf(w, "  embedded\t%s\n", r.Embedding)
	}
	fmt.Fprintf(w, "rejected lines\t%d\t(see 'continuity rejects')\n", r.Rejects)
	fmt.Fprintf(w, "duplicate ids skipped\t%d\n", r.DuplicatesSkipped)
	fmt.Fprintf(w, "secrets redacted\t%d\n", r.Redactions)
	if r.UnknownTypes+r.UnknownFields > 0 {
		fmt.Fprintf(w, "unknown types / fields kept\t%d / %d\n", r.UnknownTypes, r.UnknownFields)
	}
	r.producerCounts.print(w)
	w.Flush()
	if len(r.Files) > 0 {
		fmt.Fprintln(e.stdout, "\nfiles:")
		w = tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "  PATH\tGEN\tOFFSET\tSIZE\tLAG\t")
		for _, f := range r.Files {
			state := ""
			switch {
			case f.Gone:
				state = "(gone)"
			case f.NotSeen:
				state = "(not seen yet)"
			case f.Missing:
				state = "(missing from the folder)"
			}
			fmt.Fprintf(w, "  %s\t%d\t%d\t%d\t%d\t%s\n", f.Path, f.Generation, f.Offset, f.Size, f.Lag, state)
		}
		w.Flush()
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintln(e.stdout, "\nskipped files:")
		for _, s := range r.Skipped {
			fmt.Fprintf(e.stdout, "  %s: %s\n", s.Name, s.Reason)
		}
	}
	return nil
}

// fileLags matches the live generations to the files of the logs folder by
// identity (device and inode, so a file renamed, replaced or restored
// while no daemon ran is not mistaken for the generation of its name) and
// reports each with its lag. A file no generation follows is listed as not
// seen, its whole size as lag: a stopped daemon's lag is not 0.
func fileLags(logs string, gens []index.FileStatus) []fileStatus {
	type file struct {
		name string
		size int64
	}
	present := map[[2]uint64]file{}
	if entries, err := os.ReadDir(logs); err == nil {
		for _, en := range entries {
			if !strings.HasSuffix(en.Name(), ".jsonl") || !en.Type().IsRegular() {
				continue
			}
			fi, err := en.Info()
			if err != nil {
				continue
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				present[[2]uint64{uint64(st.Dev), st.Ino}] = file{en.Name(), fi.Size()}
			}
		}
	}
	out := []fileStatus{}
	for _, g := range gens {
		f := fileStatus{Path: g.Path, Generation: g.Generation, Offset: g.Offset, Line: g.Line, Gone: g.Gone}
		if !g.Gone {
			k := [2]uint64{g.Dev, g.Ino}
			if pf, ok := present[k]; ok {
				f.Path, f.Size, f.Lag = pf.name, pf.size, max(0, pf.size-g.Offset)
				delete(present, k)
			} else {
				f.Missing = true
			}
		}
		out = append(out, f)
	}
	for _, pf := range present {
		out = append(out, fileStatus{Path: pf.name, Size: pf.size, Lag: pf.size, NotSeen: true})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Generation < out[j].Generation
	})
	return out
}

// daemonState finds out, without disturbing it, whether a daemon serves the
// workspace: it answers a ping on the socket; otherwise /proc/locks (Linux)
// tells whether a process holds the index lock (an ingest, or a daemon that
// does not answer).
func daemonState(ctx context.Context, p paths) daemonInfo {
	d := daemonInfo{Socket: server.SocketPath(p.cache)}
	cctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	var out pingReply
	if err := server.NewClient(d.Socket).Call(cctx, "ping", struct{}{}, &out); err == nil {
		d.Running, d.PID = true, out.PID
		return d
	}
	if pid := flockHolder(filepath.Join(p.cache, index.LockFileName)); pid > 0 {
		d.PID = pid
		d.Holder = "a process that does not answer on the socket"
		if processCommand(pid) == "ingest" {
			d.Holder = "`continuity ingest`"
		}
	}
	return d
}

// flockHolder is the pid holding a flock on the file at path, by
// /proc/locks; 0 when none, or it cannot tell.
func flockHolder(path string) int {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
	want := ":" + strconv.FormatUint(st.Ino, 10)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" || !strings.HasSuffix(f[5], want) {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil {
			return pid
		}
	}
	return 0
}
