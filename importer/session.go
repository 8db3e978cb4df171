// Package importer turns the transcripts coding agents already write
// (Claude Code, Codex, Gemini CLI, Cursor, Aider, Cline and its forks Roo
// Code and Kilo Code, OpenCode, GitHub Copilot CLI, Goose) into protocol events
// (protocol.md) appended to <workspace>/.praxis-os/.conversations/, so that
// the tailer stays the single way into the index.
//
// One file per concern: session.go is the agent-neutral model every parser
// produces, claudecode.go, codex.go, gemini.go, cursor.go, aider.go,
// cline.go (Cline, Roo Code, Kilo Code tasks), clinesdk.go (Cline's newer
// sessions), opencode.go, copilot.go and goose.go read one native format
// each, render.go turns a session into events (turn splitting, tool
// summaries, stable ids), store.go knows what is already in the logs folder
// and appends only what is new, importer.go walks the paths a user gives,
// native.go and places.go say where each agent keeps its files and which of
// them belong to a workspace, follow.go follows native folders as they grow.
package importer

import (
	"strings"
	"time"
	"unicode"
)

// Agent names, as given to `continuity import --from`.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
	Gemini     = "gemini"
	Cursor     = "cursor"
	Aider      = "aider"
	Cline      = "cline"
	Roo        = "roo-code"
	Kilo       = "kilo-code"
	OpenCode   = "opencode"
	Copilot    = "copilot-cli"
	Goose      = "goose"
)

// AgentInfo is one agent with an importer: the name `import --from`
// takes, the agent's own name, and the other names users type for it.
type AgentInfo struct {
	Name    string   // canonical, as in the logs' file names (claude-code-<id>.jsonl)
	Title   string   // as the agent calls itself
	Aliases []string // also accepted, matched like Name (Canonical)
}

// Registry lists the agents with an importer, in the order of the help
// text: the one list every other (Agents, FollowAgents, the help's
// summary, the names accepted) derives from.
var Registry = []AgentInfo{
	{ClaudeCode, "Claude Code", []string{"claude", "cc"}},
	{Codex, "Codex", []string{"codex-cli", "openai-codex"}},
	{Gemini, "Gemini CLI", []string{"gemini-cli"}},
	{Cursor, "Cursor", nil},
	{Aider, "Aider", nil},
	{Cline, "Cline", []string{"claude-dev"}},
	{Roo, "Roo Code", []string{"roo", "roo-cline"}},
	{Kilo, "Kilo Code", []string{"kilo"}},
	{OpenCode, "OpenCode", nil},
	{Copilot, "GitHub Copilot CLI", []string{"copilot", "github-copilot", "gh-copilot"}},
	{Goose, "Goose", nil},
}

// Agents lists the canonical names of Registry, in its order.
var Agents = func() []string {
	out := make([]string, len(Registry))
	for i, a := range Registry {
		out[i] = a.Name
	}
	return out
}()

// nameKey folds a name as users type it: case, spaces, dashes,
// underscores and dots do not matter ("Claude Code", "claude_code",
// "ClaudeCode" are claude-code).
func nameKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Canonical is the agent a name stands for: its canonical name, its
// title or one of its aliases (Registry), folded (nameKey).
func Canonical(name string) (string, bool) {
	k := nameKey(name)
	if k == "" {
		return "", false
	}
	for _, a := range Registry {
		if k == nameKey(a.Name) || k == nameKey(a.Title) {
			return a.Name, true
		}
		for _, al := range a.Aliases {
			if k == nameKey(al) {
				return a.Name, true
			}
		}
	}
	return "", false
}

// Titles lists the agents' own names, in Registry's order, for a summary
// ("Claude Code, Codex, ...").
func Titles() string {
	out := make([]string, len(Registry))
	for i, a := range Registry {
		out[i] = a.Title
	}
	return strings.Join(out, ", ")
}

// AliasHelp lists the other names accepted for each agent that has some
// ("roo (roo-code), copilot (copilot-cli), ..."), for help texts.
func AliasHelp() string {
	var out []string
	for _, a := range Registry {
		for _, al := range a.Aliases {
			out = append(out, al+" ("+a.Name+")")
		}
	}
	return strings.Join(out, ", ")
}

// Session is one native session read from one file, in the agent-neutral
// form the renderer turns into events. Items are in native order.
type Session struct {
	Agent string
	ID    string // the agent's own session id (a valid protocol session id)
	Items []Item
	// Previous lists sessions this one continues (resume, fork), as the
	// native file names them.
	Previous []string
	// Source is the native file (for metadata and messages).
	Source string
	// Time stands in for items without a time of their own.
	Time time.Time
	// Cwd is the folder the native session ran in, when the native files
	// say ("" when they do not): a session of a store shared by every
	// project (a database, a tasks folder) belongs to the workspace
	// holding it (Options.Roots).
	Cwd string
	// Opening identifies the session's first prompt (handoffKey of its
	// text) for agents whose tasks may start from a handoff of another
	// task (Cline's new_task, Roo's subtasks): the store links the two.
	Opening string
}

// ItemKind tells what an Item is.
type ItemKind int

// Item kinds.
const (
	ItemPrompt ItemKind = iota // a human prompt: starts a turn
	ItemStep                   // what the agent did next in the current turn
	ItemReset                  // the context was compacted or cleared
	ItemEnd                    // the current turn is over (native end marker)
)

// Item is one native record reduced to what memory needs.
type Item struct {
	Kind ItemKind
	// Key identifies the native record within its session, stable across
	// re-reads of a grown file (a record uuid, a message id, a line number).
	Key  string
	Time time.Time
	Line int // line (or record index) in the native file, for messages

	Text  string   // prompt text, or the agent's visible answer text
	Tools []string // one short summary per tool call ("Edit main.go")
	Files []string // files read or edited
	// Reason is why the context was reset (ItemReset).
	Reason string
	// Break starts a new exchange of the current turn at this step (an
	// event inside the turn worth its own exchange, such as a background
	// task's notice the agent then acts on).
	Break bool
	// KeyedTurn derives a prompt's turn id from its Key instead of its time
	// and text: for formats without per-message times, where two equal
	// prompts would otherwise be one.
	KeyedTurn bool
	// Handoff identifies (handoffKey) the text this step hands to a new
	// task (Cline's new_task, Roo's new_task subtasks): a session whose
	// Opening is the same continues this one.
	Handoff string
}

// Problem is a native record that could not be read: reported with its
// place, skipped, never fatal.
type Problem struct {
	File   string
	Line   int
	Reason string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return p.File + ":" + itoa(p.Line) + ": " + p.Reason
	}
	return p.File + ": " + p.Reason
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Parsed is what a parser gives for one native file.
type Parsed struct {
	Sessions []*Session
	Problems []Problem
	// Skipped counts native sessions or files left out on purpose
	// (sidechains, files with no conversation), with why in SkipReasons.
	Skipped     int
	SkipReasons []string
}
