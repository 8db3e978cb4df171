// Package shareddata finds the data sets kept beside the repository, in
// ../shared/data (never copied into it), for tests and benchmarks.
//
// Tests run in their package's folder and commands wherever they are
// started, so a path relative to the working directory would depend on
// how deep the package is; the repository root (the folder of go.mod,
// found by walking up) does not.
package shareddata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// EnvLongMemEval names the variable that points at the LongMemEval
// development set, overriding its place beside the repository.
const EnvLongMemEval = "CONTINUITY_EVAL_DATA"

// Dir returns the data set name in the shared folder beside the
// repository holding the working directory: <root>/../shared/data/name.
// Outside any repository it is ../shared/data/name from the working
// directory. It does not check that the folder exists.
func Dir(name string) string {
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.Join(filepath.Dir(d), "shared", "data", name)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return filepath.Join("..", "shared", "data", name)
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
