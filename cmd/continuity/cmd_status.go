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
	"text/tabwriter"

	"github.com/praxis-os/continuity/index"
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
}

type statusReport struct {
	Workspace         string           `json:"workspace"`
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
	FullTextPending int64               `json:"fulltext_pending"`
	Files           []fileStatus        `json:"files"`
	Skipped         []index.SkippedFile `json:"skipped_files"`
}

func runStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "status [--json]", `
Show what the index holds: per log file its generation, committed offset,
size and lag (bytes not indexed yet); counts of events by type, exchanges,
sessions, rejected lines and duplicates skipped; what waits for the
full-text index and for a vector; files skipped as a whole
(symlinks, FIFOs, unreadable) with the reason.`)
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
		Files: []fileStatus{},
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
	for _, f := range st.Files {
		fsz := fileStatus{Path: f.Path, Generation: f.Generation, Offset: f.Offset, Line: f.Line, Gone: f.Gone}
		if !f.Gone {
			if fi, err := os.Lstat(filepath.Join(p.logs, f.Path)); err == nil && fi.Mode().IsRegular() {
				fsz.Size = fi.Size()
				fsz.Lag = max(0, fsz.Size-fsz.Offset)
			}
		}
		r.Files = append(r.Files, fsz)
	}
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Path < r.Files[j].Path })
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "workspace\t%s\n", r.Workspace)
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
	w.Flush()
	if len(r.Files) > 0 {
		fmt.Fprintln(e.stdout, "\nfiles:")
		w = tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "  PATH\tGEN\tOFFSET\tSIZE\tLAG\t")
		for _, f := range r.Files {
			state := ""
			if f.Gone {
				state = "(gone)"
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
