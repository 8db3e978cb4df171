package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/praxis-os/continuity/logformat"
)

// Size limits of rendered events (docs/importers.md, "Reading rules").
const (
	// DefaultPartBytes is how much answer text (visible answers and tool
	// summaries) one exchange holds before a long turn continues in the
	// next exchange.
	DefaultPartBytes = 16 << 10
	// DefaultMaxUserBytes caps the prompt kept in an exchange.
	DefaultMaxUserBytes = 32 << 10
	// maxToolLine caps the summary line of consecutive tool calls.
	maxToolLine = 1000
	// continuedPrompt caps the prompt repeated in a turn's later parts.
	continuedPrompt = 300
)

// Options tune rendering.
type Options struct {
	PartBytes    int    // default DefaultPartBytes
	MaxUserBytes int    // default DefaultMaxUserBytes
	Workspace    string // file paths under it are made relative to it
	// Roots, when set, keeps only the native sessions that ran in one of
	// these folders (or below): the workspace and the other worktrees
	// of its repository. A session whose folder is unknown is kept.
	// Paths under a root are made relative to it, like Workspace.
	Roots []string
	// HoldOpenTurn leaves out the last turn of a session when no native
	// end marker closes it (live following: the agent is still working;
	// it is imported once closed or once the file has been quiet).
	HoldOpenTurn bool
	// Now stands in for records without a time (default time.Now()).
	Now time.Time
}

func (o Options) withDefaults() Options {
	if o.PartBytes <= 0 {
		o.PartBytes = DefaultPartBytes
	}
	if o.MaxUserBytes <= 0 {
		o.MaxUserBytes = DefaultMaxUserBytes
	}
	if o.Now.IsZero() {
		o.Now = time.Now().UTC()
	}
	return o
}

// planned is one event the renderer wants in the logs, before the store
// decides whether it is new.
type planned struct {
	ev      logformat.Event
	turn    string   // turn id of an exchange ("" for other events)
	steps   []string // keys of the steps this exchange covers, in order
	part    int      // index of the part within its turn
	prompt  string   // the turn's prompt (to title a continuation)
	srcLine int
}

// meta is the metadata of an imported event.
type meta struct {
	Source  string `json:"source"`
	Native  string `json:"native,omitempty"`
	Turn    string `json:"turn,omitempty"`
	Through string `json:"through,omitempty"`
	// Handoffs: the texts (handoffKey) this exchange hands to new tasks;
	// Opening: the session's first prompt (handoffKey), on its exchange.
	// The store links a task to the one that handed it its prompt.
	Handoffs []string `json:"handoffs,omitempty"`
	Opening  string   `json:"opening,omitempty"`
}

// handoffKey identifies a text handed from one task to the next (a
// subtask's instructions, a new task's context): its words, hashed, so
// that the same text met as a handoff and as a first prompt matches
// whatever the whitespace around it.
func handoffKey(text string) string {
	f := strings.Fields(text)
	if len(f) == 0 {
		return ""
	}
	return shortHash(strings.Join(f, " "))
}

// stepHandoffs are the handoffs of steps, in order, once each.
func stepHandoffs(steps []Item) []string {
	var out []string
	for _, st := range steps {
		if st.Handoff != "" && !slices.Contains(out, st.Handoff) {
			out = append(out, st.Handoff)
		}
	}
	return out
}

// turnID is the id of the turn a prompt opens: derived from the prompt's
// time and text only, so that the same prompt copied into another file
// (a resumed or continued session) has the same id and is stored once.
func turnID(agent string, t time.Time, text, key string) string {
	h := sha256.New()
	h.Write([]byte(agent))
	h.Write([]byte{0})
	if t.IsZero() {
		h.Write([]byte(key))
	} else {
		h.Write([]byte(t.UTC().Format(time.RFC3339Nano)))
	}
	h.Write([]byte{0})
	h.Write([]byte(text))
	return agent + ":" + hex.EncodeToString(h.Sum(nil)[:12])
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}

