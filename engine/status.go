package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/praxis-os/continuity/follow/embedding"
	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/importer"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/logformat"
	"github.com/praxis-os/continuity/server"
	"github.com/praxis-os/continuity/share"
)

// StatusReport is `continuity status`: whether a daemon runs, where the
// index is in each log, what it holds and what waits.
type StatusReport struct {
	Workspace string     `json:"workspace"`
	Daemon    DaemonInfo `json:"daemon"`
	LagBytes  int64      `json:"lag_bytes"` // bytes of the logs not indexed yet, all files
	// UnfinishedBytes: of LagBytes, those after the last newline of a
	// file: a line being written, indexed once its newline comes.
	UnfinishedBytes int64 `json:"unfinished_bytes"`
	Events          int64 `json:"events"`
	Exchanges       int64 `json:"exchanges"`
	Sessions        int64 `json:"sessions"`
	// Rejects counts every line 'continuity rejects' lists; Rejected
	// splits them (the count of "rejected lines" in status and doctor
	// alike is Rejected.Invalid).
	Rejects           int64        `json:"rejects"`
	Rejected          RejectCounts `json:"rejected"`
	Redactions        int64        `json:"redactions"`
	DuplicatesSkipped int64        `json:"duplicates_skipped"`
	// ReusedIDs: of the duplicates, the lines whose id another line
	// with other content used first (listed by rejects).
	ReusedIDs     int64            `json:"reused_ids"`
	UnknownTypes  int64            `json:"unknown_types"`
	UnknownFields int64            `json:"unknown_fields"`
	EventsByType  map[string]int64 `json:"events_by_type"`
	// Embedder is the identity of the embedder described: the running
	// daemon's when one answers (its provider and model while a remote
	// one has not learned its dimension), else the configured one;
	// EmbedderInfo says which, what it is and (Note) when the two differ.
	Embedder     string           `json:"embedder"`
	EmbedderInfo *EmbedderStatus  `json:"embedder_info,omitempty"`
	Vectors      map[string]int64 `json:"vectors"`
	EmbedPending int64            `json:"embed_pending"`
	Embedding    *EmbedProgress   `json:"embedding,omitempty"`
	// VectorMemory: of the running daemon's vectors, how many have their
	// codes in memory (the others are read from the index by the searches
	// that score them: the same results, slower), and its budget.
	VectorMemory *VectorMemory `json:"vector_memory,omitempty"`
	// FullTextPending: exchanges not in the full-text index yet (plus
	// deletions not applied); -1 when it is not built yet.
	FullTextPending int64 `json:"fulltext_pending"`
	// BM25: the daemon's bm25 engine (lexicon.Engine); null when no
	// daemon answers.
	BM25 *BM25Status `json:"bm25"`
	// Retention: the running daemon's retention (daemon --retain); null
	// without a daemon.
	Retention *RetentionStatus `json:"retention,omitempty"`
	// Import: the agents whose transcripts the daemon follows (daemon
	// --import); null when no daemon answers or it follows none.
	Import *importer.LiveReport `json:"import"`
	// Share: team memory (daemon --share): what is shipped, the backlog
	// (events, age), what was pulled; null when no daemon shares.
	Share   *share.Report       `json:"share,omitempty"`
	Files   []FileStatus        `json:"files"`
	Skipped []index.SkippedFile `json:"skipped_files"`
	// Edits: the logs edited in place whose index followed the edit,
	// per file; EditTotals sums them.
	Edits      []EditStatus `json:"edits"`
	EditTotals EditStatus   `json:"edit_totals"`
	// SyncCopies: the sync tools' conflict copies in the logs folder,
	// and what was done with them.
	SyncCopies []SyncCopy `json:"sync_copies"`
	// Disk: the index's size on disk beside the logs'.
	Disk DiskUsage `json:"disk"`

	ProducerCounts
}

// EditStatus sums up the edits in place of one log file (protocol.md,
// section 8): how many, the lines they kept, changed, removed and added.
type EditStatus = index.EditStatus

// BM25Status is the daemon's bm25 engine's state.
type BM25Status = lexicon.Status

// FileStatus is one log file in `status`: where the index is in it.
type FileStatus struct {
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
	// Compressed: a gzip-compressed rotated log (x.jsonl.1.gz): Offset
	// and Line are of its content, Size of the file; it is read whole.
	Compressed bool `json:"compressed,omitempty"`
}

// DaemonInfo says whether a process indexes the workspace now.
type DaemonInfo struct {
	Running bool   `json:"running"`          // a daemon answers on the socket
	PID     int    `json:"pid,omitempty"`    // the daemon's, or the lock holder's
	Holder  string `json:"holder,omitempty"` // without a daemon: "ingest" or another process holding the lock
	Socket  string `json:"socket"`
}

