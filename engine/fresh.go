package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/internal/words"
	"github.com/praxis-os/continuity/resume"
	"github.com/praxis-os/continuity/search"
)

// Read your writes: an agent that logs an exchange and searches for it at
// once must find it, or be told plainly that it is not searchable yet —
// never that it was not discussed.
//
// A search answered by the daemon (or an MCP server indexing in-process)
// first waits, at most SearchWait, until every complete line written to
// the logs before the search arrived is indexed (the watcher's committed
// offsets have reached the files' complete lines), and the newest
// exchanges have their vectors (when a handful are missing: a backfill is
// not waited for). The full-text index needs no wait: in the indexing
// process a search first indexes what it lacks (index.DB.Lexical). What is
// still not searchable after the wait is said in the answer (Pending). A
// search answered without a daemon cannot wait (nothing indexes): it says
// how much of the logs is not indexed, and why.

// SearchWait bounds how long a search waits for the lines written before
// it to become searchable.
const SearchWait = 2 * time.Second

// freshPoll is how often the wait looks again.
const freshPoll = 20 * time.Millisecond

// maxTailCheck: the unindexed end of a log is read to tell complete lines
// from a line still being written when it is at most this long; a longer
// one counts as unindexed whole.
const maxTailCheck = 1 << 20

// maxLinesWait: a search waits for at most this many unindexed lines (the
// lines just written); more is a backfill, reported without waiting.
const maxLinesWait = 1000

// Embedding is waited for when at most maxVectorWait of the newest
// exchanges (the last recentRows rows) lack a vector: a few just logged,
// not a backfill or a re-embedding.
const (
	maxVectorWait = 64
	recentRows    = 1000
)

// Pending is what of the logs a search or a resume pack could not see
// (resume.Pending: the pack carries it too).
type Pending = resume.Pending

// awaitSearchable is the daemon's wait (see above): nil when everything
// written before the call is searchable. vectors gives the identity of
// the vector space the search uses ("" when none).
//
// what names the asker in the note: "search" or "resume" (a resume pack
// waits the same way, so that a session just logged is the latest).
func (e *Engine) awaitSearchable(ctx context.Context, mode search.Mode, what string) *Pending {
	deadline := time.Now().Add(SearchWait)
	var behind unindexed
	for {
		var err error
		if behind, err = unindexedLines(ctx, e.db, e.ws.Logs); err != nil {
			e.log.Debug("search: cannot tell what is indexed", "err", err)
			return nil
		}
		// Lines just written are waited for; a backfill (more lines, or
		// more than maxTailCheck bytes in one file) is not.
		if behind.bytes == 0 || behind.lines < 0 || behind.lines > maxLinesWait ||
			!time.Now().Before(deadline) || !sleepCtx(ctx, freshPoll) {
			break
		}
	}
	if behind.bytes > 0 {
		again := "search again in a moment before concluding that anything was not discussed"
		if what != "search" {
			again = fmt.Sprintf("ask for the %s again in a moment to have %s in it", what, words.Plural(int(behind.count()), "it", "them"))
		}
		return &Pending{Bytes: behind.bytes, Lines: behind.lines, Note: fmt.Sprintf("%s written to the logs just before this %s %s not indexed yet (still being indexed): %s",
			behind.words(), what, words.Plural(int(behind.count()), "is", "are"), again)}
	}
	id := e.vectorIdentity(mode)
	if id == "" {
		return nil
	}
	mark, err := e.db.ChangeMark(ctx)
	if err != nil {
		return nil
	}
	var missing int64
	for {
		if missing, err = e.db.ExchangesWithoutVector(ctx, id, max(0, mark.Seq-recentRows), mark.Seq); err != nil || missing == 0 {
			return nil
		}
		if missing > maxVectorWait || !time.Now().Before(deadline) || !sleepCtx(ctx, freshPoll) {
			break
		}
		e.embedding.Notify()
	}
	if missing > maxVectorWait {
		return nil // a backfill or a re-embedding: VectorsMissing and status say so
	}
	return &Pending{Unembedded: missing, Note: fmt.Sprintf("the %d %s %s no vector yet: found by %s words only for now",
		missing, words.Plural(int(missing), "newest exchange", "newest exchanges"), words.Plural(int(missing), "has", "have"), words.Plural(int(missing), "its", "their"))}
}

// vectorIdentity is the identity of the vector space a search of this
// mode uses, "" when it uses none.
func (e *Engine) vectorIdentity(mode search.Mode) string {
	if mode == search.ModeLexical || e.answerer.searcher.VectorsMissing() != "" {
		return ""
	}
	if sp := e.embedding.Space(); sp != nil {
		return sp.Identity()
	}
	return ""
}