// partID is the id of the part of turn that starts with step key.
func partID(turn, firstStep string, part int) string {
	if part == 0 && firstStep == "" {
		return turn
	}
	return turn + "~" + shortHash(firstStep)
}

// render turns a session into the events it stands for, in native order.
func render(s *Session, o Options) []planned {
	r := newRenderer(s, o.withDefaults())
	out := r.resumes()
	r.group()
	return append(out, r.events()...)
}

// renderer is render's state for one session: the time given to records
// without one, the turns as the items are grouped into them, and the order
// of their parts among the resets.
type renderer struct {
	s     *Session
	o     Options
	last  time.Time // see timeOf
	cur   *turnAcc  // the turn the items go to
	seen  map[string]bool
	slots []slot
	// firstPrompt is the key of the session's first prompt (whose
	// exchange carries the session's Opening).
	firstPrompt string
}

// turnAcc is a turn being grouped: its prompt, and its steps cut into
// parts.
type turnAcc struct {
	id     string
	prompt Item
	has    bool     // a prompt opened it
	parts  [][]Item // sealed parts
	cur    []Item   // the part being filled
	size   int      // cur's size (stepSize)
	ended  bool     // a native end marker closed it
	copy   bool     // a copy of an earlier turn: stored once
}

// slot is the place of an event among the session's: a part of a turn
// (part -1: a prompt with no answer), or a reset.
type slot struct {
	turn *turnAcc
	part int
	ev   *planned // a reset
}

func newRenderer(s *Session, o Options) *renderer {
	r := &renderer{s: s, o: o, last: o.Now, seen: map[string]bool{}}
	if inRange(s.Time) {
		r.last = s.Time.UTC()
	}
	for _, it := range s.Items {
		if inRange(it.Time) {
			r.last = it.Time
			break
		}
	}
	for _, it := range s.Items {
		if it.Kind == ItemPrompt {
			r.firstPrompt = it.Key
			break
		}
	}
	return r
}

// timeOf is t, or for a record without a usable time the time of the
// last record that had one.
func (r *renderer) timeOf(t time.Time) time.Time {
	if !inRange(t) {
		return r.last
	}
	r.last = t.UTC()
	return r.last
}

// resumes are the session_resume events linking the session to those it
// continues.
func (r *renderer) resumes() []planned {
	var out []planned
	s := r.s
	for _, prev := range s.Previous {
		if prev == s.ID || logformat.ValidSessionID(prev) != nil {
			continue
		}
		out = append(out, planned{ev: logformat.Event{
			Type: logformat.TypeSessionResume, SessionID: s.ID,
			PreviousSession: prev, NewSession: s.ID,
			ID:        s.Agent + ":resume:" + prev + ":" + s.ID,
			Timestamp: r.timeOf(firstTime(s.Items)),
			Metadata:  metaJSON(meta{Source: s.Agent, Native: filepath.Base(s.Source)}),
		}})
	}
	return out
}

// group groups the items into turns and their parts; a reset seals the
// current part.
func (r *renderer) group() {
	for _, it := range r.s.Items {
		switch it.Kind {
		case ItemPrompt:
			r.openTurn(it, true)
		case ItemStep:
			r.addStep(it)
		case ItemEnd:
			if r.cur != nil {
				r.cur.ended = true
			}
		case ItemReset:
			r.reset(it)
		}
	}
	r.seal()
	r.unanswered()
}

// seal ends the current part of the current turn.
func (r *renderer) seal() {
	cur := r.cur
	if cur == nil || len(cur.cur) == 0 {
		return
	}
	cur.parts = append(cur.parts, cur.cur)
	r.slots = append(r.slots, slot{turn: cur, part: len(cur.parts) - 1})
	cur.cur, cur.size = nil, 0
}

