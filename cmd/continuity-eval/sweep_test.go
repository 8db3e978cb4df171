package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/praxis-os/continuity/embed"
	"github.com/praxis-os/continuity/index"
	"github.com/praxis-os/continuity/search"
	"github.com/praxis-os/continuity/vectors"
)

// TestSweep is the tuning harness behind search.DefaultOptions and the
// worker's text recipe: it indexes every haystack once, builds the
// alternative vector spaces, then scores each variant of sweepVariants —
// first the tuning steps, cumulatively, then the alternatives that were
// not kept. It runs only with CONTINUITY_EVAL_SWEEP=1 and the dataset:
//
//	CONTINUITY_EVAL_SWEEP=1 go test -tags sqlite_fts5 -run TestSweep -v ./cmd/continuity-eval
func TestSweep(t *testing.T) {
	if os.Getenv("CONTINUITY_EVAL_SWEEP") == "" {
		t.Skip("set CONTINUITY_EVAL_SWEEP=1 to run the tuning sweep")
	}
	ctx := context.Background()
	data := os.Getenv(EnvData)
	if data == "" {
		data = filepath.Join("..", "..", defaultData)
	}
	qs, err := loadQuestions(data)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embed.New(embed.Config{Provider: embed.ProviderHash})
	if err != nil {
		t.Fatal(err)
	}
	variants := sweepVariants()
	type haystack struct {
		ws     *workspace
		spaces map[string]*altSpace
	}
	var hs []haystack
	for _, q := range qs {
		ws, err := openWorkspace(ctx, filepath.Join(data, q.LogFile), emb)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.close()
		h := haystack{ws: ws, spaces: map[string]*altSpace{}}
		for _, v := range variants {
			if v.space == "" || h.spaces[v.space] != nil {
				continue
			}
			if h.spaces[v.space], err = buildSpace(ctx, ws, v.space); err != nil {
				t.Fatal(err)
			}
		}
		hs = append(hs, h)
	}

	ks := []int{5, 10}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tany@5\tall@5\tany@10\tall@10\tsess@5\tsess@10\t")
	for _, v := range variants {
		var scores []scored
		for i, h := range hs {
			cfg := search.Config{DB: h.ws.db, Embedder: emb, Vectors: h.ws.space, Options: v.Options}
			if sp := h.spaces[v.space]; sp != nil {
				cfg.Embedder, cfg.Vectors = sp.emb, func() *vectors.Space { return sp.v }
			}
			s, err := search.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Search(ctx, search.Query{Text: qs[i].Text, Mode: v.Mode, Limit: evalLimit(ks)})
			if err != nil {
				t.Fatal(err)
			}
			scores = append(scores, score(qs[i], res, ks, 0))
		}
		g := (&retrievalRun{ks: ks}).group(v.Name, "all", scores)
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", v.Name,
			g.RecallAny["@5"], g.RecallAll["@5"], g.RecallAny["@10"], g.RecallAll["@10"],
			g.SessionRecallAll["@5"], g.SessionRecallAll["@10"])
	}
	tw.Flush()
}

type sweepVariant struct {
	variant
	space string // an alternative vector space (buildSpace); "": the worker's
}

