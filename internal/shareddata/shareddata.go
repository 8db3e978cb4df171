// Package shareddata finds the data sets kept beside the repository, in
// ../shared/data (never copied into it), for tests and benchmarks.
//
// Tests run in their package's folder and commands wherever they are
// started, so a path relative to the working directory would depend on
// how deep the package is; the repository root (the folder of go.mod,
// found by walking up) does not.
//
// A test that reads the shared data asks for it with Require, which skips
// the test, with one message naming the folder and how to provide it,
// whenever the data is not there, whatever the operating system calls the
// error. A test must never decide on its own from an error's wording:
// a fresh clone without ../shared has to pass (.ci/run proves it by
// running these packages from a copy of the tree with no shared folder
// beside it).
package shareddata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// EnvShared names the variable that points at the shared folder (the one
// holding data/), overriding its place beside the repository.
const EnvShared = "CONTINUITY_SHARED"

// EnvLongMemEval names the variable that points at the LongMemEval
// development set, overriding its place beside the repository.
const EnvLongMemEval = "CONTINUITY_EVAL_DATA"

// Root returns the shared folder: $CONTINUITY_SHARED when set, else
// <root>/../shared beside the repository holding the working directory.
// Outside any repository it is ../shared from the working directory. It
// does not check that the folder exists.
func Root() string {
	if dir := os.Getenv(EnvShared); dir != "" {
		return dir
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.Join(filepath.Dir(d), "shared")
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return filepath.Join("..", "shared")
}

// Dir returns the data set name (a slash-separated path under data/, such
// as "bert-golden/tiny-bert-mean") in the shared folder: Root()/data/name.
// It does not check that it exists.
func Dir(name string) string {
	return filepath.Join(Root(), "data", filepath.FromSlash(name))
}

// LongMemEval returns the LongMemEval development set's folder:
// $CONTINUITY_EVAL_DATA when set, else Dir("longmemeval-s-dev").
func LongMemEval() string {
	if dir := os.Getenv(EnvLongMemEval); dir != "" {
		return dir
	}
	return Dir("longmemeval-s-dev")
}

// LongMemEvalQuestions returns the questions of the LongMemEval
// development set (its queries.jsonl), in order; nil when it is absent.
func LongMemEvalQuestions() []string {
	data, err := os.ReadFile(filepath.Join(LongMemEval(), "queries.jsonl"))
	if err != nil {
		return nil
	}
	var qs []string
	for _, l := range strings.Split(string(data), "\n") {
		var x struct{ Question string }
		if json.Unmarshal([]byte(l), &x) == nil && x.Question != "" {
			qs = append(qs, x.Question)
		}
	}
	return qs
}

// TB is the part of testing.TB (and of *testing.F) that Require uses; the
// package does not import testing, so that the commands which find the
// data sets with Dir do not link it.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
}

// Require returns Dir(name), skipping the test when it cannot be read
// (absent, not a folder or file, no permission: any error of os.Stat),
// with a message that names the path and how to provide it. name is a
// slash-separated path under data/: a data set or a file in one.
func Require(tb TB, name string) string {
	tb.Helper()
	return require(tb, Dir(name), "data/"+name, EnvShared)
}

// RequireLongMemEval returns LongMemEval(), skipping the test when its
// queries.jsonl cannot be read.
func RequireLongMemEval(tb TB) string {
	tb.Helper()
	dir := LongMemEval()
	require(tb, filepath.Join(dir, "queries.jsonl"), "data/longmemeval-s-dev/queries.jsonl", EnvLongMemEval)
	return dir
}

func require(tb TB, path, rel, env string) string {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("shared test data absent, test skipped: %s (%v); it lives in ../shared/%s beside the repository, or set $%s", path, err, rel, env)
	}
	return path
}