// unanswered gives the current turn, when it has a prompt but no part
// yet, the slot of an exchange of the prompt alone, and reports whether
// it did.
func (r *renderer) unanswered() bool {
	if r.cur == nil || len(r.cur.parts) > 0 || !r.cur.has {
		return false
	}
	r.slots = append(r.slots, slot{turn: r.cur, part: -1})
	return true
}

// openTurn starts a turn with prompt p, or (has false) with a step that
// no prompt opened.
func (r *renderer) openTurn(p Item, has bool) {
	r.seal()
	r.unanswered()
	s := r.s
	t := &turnAcc{prompt: p, has: has}
	if has && p.KeyedTurn {
		t.id = turnID(s.Agent, time.Time{}, s.ID+"\x00"+p.Text, p.Key)
	} else if has {
		t.id = turnID(s.Agent, p.Time, p.Text, p.Key)
	} else {
		t.id = s.Agent + ":" + shortHash(s.ID+"\x00"+p.Key) + "-orphan"
	}
	if r.seen[t.id] {
		// the same prompt (time and text) again: history copied into
		// the file by a continued session; stored once
		t.copy = true
	}
	r.seen[t.id] = true
	r.cur = t
}

// addStep adds a step to the current turn, starting a part when it would
// grow past the part size.
func (r *renderer) addStep(it Item) {
	if r.cur == nil {
		r.openTurn(it, false)
	}
	if it.Break {
		r.seal()
	}
	for _, st := range splitStep(it, r.o.PartBytes) {
		n := stepSize(st)
		if r.cur.size > 0 && r.cur.size+n > r.o.PartBytes {
			r.seal()
		}
		r.cur.cur = append(r.cur.cur, st)
		r.cur.size += n
	}
}

// reset places a context_reset event after what came before it.
func (r *renderer) reset(it Item) {
	r.seal()
	if r.unanswered() {
		r.cur.parts = append(r.cur.parts, nil)
	}
	reason := it.Reason
	if reason == "" {
		reason = "context compacted"
	}
	s := r.s
	ev := planned{ev: logformat.Event{
		Type: logformat.TypeContextReset, SessionID: s.ID, Reason: reason,
		ID:        resetID(s.Agent, s.ID, it.Key),
		Timestamp: r.timeOf(it.Time),
		Metadata:  metaJSON(meta{Source: s.Agent, Native: nativeRef(s.Source, it.Line)}),
	}, srcLine: it.Line}
	r.slots = append(r.slots, slot{ev: &ev})
}

// events are the exchanges and resets of the grouped turns, in order;
// with HoldOpenTurn, the last turn is left out unless it ended.
func (r *renderer) events() []planned {
	var held *turnAcc
	if r.o.HoldOpenTurn && r.cur != nil && !r.cur.ended {
		held = r.cur
	}
	var out []planned
	for _, sl := range r.slots {
		if sl.ev != nil {
			out = append(out, *sl.ev)
			continue
		}
		if sl.turn == held || sl.turn.copy {
			continue
		}
		if p, ok := r.exchange(sl.turn, sl.part); ok {
			out = append(out, p)
		}
	}
	return out
}