// localPending is what a search answered in this process, from the index
// opened read-only, says of what it cannot see: lines of the logs not
// indexed yet, and exchanges indexed but not yet in the full-text index
// (which only the indexing process writes: a reader cannot catch it up,
// and a search that found nothing must not read as "not discussed").
// daemon says whether a daemon runs (it indexes them in a moment; the
// answer was made here because another embedder was asked for) or not
// (nothing indexes them until one starts). It does not wait.
func localPending(ctx context.Context, db *index.DB, logs, what string, daemon bool) *Pending {
	var p Pending
	var notes []string
	if behind, err := unindexedLines(ctx, db, logs); err == nil && behind.bytes > 0 {
		n := behind.count()
		p.Bytes, p.Lines = behind.bytes, behind.lines
		if daemon {
			notes = append(notes, fmt.Sprintf("%s of the logs %s not indexed yet (the daemon is indexing %s), so this %s cannot see %s",
				behind.words(), words.Plural(int(n), "is", "are"), words.Plural(int(n), "it", "them"), what, words.Plural(int(n), "it", "them")))
		} else {
			notes = append(notes, fmt.Sprintf("%s of the logs %s not indexed: no daemon is running to index %s "+
				"(start 'continuity daemon', or run 'continuity ingest'), so this %s cannot see %s", behind.words(), words.Plural(int(n), "is", "are"), words.Plural(int(n), "it", "them"), what, words.Plural(int(n), "it", "them")))
		}
	}
	if n, err := db.ExchangesNotInFullText(ctx); err == nil && n > 0 {
		p.NotInFullText = n
		who := "the daemon is adding " + words.Plural(int(n), "it", "them")
		if !daemon {
			who = "no daemon is running to add " + words.Plural(int(n), "it", "them") + ": start 'continuity daemon' or run 'continuity ingest'"
		}
		notes = append(notes, fmt.Sprintf("%d %s not in the full-text index yet, so this %s finds %s by %s meaning only (%s)",
			n, words.Plural(int(n), "indexed exchange is", "indexed exchanges are"), what, words.Plural(int(n), "it", "them"), words.Plural(int(n), "its", "their"), who))
	}
	if len(notes) == 0 {
		return nil
	}
	p.Note = strings.Join(notes, "; ")
	return &p
}

// unindexed is what the logs hold past what the index committed: bytes of
// complete lines, and how many lines (-1: not counted, too long to read).
type unindexed struct {
	bytes, lines int64
}

func (u unindexed) count() int64 {
	if u.lines > 0 {
		return u.lines
	}
	return u.bytes
}

// words says u in words: "3 lines", "1 line", or bytes when the lines
// were not counted.
func (u unindexed) words() string {
	switch {
	case u.lines == 1:
		return "1 line"
	case u.lines > 0:
		return fmt.Sprintf("%d lines", u.lines)
	}
	return fmt.Sprintf("%d bytes of lines", u.bytes)
}

// unindexedLines is how many bytes (and lines) of complete lines the logs
// (logFiles) hold past what the index has committed of them
// (generations matched by device and inode; a file no generation follows
// counts whole). A line still being written (no newline yet) is not
// counted: it is not written until it ends.
func unindexedLines(ctx context.Context, db *index.DB, logs string) (unindexed, error) {
	var total unindexed
	gens, err := db.Generations(ctx)
	if err != nil {
		return total, err
	}
	offsets := make(map[[2]uint64]int64, len(gens))
	for _, g := range gens {
		if !g.Gone {
			offsets[[2]uint64{g.Dev, g.Ino}] = g.Offset
		}
	}
	files, err := logFiles(logs)
	if err != nil {
		return total, err
	}
	for k, f := range files {
		off, seen := offsets[k]
		if f.compressed {
			// Read whole at once, its offsets of the content: one
			// not read yet is a backfill (its lines not counted).
			if !seen {
				total.bytes += f.size
				total.lines = -1
			}
			continue
		}
		if f.size > off {
			b, l := completeLines(filepath.Join(logs, f.name), off, f.size)
			total.bytes += b
			if total.lines >= 0 && l >= 0 {
				total.lines += l
			} else {
				total.lines = -1
			}
		}
	}
	return total, nil
}

// completeLines is how many bytes of complete lines the file at path
// holds in [from, size) (up to its last newline there), and how many
// lines; size-from and -1 when that range is too long to read
// (maxTailCheck) or cannot be read.
func completeLines(path string, from, size int64) (bytes, lines int64) {
	n := size - from
	if n > maxTailCheck {
		return n, -1
	}
	f, err := os.Open(path)
	if err != nil {
		return n, -1
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := f.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, -1
	}
	buf = buf[:k]
	end := bytesLastIndex(buf, '\n') + 1
	for _, c := range buf[:end] {
		if c == '\n' {
			lines++
		}
	}
	return int64(end), lines
}

func bytesLastIndex(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// sleepCtx sleeps d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