// RejectCounts splits the lines 'continuity rejects' lists. "Rejected
// lines", in status and doctor alike, are the Invalid ones: lines an agent
// wrote that could not be indexed (its mistake, to fix). The lines of
// forgotten sessions kept out (after a rebuild, read back and kept out
// again) and identical replays of lines already indexed are listed too,
// but are no one's mistake: both outputs name them apart. So are the
// invalid lines of a sync tool's conflict copy that its log has too (one
// mistake synced into two files: counted once, in its log).
type RejectCounts struct {
	Invalid   int64 `json:"invalid"`
	Forgotten int64 `json:"forgotten_sessions_lines"`
	Replayed  int64 `json:"replayed"`
	Copied    int64 `json:"in_conflict_copies,omitempty"`
}

func rejectCounts(st *index.Status) RejectCounts {
	return RejectCounts{Invalid: st.Rejects - st.RejectsForgotten - st.RejectsReplayed - st.RejectsCopied,
		Forgotten: st.RejectsForgotten, Replayed: st.RejectsReplayed, Copied: st.RejectsCopied}
}

// Note says what the count of rejected lines counts, and what else
// 'continuity rejects' lists: the same words in status and doctor.
func (c RejectCounts) Note() string {
	s := "lines not valid, each listed by 'continuity rejects'"
	var also []string
	if c.Forgotten > 0 {
		also = append(also, fmt.Sprintf("%d %s of forgotten sessions kept out", c.Forgotten, words.Plural(int(c.Forgotten), "line", "lines")))
	}
	if c.Replayed > 0 {
		also = append(also, fmt.Sprintf("%d identical %s of lines already indexed", c.Replayed, words.Plural(int(c.Replayed), "replay", "replays")))
	}
	if c.Copied > 0 {
		also = append(also, fmt.Sprintf("%d %s of sync conflict copies that their logs have too", c.Copied, words.Plural(int(c.Copied), "line", "lines")))
	}
	if len(also) > 0 {
		s += ", which also lists, not counted here, " + strings.Join(also, " and ")
	}
	return s
}

// ProducerCounts are the lines of `status` about lines read otherwise
// than written (protocol.md, "Producer mistakes") or not stored because
// their session was forgotten: each is a trace of something that would
// otherwise go unnoticed.
type ProducerCounts struct {
	TimestampsNoOffset int64 `json:"timestamps_without_offset"` // read in the daemon's local time zone
	AIFromAlias        int64 `json:"ai_from_alias"`             // "assistant" read as "ai"
	TimestampsAhead    int64 `json:"timestamps_ahead"`          // dated after the moment they were read
	BOMsSkipped        int64 `json:"byte_order_marks_skipped"`  // UTF-8 byte order marks skipped at the start of a file
	ForgottenSkipped   int64 `json:"forgotten_skipped"`         // lines of forgotten sessions not indexed again
	Forgotten          int64 `json:"forgotten_sessions"`        // sessions removed by `forget`
	// UnknownFieldNames: per unknown field of events of known types, how
	// many events carry it (an answer written as "response" shows here).
	UnknownFieldNames map[string]int64 `json:"unknown_field_names"`
}

// VectorMemory is how much of the daemon's vector space is in memory.
type VectorMemory struct {
	Vectors   int `json:"vectors"`
	InMemory  int `json:"in_memory"`
	BudgetMiB int `json:"budget_mib"` // daemon --vector-memory
}

// EmbedProgress is the embedding progress in `status`.
type EmbedProgress struct {
	Done    int64   `json:"done"`    // exchanges with a vector of the current embedder
	Total   int64   `json:"total"`   // exchanges
	Percent float64 `json:"percent"` // Done / Total
	// Rate (exchanges per second) and ETASeconds come from a running
	// daemon's embed worker; 0 when no daemon runs or it has not
	// measured yet.
	Rate       float64 `json:"rate"`
	ETASeconds float64 `json:"eta_seconds"`
}

// pingTimeout bounds the ping of status and doctor.
const pingTimeout = time.Second

// viewTimeout bounds the calls that ask the daemon how a view stands.
const viewTimeout = 500 * time.Millisecond