// exchange is the exchange of part of turn t (-1: its prompt alone);
// false when it would hold no text.
func (r *renderer) exchange(t *turnAcc, part int) (planned, bool) {
	var steps []Item
	if part >= 0 {
		steps = t.parts[part]
	} else {
		part = 0
	}
	p := planned{turn: t.id, part: part, prompt: t.prompt.Text}
	for _, st := range steps {
		p.steps = append(p.steps, st.Key)
	}
	user := ""
	if t.has {
		if part == 0 {
			user = capText(t.prompt.Text, r.o.MaxUserBytes)
		} else {
			user = "[continued] " + capText(t.prompt.Text, continuedPrompt)
		}
	}
	ai, files := renderSteps(steps, r.o.relRoots())
	if strings.TrimSpace(user) == "" && strings.TrimSpace(ai) == "" {
		return planned{}, false
	}
	ts := t.prompt.Time
	line := t.prompt.Line
	first := ""
	if part > 0 || !t.has {
		if len(steps) > 0 {
			ts, line, first = steps[0].Time, steps[0].Line, steps[0].Key
		}
	}
	through := ""
	if len(steps) > 0 {
		through = steps[len(steps)-1].Key
	}
	s := r.s
	p.srcLine = line
	m := meta{Source: s.Agent, Native: nativeRef(s.Source, line), Turn: t.id, Through: through, Handoffs: stepHandoffs(steps)}
	if s.Opening != "" && t.has && part == 0 && t.prompt.Key == r.firstPrompt {
		m.Opening = s.Opening
	}
	p.ev = logformat.Event{
		Type: logformat.TypeExchange, SessionID: s.ID,
		ID:        partID(t.id, first, part),
		Timestamp: r.timeOf(ts),
		User:      user, AI: ai, Files: files,
		Metadata: metaJSON(m),
	}
	return p, true
}

// resetID is a context_reset's id: <agent>:reset:<session>:<record key>
// (the Claude Code SessionStart hook gives a compaction the same id, from
// the compact_boundary record's uuid), hashed when too long for an id.
func resetID(agent, session, key string) string {
	id := agent + ":reset:" + session + ":" + key
	if len(id) > 200 || !printableID(key) {
		// a key an id cannot hold (a native id with control characters
		// or invalid UTF-8) is hashed like an overlong one
		id = agent + ":reset:" + shortHash(session+"\x00"+key)
	}
	return id
}

