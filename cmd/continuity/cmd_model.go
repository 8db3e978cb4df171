package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/praxis-os/continuity/embed/hf"
	"github.com/praxis-os/continuity/engine"
)

func runModel(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "pull":
			return runModelPull(ctx, e, args[1:])
		case "list":
			return runModelList(ctx, e, args[1:])
		case "rm":
			return runModelRemove(ctx, e, args[1:])
		}
	}
	fs := newFlags(e, "model pull|list|rm ...", modelHelp)
	if _, err := parse(e, fs, args); err != nil {
		return err
	}
	if len(args) == 0 {
		return usageError("want a subcommand: pull, list or rm (see --help)")
	}
	return usageError("unknown subcommand %q: want pull, list or rm (see --help)", args[0])
}

var modelHelp = `
Manage the models of the hf embedder (--embedder hf), kept in the model
cache: $` + hf.EnvModels + `, else $XDG_CACHE_HOME/continuity/models, else
~/.cache/continuity/models. Nothing is ever downloaded unless you run
'model pull'.

  continuity model pull NAME [--revision COMMIT] [--force]
      download a model from the Hugging Face hub at a pinned revision
  continuity model pull NAME --from DIR
      install a copy of a model folder you have (no network)
  continuity model list [--json]
      the installed models, their size and revision, whether they load
  continuity model rm NAME
      delete an installed model

Known models (NAME, or their hub id): ` + hf.KnownNames() + `.
Any other BERT model on the hub: its id (owner/name) and --revision.`

func runModelPull(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "model pull NAME [--revision COMMIT] [--force] | model pull [NAME] --from DIR", `
Download a model from the Hugging Face hub into the model cache, at a
pinned revision, with a progress bar: only the files the embedder reads
(config.json, model.safetensors, tokenizer.json, the sentence-transformers
configuration) and small companions (vocab.txt, tokenizer_config.json, the
model card). Each file is checked against the size and hash the hub
reports (sha256 for the weights) before it is used; a corrupt file is
deleted and the pull refused. An interrupted pull resumes where it stopped
when run again. The model is installed only when every file is there and
it opens.

NAME is a known model (`+hf.KnownNames()+`; their hub ids work too, and
each has a pinned revision) or another hub id (owner/name) with
--revision. The hub's address is $`+hf.EnvEndpoint+` (default `+hf.DefaultEndpoint+`,
e.g. a mirror); $`+hf.EnvToken+` is sent to it for gated repositories.

--from DIR installs a copy of a model folder instead (a machine without
network: copy the folder over, then 'model pull NAME --from DIR'); it must
open and its weights load. Without NAME the model takes the folder's name
(for a Hugging Face cache snapshot, models--OWNER--NAME/snapshots/COMMIT,
the model's NAME), and pull says so.

Then: continuity daemon --embedder hf --embed-model NAME`)
	rev := fs.String("revision", "", "the commit to download (default: a known model's pinned revision; required for another hub id)")
	from := fs.String("from", "", "install a copy of this model folder instead of downloading")
	force := fs.Bool("force", false, "download again even when the model is installed at that revision")
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	var name string
	switch {
	case len(pos) == 1:
		name = pos[0]
	case len(pos) == 0 && *from != "":
		if name, err = hf.FolderName(*from); err != nil {
			return usageError("pull: %v", err)
		}
		fmt.Fprintf(e.stderr, "no NAME given: installing the model as %q, the folder's name ('model pull NAME --from DIR' names it otherwise)\n", name)
	default:
		return usageError("pull: want one model name, or --from DIR (see --help)")
	}
	var res *hf.PullResult
	if *from != "" {
		if *rev != "" {
			return usageError("pull: --revision applies to downloads, not to --from")
		}
		res, err = hf.InstallFolder(ctx, name, *from, e.stderr)
	} else {
		res, err = hf.Pull(ctx, hf.PullOptions{
			Model: name, Revision: *rev, Force: *force,
			Progress: e.stderr, Terminal: isTerminal(e.stderr),
		})
	}
	if err != nil {
		return err
	}
	man := res.Manifest
	what := man.Repo + " at " + man.Revision
	if man.Source == "folder" {
		what = "a copy of " + man.From
	}
	if res.Already {
		fmt.Fprintf(e.stdout, "%s is already installed (%s) in %s; --force downloads it again\n", name, what, res.Dir)
	} else {
		fmt.Fprintf(e.stdout, "installed %s (%s, %s) in %s\n", name, what, engine.HumanBytes(man.Size()), res.Dir)
	}
	fmt.Fprintf(e.stdout, "use it: continuity daemon --embedder hf --embed-model %s (the index re-embeds in the background)\n", name)
	return nil
}

// modelRow is one installed model in `model list --json`.
type modelRow struct {
	Name     string `json:"name"`
	Dir      string `json:"dir"`
	Size     int64  `json:"size"`
	Repo     string `json:"repo,omitempty"`
	Revision string `json:"revision,omitempty"`
	Source   string `json:"source,omitempty"`
	From     string `json:"from,omitempty"`
	Loads    bool   `json:"loads"`
	Model    string `json:"model,omitempty"`
	Error    string `json:"error,omitempty"`
}

func runModelList(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "model list [--json]", `
List the models installed in the model cache: name, size, where they come
from (hub repository and revision, or the folder copied), and whether they
load (configuration, tokenizer and weight shapes checked; the weights'
hashes are checked when the embedder reads them).`)
	asJSON := fs.Bool("json", false, `print JSON: {"cache", "models": [{"name", "dir", "size", "repo", "revision", "source", "from", "loads", "model", "error"}]}`)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("unexpected arguments %q", pos)
	}
	cache, err := hf.CacheDir()
	if err != nil {
		return err
	}
	list, err := hf.List()
	if err != nil {
		return err
	}
	rows := make([]modelRow, 0, len(list))
	for _, in := range list {
		r := modelRow{Name: in.Name, Dir: in.Dir, Loads: in.Err == nil, Model: in.Model}
		if in.Err != nil {
			r.Error = in.Err.Error()
		}
		if m := in.Manifest; m != nil {
			r.Size, r.Repo, r.Revision, r.Source, r.From = m.Size(), m.Repo, m.Revision, m.Source, m.From
		}
		rows = append(rows, r)
	}
	if *asJSON {
		return printJSON(e.stdout, map[string]any{"cache": cache, "models": rows})
	}
	if len(rows) == 0 {
		fmt.Fprintf(e.stdout, "no model installed in %s (continuity model pull %s)\n", cache, hf.DefaultModel)
		return nil
	}
	fmt.Fprintf(e.stdout, "models in %s:\n", cache)
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSIZE\tFROM\tLOADS")
	for _, r := range rows {
		from := r.Repo
		if r.Revision != "" {
			from += "@" + r.Revision[:min(12, len(r.Revision))]
		}
		if r.Source == "folder" {
			from = "copy of " + r.From
		}
		if from == "" {
			from = "-"
		}
		status := "yes: " + r.Model
		if !r.Loads {
			status = "NO: " + r.Error
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Name, engine.HumanBytes(r.Size), from, status)
	}
	return w.Flush()
}

func runModelRemove(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "model rm NAME", `
Delete an installed model from the model cache. An index built with it
keeps its vectors until another embedder's replace them.`)
	pos, err := parse(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("rm: want one model name")
	}
	dir, err := hf.Remove(pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "removed %s (%s)\n", pos[0], dir)
	return nil
}