// Status reports on the workspace, read from the index (read-only) and,
// when a daemon answers, from the daemon.
func (c *Client) Status(ctx context.Context) (StatusReport, error) {
	db, err := openReader(c.ws)
	if err != nil {
		return StatusReport{}, err
	}
	defer db.Close()
	st, err := db.Status(ctx)
	if err != nil {
		return StatusReport{}, err
	}
	r := StatusReport{
		Workspace: c.ws.Root, Events: st.Events, Exchanges: st.Exchanges, Sessions: st.Sessions,
		Rejects: st.Rejects, Rejected: rejectCounts(&st), Redactions: st.Redactions, DuplicatesSkipped: st.DuplicatesSkipped, ReusedIDs: st.RejectsReusedID, UnknownTypes: st.UnknownTypes,
		UnknownFields: st.UnknownFields, EventsByType: st.EventsByType, Skipped: st.Skipped,
		Files: []FileStatus{}, ProducerCounts: ProducerCounts{
			TimestampsNoOffset: st.TimestampsNoOffset, AIFromAlias: st.AIFromAlias, BOMsSkipped: st.BOMsSkipped,
			TimestampsAhead:  st.TimestampsAhead,
			ForgottenSkipped: st.ForgottenSkipped, Forgotten: st.Forgotten,
			UnknownFieldNames: st.UnknownFieldNames,
		},
	}
	if r.Skipped == nil {
		r.Skipped = []index.SkippedFile{}
	}
	r.Edits = st.Edits
	if r.Edits == nil {
		r.Edits = []EditStatus{}
	}
	for _, ed := range r.Edits {
		t := &r.EditTotals
		t.Edits, t.Kept, t.Changed, t.Removed, t.Added = t.Edits+ed.Edits, t.Kept+ed.Kept, t.Changed+ed.Changed, t.Removed+ed.Removed, t.Added+ed.Added
		if ed.Last.After(t.Last) {
			t.Last = ed.Last
		}
	}
	r.Vectors, r.EmbedPending = st.Vectors, -1
	switch r.FullTextPending, err = db.FullTextPending(ctx); {
	case errors.Is(err, index.ErrNoFullText):
		r.FullTextPending = -1
	case err != nil:
		return StatusReport{}, err
	}
	r.Daemon = c.daemonState(ctx)
	if err := c.embedStatus(ctx, db, &r); err != nil {
		return StatusReport{}, err
	}
	if r.Daemon.Running {
		var bm BM25Status
		if c.viewReport(ctx, "bm25", &bm) == nil {
			r.BM25 = &bm
		}
		var imp importer.LiveReport
		if c.viewReport(ctx, "import", &imp) == nil && len(imp.Agents) > 0 {
			r.Import = &imp
		}
		var sh share.Report
		if c.viewReport(ctx, "share", &sh) == nil && sh.Team != "" {
			r.Share = &sh
		}
		var rs RetentionStatus
		if c.viewReport(ctx, "retention", &rs) == nil {
			r.Retention = &rs
		}
	}
	if r.SyncCopies, err = syncCopies(ctx, c.ws.Logs, db); err != nil {
		return StatusReport{}, err
	}
	r.Files = fileLags(c.ws.Logs, st.Files)
	for _, f := range r.Files {
		r.LagBytes += f.Lag
		if f.Lag > 0 && !f.Compressed {
			r.UnfinishedBytes += min(f.Lag, unfinishedTail(filepath.Join(c.ws.Logs, f.Path), f.Size))
		}
	}
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Path < r.Files[j].Path })
	r.Disk = c.DiskUsage()
	return r, nil
}

// embedStatus fills in the embedder and how far its vectors are: the
// running daemon's (which embeds) when one answers, noting when this
// command's settings choose another; else the configured one (nothing
// when it cannot be built).
func (c *Client) embedStatus(ctx context.Context, db *index.DB, r *StatusReport) error {
	var w embedding.Progress
	daemon := false
	if r.Daemon.Running {
		w, daemon = c.daemonEmbedder(ctx)
	}
	var es EmbedderStatus
	id := ""
	if daemon {
		if w.Ready && w.Vectors > 0 && w.MemoryBytes > 0 {
			r.VectorMemory = &VectorMemory{Vectors: w.Vectors, InMemory: w.CodesInMemory, BudgetMiB: w.MemoryBytes >> 20}
		}
		es = ofDaemon(w)
		emb, err := c.embedder()
		compareEnvironment(&es, emb, err)
		id = es.Space
		r.Embedder = es.Name()
	} else {
		emb, err := c.embedder()
		if err != nil {
			return nil
		}
		es = ofEnvironment(emb)
		var ok bool
		if id, ok = KnownIdentity(emb); !ok {
			r.Embedder = emb.Identity()
			r.EmbedderInfo = &es
			return nil
		}
		r.Embedder = id
	}
	r.EmbedderInfo = &es
	if id == "" {
		// The daemon's remote embedder has not learned its dimension:
		// its count is all there is.
		r.EmbedPending = w.Pending
		return nil
	}
	var err error
	if r.EmbedPending, err = db.CountPending(ctx, id); err != nil {
		return err
	}
	done, pending := r.Vectors[id], r.EmbedPending
	p := &EmbedProgress{Done: done, Total: done + pending}
	if p.Total > 0 {
		p.Percent = 100 * float64(done) / float64(p.Total)
	}
	// The rate, when a daemon answers and embeds for this space (not
	// while its embedder fails: the last rate says nothing then).
	if pending > 0 && daemon && w.Identity == id && w.Rate > 0 && w.LastError == "" {
		p.Rate = w.Rate
		p.ETASeconds = float64(pending) / w.Rate
	}
	r.Embedding = p
	return nil
}