// printableID reports whether s may be part of an event id: valid UTF-8
// without control characters (protocol.md, section 3).
func printableID(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// rerender rebuilds an exchange for the steps of p from index from on: the
// rest of a part that grew after it was imported.
func rerender(p planned, s *Session, o Options, stepsByKey map[string]Item) planned {
	o = o.withDefaults()
	var steps []Item
	for _, k := range p.steps {
		steps = append(steps, stepsByKey[k])
	}
	q := p
	q.steps = p.steps
	ai, files := renderSteps(steps, o.relRoots())
	user := ""
	if p.prompt != "" {
		user = "[continued] " + capText(p.prompt, continuedPrompt)
	}
	ts := steps[0].Time
	if !inRange(ts) {
		ts = p.ev.Timestamp
	}
	q.ev = logformat.Event{
		Type: logformat.TypeExchange, SessionID: s.ID,
		ID:        partID(p.turn, steps[0].Key, 1),
		Timestamp: ts.UTC(),
		User:      user, AI: ai, Files: files,
		Metadata: metaJSON(meta{Source: s.Agent, Native: nativeRef(s.Source, steps[0].Line), Turn: p.turn, Through: steps[len(steps)-1].Key, Handoffs: stepHandoffs(steps)}),
	}
	return q
}

// inRange reports whether t is a time the protocol accepts (1970 to 9999).
func inRange(t time.Time) bool {
	return !t.IsZero() && t.Year() >= 1970 && t.Year() <= 9999
}

func firstTime(items []Item) time.Time {
	for _, it := range items {
		if !it.Time.IsZero() {
			return it.Time
		}
	}
	return time.Time{}
}

func nativeRef(src string, line int) string {
	b := filepath.Base(src)
	if line > 0 {
		return b + ":" + itoa(line)
	}
	return b
}

func metaJSON(m meta) json.RawMessage {
	b, _ := json.Marshal(m)
	return b
}

// splitStep cuts a step whose text alone is over the part size into
// pieces, each a step of its own (keys key#1, key#2, ...).
func splitStep(it Item, max int) []Item {
	if len(it.Text) <= max {
		return []Item{it}
	}
	var out []Item
	text := it.Text
	for i := 0; len(text) > 0; i++ {
		n := cutAt(text, max)
		piece := it
		piece.Text = text[:n]
		piece.Tools, piece.Files = nil, nil
		if i > 0 {
			piece.Key = it.Key + "#" + itoa(i)
		}
		text = text[n:]
		if len(text) == 0 {
			piece.Tools, piece.Files = it.Tools, it.Files
		}
		out = append(out, piece)
	}
	return out
}

// cutAt is where to cut s to at most max bytes: at a paragraph or line
// break in the second half when there is one, never inside a UTF-8
// sequence.
func cutAt(s string, max int) int {
	if len(s) <= max {
		return len(s)
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if i := strings.LastIndex(s[:n], "\n\n"); i > n/2 {
		return i + 2
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i > n/2 {
		return i + 1
	}
	if n == 0 {
		_, w := utf8.DecodeRuneInString(s)
		return w
	}
	return n
}

func stepSize(it Item) int {
	n := len(it.Text)
	for _, t := range it.Tools {
		n += len(t) + 3
	}
	return n
}

// renderSteps is the answer text of a run of steps: the visible answer
// texts in order, each run of consecutive tool calls summarised on one
// line ("[tools] Read a.go · Edit b.go · Bash: go test ./..."), and the
// files the steps touched.
func renderSteps(steps []Item, roots []string) (string, []string) {
	var b strings.Builder
	var tools []string
	flush := func() {
		if len(tools) == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(toolLine(tools))
		tools = tools[:0]
	}
	var files []string
	seen := map[string]bool{}
	for _, st := range steps {
		if t := strings.TrimSpace(st.Text); t != "" {
			flush()
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(strings.TrimRight(st.Text, " \t\r\n"))
		}
		tools = append(tools, st.Tools...)
		for _, f := range st.Files {
			f = relPathIn(f, roots)
			if f == "" || seen[f] || len(files) >= logformat.DefaultLimits.MaxFiles || len(f) > logformat.DefaultLimits.MaxFileLen || strings.IndexByte(f, 0) >= 0 {
				continue
			}
			seen[f] = true
			files = append(files, f)
		}
	}
	flush()
	return b.String(), files
}

// toolLine summarises consecutive tool calls on one line, repeated calls
// counted, capped at maxToolLine bytes.
func toolLine(tools []string) string {
	var parts []string
	count := map[string]int{}
	for _, t := range tools {
		if count[t] == 0 {
			parts = append(parts, t)
		}
		count[t]++
	}
	var b strings.Builder
	b.WriteString("[tools] ")
	for i, p := range parts {
		s := p
		if c := count[p]; c > 1 {
			s += " ×" + itoa(c)
		}
		sep := ""
		if i > 0 {
			sep = " · "
		}
		if b.Len()+len(sep)+len(s) > maxToolLine {
			b.WriteString(" · … (+" + itoa(len(parts)-i) + " more)")
			break
		}
		b.WriteString(sep + s)
	}
	return b.String()
}

// relRoots are the folders file paths are made relative to: the
// workspace, then the other roots.
func (o Options) relRoots() []string {
	if o.Workspace == "" {
		return o.Roots
	}
	return append([]string{o.Workspace}, o.Roots...)
}

// relPathIn makes p relative to the first of roots holding it.
func relPathIn(p string, roots []string) string {
	p = strings.TrimSpace(p)
	for _, r := range roots {
		if q := relPath(p, r); q != p {
			return q
		}
	}
	return p
}

// relPath makes p relative to the workspace when it lies inside it.
func relPath(p, workspace string) string {
	p = strings.TrimSpace(p)
	if p == "" || workspace == "" || !filepath.IsAbs(p) {
		return p
	}
	if r, err := filepath.Rel(workspace, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
		return r
	}
	return p
}

// capText keeps at most max bytes of s (whole runes), saying how much was
// left out.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " […" + itoa(len(s)-n) + " bytes left out]"
}

// oneLine is the first line of s, trimmed, at most max bytes.
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if len(s) > max {
		n := max
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
