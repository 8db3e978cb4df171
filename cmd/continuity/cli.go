package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// env is what every command gets: the workspace and the standard streams.
type env struct {
	rootFlag string
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
}

// workspace resolves the workspace root: --root, else the nearest ancestor
// of the current directory holding .praxis-os, else the current directory.
func (e *env) workspace() (string, error) {
	if e.rootFlag != "" {
		abs, err := filepath.Abs(e.rootFlag)
		if err != nil {
			return "", fmt.Errorf("--root %s: %w", e.rootFlag, err)
		}
		return abs, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("current directory: %w", err)
	}
	for d := cwd; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, ".praxis-os")); err == nil && fi.IsDir() {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return cwd, nil
		}
	}
}

// paths are the folders continuity uses inside a workspace.
type paths struct {
	root  string
	logs  string // watched: <root>/.praxis-os/.conversations
	cache string // private: <root>/.praxis-os/.cache/continuity
}

func (e *env) paths() (paths, error) {
	root, err := e.workspace()
	if err != nil {
		return paths{}, err
	}
	return paths{
		root:  root,
		logs:  filepath.Join(root, ".praxis-os", ".conversations"),
		cache: filepath.Join(root, ".praxis-os", ".cache", "continuity"),
	}, nil
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
		fmt.Fprintln(fs.Output(), "  -root DIR\n    \tthe workspace (default: nearest ancestor holding .praxis-os, else the current directory)")
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