// viewReport asks the daemon how the named view stands (its Report); an
// error when no daemon answers quickly (or an older one, without the
// view).
func (c *Client) viewReport(ctx context.Context, view string, resp any) error {
	cctx, cancel := context.WithTimeout(ctx, viewTimeout)
	defer cancel()
	return server.NewClient(server.SocketPath(c.ws.Cache)).Call(cctx, view+"_status", struct{}{}, resp)
}

// logFile is a log of the logs folder (logformat.ParseLogName): its name,
// size and whether it is compressed, by device and inode (logFiles).
type logFile struct {
	name       string
	size       int64
	compressed bool
}

// logFiles lists the logs of the logs folder (regular files named as
// logformat.ParseLogName reads) by device and inode; none when the folder
// does not exist.
func logFiles(logs string) (map[[2]uint64]logFile, error) {
	entries, err := os.ReadDir(logs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	present := map[[2]uint64]logFile{}
	for _, en := range entries {
		ln, ok := logformat.ParseLogName(en.Name())
		if !ok || !en.Type().IsRegular() {
			continue
		}
		fi, err := en.Info()
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			present[[2]uint64{uint64(st.Dev), st.Ino}] = logFile{en.Name(), fi.Size(), ln.Compressed}
		}
	}
	return present, nil
}

// fileLags matches the live generations to the files of the logs folder by
// identity (device and inode, so a file renamed, replaced or restored
// while no daemon ran is not mistaken for the generation of its name) and
// reports each with its lag. A file no generation follows is listed as not
// seen, its whole size as lag: a stopped daemon's lag is not 0.
func fileLags(logs string, gens []index.FileStatus) []FileStatus {
	present, _ := logFiles(logs)
	out := []FileStatus{}
	for _, g := range gens {
		f := FileStatus{Path: g.Path, Generation: g.Generation, Offset: g.Offset, Line: g.Line, Gone: g.Gone}
		if !g.Gone {
			k := [2]uint64{g.Dev, g.Ino}
			if pf, ok := present[k]; ok {
				f.Path, f.Size, f.Lag, f.Compressed = pf.name, pf.size, max(0, pf.size-g.Offset), pf.compressed
				if pf.compressed {
					// Offsets are of the content, the size of the
					// file: a compressed log is read whole at once.
					f.Lag = 0
				}
				delete(present, k)
			} else {
				f.Missing = true
			}
		}
		out = append(out, f)
	}
	for _, pf := range present {
		out = append(out, FileStatus{Path: pf.name, Size: pf.size, Lag: pf.size, NotSeen: true, Compressed: pf.compressed})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Generation < out[j].Generation
	})
	return out
}

// Indexer is the process that indexes the workspace continuously (a
// daemon, or an MCP server indexing in-process), when one answers on the
// socket: its pid. What an ingest that finds the workspace locked says
// (nothing for it to do: that process indexes every line as it is
// written).
func (c *Client) Indexer(ctx context.Context) (pid int, ok bool) {
	d := c.daemonState(ctx)
	return d.PID, d.Running
}

// daemonState finds out, without disturbing it, whether a daemon serves
// the workspace: it answers a ping on the socket; otherwise /proc/locks
// (Linux) tells whether a process holds the index lock (an ingest, or a
// daemon that does not answer).
func (c *Client) daemonState(ctx context.Context) DaemonInfo {
	d := DaemonInfo{Socket: server.SocketPath(c.ws.Cache)}
	cctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	var out PingReply
	if err := server.NewClient(d.Socket).Call(cctx, "ping", struct{}{}, &out); err == nil {
		d.Running, d.PID = true, out.PID
		return d
	}
	if pid := flockHolder(filepath.Join(c.ws.Cache, index.LockFileName)); pid > 0 {
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
