package engine

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-os/continuity/search"
)

// jsonFields are the JSON names of t's fields (those that are encoded), in
// order, with their types' kinds.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, name+" "+tag+" "+f.Type.Kind().String())
	}
	return out
}

// The engine's result types say what search's say, field for field and
// in the same order: `search --json` and the daemon's answers do not
// change when search gains a field, the engine must gain it too (and
// searchResults copy it).
func TestSearchResultFields(t *testing.T) {
	for _, c := range []struct{ engine, search reflect.Type }{
		{reflect.TypeFor[SearchResult](), reflect.TypeFor[search.Result]()},
		{reflect.TypeFor[SearchRef](), reflect.TypeFor[search.Ref]()},
		{reflect.TypeFor[SearchContext](), reflect.TypeFor[search.ContextExchange]()},
	} {
		if e, s := jsonFields(c.engine), jsonFields(c.search); !slices.Equal(e, s) {
			t.Errorf("%v's JSON fields differ from %v's:\n%q\n%q", c.engine, c.search, e, s)
		}
	}
	// searchResults copies every field: the same JSON.
	at := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	ref := search.Ref{ID: "r", SessionID: "rs", Timestamp: at}
	res := []search.Result{{ID: "i", SessionID: "s", Timestamp: at, User: "u", AI: "a", Files: []string{"f"}, Score: 0.5, Weak: true,
		SupersededBy: &ref, Supersedes: []search.Ref{ref}, File: "l.jsonl", Line: 3, Row: 9,
		Context: []search.ContextExchange{{Offset: -1, ID: "c", Timestamp: at, User: "cu", AI: "ca", Files: []string{"g"}, File: "l.jsonl", Line: 2}}}, {ID: "j"}}
	want, _ := json.Marshal(res)
	got, _ := json.Marshal(searchResults(res))
	if string(got) != string(want) {
		t.Errorf("searchResults:\n%s\nwant\n%s", got, want)
	}
}
