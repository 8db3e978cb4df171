package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/praxis-os/continuity/engine"
	"github.com/praxis-os/continuity/logformat"
	wspace "github.com/praxis-os/continuity/workspace"
)

// env is what every command gets: the workspace and the standard streams.
type env struct {
	rootFlag string
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
}

// workspace resolves the workspace root: --root (an existing directory),
// else workspace.Find from the current directory (the nearest .praxis-os
// above, else the git repository's root, else the current directory).
func (e *env) workspace() (string, error) {
	if e.rootFlag != "" {
		abs, err := filepath.Abs(e.rootFlag)
		if err != nil {
			return "", usageError("--root %s: %w", e.rootFlag, err)
		}
		if err := wspace.CheckRoot(abs); err != nil {
			return "", usageError("--root: %w", err)
		}
		return abs, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("current directory: %w", err)
	}
	return wspace.Find(cwd), nil
}

// paths are the folders continuity uses inside a workspace.
type paths struct {
	root  string
	logs  string // watched: <root>/.praxis-os/.conversations
	cache string // private: <root>/.praxis-os/.cache/continuity
	named bool   // the root was given (--root): used as given, even a broad folder
}

func (e *env) paths() (paths, error) {
	root, err := e.workspace()
	if err != nil {
		return paths{}, err
	}
	return pathsAt(root, e.rootFlag != ""), nil
}

// pathsAt is the paths of the workspace at root.
func pathsAt(root string, named bool) paths {
	l := wspace.At(root)
	return paths{root: root, logs: l.Logs, cache: l.Cache, named: named}
}

// layout is p as a workspace.Layout.
func (p paths) layout() wspace.Layout {
	return wspace.Layout{Root: p.root, Logs: p.logs, Cache: p.cache, Named: p.named}
}

// client asks the workspace's questions (engine.Client): of its daemon
// when one answers, else of the index, with the embedder ef configures
// (nil: the environment's).
func (e *env) client(ef *embedFlags) (*engine.Client, error) {
	p, err := e.paths()
	if err != nil {
		return nil, err
	}
	if ef == nil {
		ef = envEmbedder()
	}
	return engine.NewClient(p.layout(), ef.embedder, e.stderr), nil
}

// printJSON writes v as indented JSON: the --json output of every command.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (e *env) logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
}

// extractRoot removes a global --root DIR (or --root=DIR) found anywhere in
// args, so it works before and after the command name.
func extractRoot(args []string) (root string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		switch {
		case a == "--root" || a == "-root":
			if i+1 >= len(args) {
				return "", nil, errors.New("--root needs a directory")
			}
			root = args[i+1]
			i++
		case strings.HasPrefix(a, "--root=") || strings.HasPrefix(a, "-root="):
			root = a[strings.Index(a, "=")+1:]
		default:
			rest = append(rest, a)
		}
	}
	return root, rest, nil
}

var errHelp = errors.New("help shown")

// newFlags returns a FlagSet for a command whose usage prints to stdout
// when asked for (--help) and to stderr on a mistake.
func newFlags(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: continuity %s\n\n%s\nFlags:\n", name, strings.TrimSpace(usage)+"\n")
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "  -root DIR\n    \tthe workspace, an existing folder (default: the nearest ancestor holding .praxis-os, else the git repository's root, else the current directory)")
	}
	return fs
}

// parse parses flags and positional arguments in any order: flags may come
// before or after positional arguments; everything after "--" is positional.
// --help prints the command's usage on stdout and returns errHelp.
func parse(e *env, fs *flag.FlagSet, args []string) ([]string, error) {
	var tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fs.SetOutput(e.stdout)
			fs.Usage()
			return nil, errHelp
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, &exitError{code: 2, err: err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(pos, tail...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// sessionArgs is the error for a command that takes its session as
// --session and was given arguments: one that names a session (as in
// "continuity export a1") is shown the command to type, unless the
// command was told which session otherwise (named: --session, --latest).
func sessionArgs(command string, pos []string, named bool) error {
	if len(pos) == 1 && !named && logformat.ValidSessionID(pos[0]) == nil {
		return usageError("unexpected argument %q: give the session with --session (continuity %s --session %s)", pos[0], command, pos[0])
	}
	return usageError("unexpected arguments %q", pos)
}

// parseFlagsOnly parses a command that takes flags and no argument.
func parseFlagsOnly(e *env, fs *flag.FlagSet, args []string) error {
	pos, err := parse(e, fs, args)
	if err == nil && len(pos) > 0 {
		err = usageError("unexpected arguments %q", pos)
	}
	return err
}
