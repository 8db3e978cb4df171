package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/praxis-os/continuity/follow/lexicon"
	"github.com/praxis-os/continuity/index"
)

// DiskUsage is what the index takes on disk beside the logs it is built
// from (`status`): the whole cache folder and its parts. Sizes are the
// files' lengths in bytes (SQLite's write-ahead logs and shared-memory
// files counted with their database).
type DiskUsage struct {
	// Logs: the logs of the conversations folder (compressed rotated
	// logs at their compressed size).
	Logs int64 `json:"logs_bytes"`
	// Cache: every file under the cache folder, the parts below and
	// whatever else is there (lock, socket excluded: not regular files).
	Cache int64 `json:"cache_bytes"`
	// Index: index.db (events, vectors, sessions, ...).
	Index int64 `json:"index_db_bytes"`
	// FullText: fulltext.db, the FTS5 index.
	FullText int64 `json:"fulltext_bytes"`
	// BM25: the bm25 engine's segments (folder bm25).
	BM25 int64 `json:"bm25_bytes"`
	// Snapshots: vector snapshots (vectors-*.snap), when there are any.
	Snapshots int64 `json:"vector_snapshot_bytes"`
	// Ratio: Cache / Logs (0 when there are no logs).
	Ratio float64 `json:"ratio_to_logs"`
}

// diskUsage measures the cache folder cache against the logs folder logs.
// A folder that does not exist counts 0; a file that vanishes while it is
// walked is skipped.
func diskUsage(cache, logs string) DiskUsage {
	var d DiskUsage
	if present, _ := logFiles(logs); present != nil {
		for _, f := range present {
			d.Logs += f.size
		}
	}
	filepath.WalkDir(cache, func(path string, en fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return nil // unreadable: counted as nothing, never an error of status
		}
		if !en.Type().IsRegular() {
			return nil
		}
		fi, err := en.Info()
		if err != nil {
			return nil
		}
		n := fi.Size()
		d.Cache += n
		rel, _ := filepath.Rel(cache, path)
		base := filepath.Base(rel)
		switch {
		case strings.HasPrefix(rel, lexicon.DirName+string(filepath.Separator)):
			d.BM25 += n
		case sqliteFile(base, index.FileName):
			d.Index += n
		case sqliteFile(base, index.FullTextFileName):
			d.FullText += n
		case strings.HasPrefix(base, "vectors-") && strings.HasSuffix(base, ".snap") && !strings.Contains(rel, string(filepath.Separator)):
			d.Snapshots += n
		}
		return nil
	})
	if d.Logs > 0 {
		d.Ratio = float64(d.Cache) / float64(d.Logs)
	}
	return d
}

// sqliteFile reports whether base is the database name or its -wal,
// -shm or -journal file.
func sqliteFile(base, name string) bool {
	switch base {
	case name, name + "-wal", name + "-shm", name + "-journal":
		return true
	}
	return false
}

// DiskUsage measures the workspace's index on disk against its logs.
func (c *Client) DiskUsage() DiskUsage { return diskUsage(c.ws.Cache, c.ws.Logs) }

// Summary is the index's size beside the logs', in words: "4.1 MiB, 3.2×
// the logs (1.3 MiB)".
func (d DiskUsage) Summary() string {
	if d.Logs == 0 {
		return HumanBytes(d.Cache) + " (no logs)"
	}
	return fmt.Sprintf("%s, %.1f× the logs (%s)", HumanBytes(d.Cache), d.Ratio, HumanBytes(d.Logs))
}

// Parts names the parts of the cache and their sizes: "index.db 3.0 MiB,
// fulltext.db 0.8 MiB, bm25 0.2 MiB, vector snapshot 0.1 MiB, other 4 KiB"
// (a part of size 0 is left out).
func (d DiskUsage) Parts() string {
	var parts []string
	other := d.Cache - d.Index - d.FullText - d.BM25 - d.Snapshots
	for _, p := range []struct {
		name string
		n    int64
	}{{index.FileName, d.Index}, {index.FullTextFileName, d.FullText}, {"bm25 segments", d.BM25}, {"vector snapshot", d.Snapshots}, {"other", other}} {
		if p.n > 0 {
			parts = append(parts, p.name+" "+HumanBytes(p.n))
		}
	}
	return strings.Join(parts, ", ")
}
