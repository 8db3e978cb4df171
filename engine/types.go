package engine

import (
	"time"

	"github.com/praxis-os/continuity/resume"
	"github.com/praxis-os/continuity/search"
)

// The engine's answers are its own types: the interfaces (the command
// line, MCP, the viewer) read them without importing search or resume.
// Their JSON is the daemon's wire format, and what `search --json` and
// `resume --json` print: the same fields as search.Result and
// resume.Pack (TestSearchResultFields keeps them in step).

// SearchResult is one found exchange.
type SearchResult struct {
	ID        string    `json:"id"` // the event id: the producer's id if it gave one, else derived from the line
	SessionID string    `json:"session_id,omitempty"`
	Timestamp time.Time `json:"timestamp"`
	User      string    `json:"user,omitempty"`
	AI        string    `json:"ai,omitempty"`
	// Files are the files the exchange names (its "files" field).
	Files []string `json:"files,omitempty"`
	// Score is the result's relevance in [0, 1], comparable across
	// searches; results are ordered by it, and at equal score the newer
	// exchange first.
	Score float64 `json:"score"`
	// Weak: no result reached the default floor; this is one of the
	// closest matches, probably not what was asked about.
	Weak bool `json:"weak,omitempty"`
	// SupersededBy is the newest later exchange among the results that
	// asks the same question and answers it differently; Supersedes the
	// earlier ones this one supersedes, newest first.
	SupersededBy *SearchRef  `json:"superseded_by,omitempty"`
	Supersedes   []SearchRef `json:"supersedes,omitempty"`
	File         string      `json:"file"`
	Line         int64       `json:"line"`
	// Context are the exchanges of its session around it, when asked
	// (SearchRequest.Context): context, not matches.
	Context []SearchContext `json:"context,omitempty"`
}

// SearchRef is another exchange a result names (what it supersedes, or
// is superseded by).
type SearchRef struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id,omitempty"`
	Timestamp time.Time `json:"timestamp"`
}

// SearchContext is a neighbour of a result in its session: Offset -1 just
// before it, 1 just after.
type SearchContext struct {
	Offset    int       `json:"offset"`
	ID        string    `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	User      string    `json:"user,omitempty"`
	AI        string    `json:"ai,omitempty"`
	Files     []string  `json:"files,omitempty"`
	File      string    `json:"file"`
	Line      int64     `json:"line"`
}

// searchResults are search's results as the engine answers them.
func searchResults(res []search.Result) []SearchResult {
	out := make([]SearchResult, len(res))
	ref := func(r search.Ref) SearchRef {
		return SearchRef{ID: r.ID, SessionID: r.SessionID, Timestamp: r.Timestamp}
	}
	for i, r := range res {
		out[i] = SearchResult{ID: r.ID, SessionID: r.SessionID, Timestamp: r.Timestamp, User: r.User, AI: r.AI, Files: r.Files,
			Score: r.Score, Weak: r.Weak, File: r.File, Line: r.Line}
		if r.SupersededBy != nil {
			sb := ref(*r.SupersededBy)
			out[i].SupersededBy = &sb
		}
		if r.Supersedes != nil {
			out[i].Supersedes = make([]SearchRef, len(r.Supersedes))
			for j, x := range r.Supersedes {
				out[i].Supersedes[j] = ref(x)
			}
		}
		if r.Context != nil {
			out[i].Context = make([]SearchContext, len(r.Context))
			for j, x := range r.Context {
				out[i].Context[j] = SearchContext{Offset: x.Offset, ID: x.ID, Timestamp: x.Timestamp, User: x.User, AI: x.AI,
					Files: x.Files, File: x.File, Line: x.Line}
			}
		}
	}
	return out
}

// ResumePack is a resume pack: the text to give the agent within its
// budget, the exchanges in it, and why (Explain). Its fields are
// resume.Pack's (the JSON is the same).
type ResumePack struct {
	resume.Pack
}

// ResumeExchange is an exchange of a ResumePack.
type ResumeExchange = resume.Exchange

// Why an exchange is in a resume pack, or left out (ResumePack.Explain).
const (
	ReasonRecent     = resume.ReasonRecent
	ReasonRelevant   = resume.ReasonRelevant
	ReasonChain      = resume.ReasonChain
	ReasonDuplicate  = resume.ReasonDuplicate
	ReasonNoRoom     = resume.ReasonNoRoom
	ReasonNotReached = resume.ReasonNotReached
	ReasonDropped    = resume.ReasonDropped
	ReasonInContext  = resume.ReasonInContext
)

// Resume defaults, for the interfaces' flags and arguments.
const (
	DefaultBudget   = resume.DefaultBudget
	DefaultMaxDepth = resume.DefaultMaxDepth
	DefaultEncoding = resume.DefaultEncoding
)

// CheckTokenizer says whether name is a token encoding or a model name
// resume can count tokens with (ResumeRequest.Tokenizer).
func CheckTokenizer(name string) error {
	_, err := resume.NewCounter(name)
	return err
}

// IncludeCurrent is the one meaning of resume's include-current, for the
// command line and MCP alike: as asked when asked; else true with latest
// (the caller starts a new session: none of the latest session's
// exchanges are in its window), false with a session id (the caller's own
// session, whose exchanges since its latest reset are).
func IncludeCurrent(latest bool, asked *bool) bool {
	if asked != nil {
		return *asked
	}
	return latest
}