func sweepVariants() []sweepVariant {
	var vs []sweepVariant
	add := func(name string, mode search.Mode, space string, o search.Options) {
		vs = append(vs, sweepVariant{variant{Name: name, Mode: mode, Options: o}, space})
	}
	// The tuning steps, cumulative. The starting point: equal BM25 column
	// weights, vectors of user and ai text, RRF with the usual k=60.
	start := search.Options{RRFK: 60, UserWeight: 1, AIWeight: 1, VectorWeight: 1, KeepFillerWords: true}
	add("0 start: bm25", search.ModeLexical, "ua-256", start)
	add("0 start: vector", search.ModeVector, "ua-256", start)
	add("0 start: hybrid", search.ModeHybrid, "ua-256", start)
	o := start
	o.UserWeight, o.AIWeight = 5, 1
	add("1 +bm25 user 5, ai 1: bm25", search.ModeLexical, "ua-256", o)
	add("1 +bm25 user 5, ai 1: hybrid", search.ModeHybrid, "ua-256", o)
	add("2 +user-text vectors: vector", search.ModeVector, "", o)
	add("2 +user-text vectors: hybrid", search.ModeHybrid, "", o)
	o.RRFK, o.VectorWeight = 10, 0.3
	add("3 +rrf k=10, vector weight 0.3: hybrid", search.ModeHybrid, "", o)
	o.KeepFillerWords = false
	add("4 +filler words dropped: bm25", search.ModeLexical, "", o)
	add("4 +filler words dropped: hybrid", search.ModeHybrid, "", o)
	add("= defaults: bm25", search.ModeLexical, "", search.Options{})
	add("= defaults: vector", search.ModeVector, "", search.Options{})
	add("= defaults: hybrid", search.ModeHybrid, "", search.Options{})

	// Alternatives, each from the defaults.
	for _, w := range [][2]float64{{1, 1}, {3, 1}, {10, 1}} {
		add(fmt.Sprintf("bm25 user %g, ai %g: hybrid", w[0], w[1]), search.ModeHybrid, "", search.Options{UserWeight: w[0], AIWeight: w[1]})
	}
	for _, k := range []float64{30, 60} {
		add(fmt.Sprintf("rrf k=%g: hybrid", k), search.ModeHybrid, "", search.Options{RRFK: k})
	}
	for _, vw := range []float64{0.2, 0.5, 1} {
		add(fmt.Sprintf("vector weight %g: hybrid", vw), search.ModeHybrid, "", search.Options{VectorWeight: vw})
	}
	for _, vw := range []float64{0.2, 0.5, 1} {
		add(fmt.Sprintf("score fusion, vector weight %g: hybrid", vw), search.ModeHybrid, "", search.Options{Fusion: search.FusionScore, VectorWeight: vw})
	}
	add("depth 100: hybrid", search.ModeHybrid, "", search.Options{Depth: 100})
	for _, sp := range []string{"u-384", "u-512", "ua-512"} {
		add("vectors "+sp+": vector", search.ModeVector, sp, search.Options{})
		add("vectors "+sp+": hybrid", search.ModeHybrid, sp, search.Options{})
	}
	return vs
}

// altSpace is a vector space built by the harness, not the worker.
type altSpace struct {
	v   *vectors.Space
	emb embed.Embedder
}

// renamed gives an embedder the identity of an experimental space.
type renamed struct {
	embed.Embedder
	id string
}

func (r renamed) Identity() string { return r.id }

// buildSpace builds the space "<text>-<dim>" of a workspace: text "u" is
// the user's text (the worker's recipe), "ua" user and ai text
// (index.EmbedText); dim the builtin dimension.
func buildSpace(ctx context.Context, ws *workspace, name string) (*altSpace, error) {
	var text string
	var dim int
	if _, err := fmt.Sscanf(strings.Replace(name, "-", " ", 1), "%s %d", &text, &dim); err != nil {
		return nil, fmt.Errorf("space %q: %w", name, err)
	}
	e, err := embed.New(embed.Config{Provider: embed.ProviderHash, Dimension: dim})
	if err != nil {
		return nil, err
	}
	// Still "builtin:..." so that the builtin's default vector weight applies.
	r := renamed{e, e.Identity() + ":sweep-" + name}
	id := vectors.SpaceIdentity(r)
	items, err := ws.db.PendingEmbeddings(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	rows := make([]int64, len(items))
	for i, it := range items {
		rows[i] = it.Row
	}
	evs, err := ws.db.EventsByRows(ctx, rows)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(items))
	for i, it := range items {
		switch text {
		case "u":
			texts[i] = strings.TrimSpace(evs[it.Row].User)
			if texts[i] == "" {
				texts[i] = strings.TrimSpace(evs[it.Row].AI)
			}
		case "ua":
			texts[i] = index.EmbedText(evs[it.Row].User, evs[it.Row].AI)
		default:
			return nil, fmt.Errorf("space %q: unknown text %q", name, text)
		}
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if err := ws.db.StoreVectors(ctx, id, rows, vecs); err != nil {
		return nil, err
	}
	v, err := vectors.Load(ctx, ws.db, id)
	if err != nil {
		return nil, err
	}
	return &altSpace{v: v, emb: r}, nil
}
