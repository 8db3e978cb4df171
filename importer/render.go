package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/praxis-os/continuity/logformat"
)

// Size limits of rendered events (protocol.md, "Imported transcripts").
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
	o = o.withDefaults()
	var out []planned
	last := o.Now
	if inRange(s.Time) {
		last = s.Time.UTC()
	}
	for _, it := range s.Items {
		if inRange(it.Time) {
			last = it.Time
			break
		}
	}
	timeOf := func(t time.Time) time.Time {
		if !inRange(t) {
			return last
		}
		last = t.UTC()
		return last
	}
	for _, prev := range s.Previous {
		if prev == s.ID || logformat.ValidSessionID(prev) != nil {
			continue
		}
		out = append(out, planned{ev: logformat.Event{
			Type: logformat.TypeSessionResume, SessionID: s.ID,
			PreviousSession: prev, NewSession: s.ID,
			ID:        s.Agent + ":resume:" + prev + ":" + s.ID,
			Timestamp: timeOf(firstTime(s.Items)),
			Metadata:  metaJSON(meta{Source: s.Agent, Native: filepath.Base(s.Source)}),
		}})
	}

	// Group items into turns; a reset seals the current part.
	type turnAcc struct {
		id     string
		prompt Item
		has    bool // a prompt opened it
		parts  [][]Item
		cur    []Item
		size   int
		ended  bool
		copy   bool
	}
	var cur *turnAcc
	var turns []*turnAcc
	seen := map[string]bool{}
	// pending holds, per turn, the position of its parts among resets.
	type slot struct {
		turn *turnAcc
		part int
		ev   *planned // a reset
	}
	var slots []slot
	seal := func() {
		if cur == nil || len(cur.cur) == 0 {
			return
		}
		cur.parts = append(cur.parts, cur.cur)
		slots = append(slots, slot{turn: cur, part: len(cur.parts) - 1})
		cur.cur, cur.size = nil, 0
	}
	openTurn := func(p Item, has bool) {
		seal()
		if cur != nil && len(cur.parts) == 0 && cur.has {
			// a prompt with no answer: still an exchange (user only)
			slots = append(slots, slot{turn: cur, part: -1})
		}
		t := &turnAcc{prompt: p, has: has}
		if has && p.KeyedTurn {
			t.id = turnID(s.Agent, time.Time{}, s.ID+"\x00"+p.Text, p.Key)
		} else if has {
			t.id = turnID(s.Agent, p.Time, p.Text, p.Key)
		} else {
			t.id = s.Agent + ":" + shortHash(s.ID+"\x00"+p.Key) + "-orphan"
		}
		if seen[t.id] {
			// the same prompt (time and text) again: history copied into
			// the file by a continued session; stored once
			t.copy = true
		}
		seen[t.id] = true
		cur = t
		turns = append(turns, t)
	}
	for _, it := range s.Items {
		switch it.Kind {
		case ItemPrompt:
			openTurn(it, true)
		case ItemStep:
			if cur == nil {
				openTurn(it, false)
			}
			if it.Break {
				seal()
			}
			for _, st := range splitStep(it, o.PartBytes) {
				n := stepSize(st)
				if cur.size > 0 && cur.size+n > o.PartBytes {
					seal()
				}
				cur.cur = append(cur.cur, st)
				cur.size += n
			}
		case ItemEnd:
			if cur != nil {
				cur.ended = true
			}
		case ItemReset:
			seal()
			if cur != nil && len(cur.parts) == 0 && cur.has {
				slots = append(slots, slot{turn: cur, part: -1})
				cur.parts = append(cur.parts, nil)
			}
			reason := it.Reason
			if reason == "" {
				reason = "context compacted"
			}
			ev := planned{ev: logformat.Event{
				Type: logformat.TypeContextReset, SessionID: s.ID, Reason: reason,
				ID:        resetID(s.Agent, s.ID, it.Key),
				Timestamp: timeOf(it.Time),
				Metadata:  metaJSON(meta{Source: s.Agent, Native: nativeRef(s.Source, it.Line)}),
			}, srcLine: it.Line}
			slots = append(slots, slot{ev: &ev})
		}
	}
	seal()
	if cur != nil && len(cur.parts) == 0 && cur.has {
		slots = append(slots, slot{turn: cur, part: -1})
	}
	var held *turnAcc
	if o.HoldOpenTurn && cur != nil && !cur.ended {
		held = cur
	}
	for _, sl := range slots {
		if sl.ev != nil {
			out = append(out, *sl.ev)
			continue
		}
		t := sl.turn
		if t == held || t.copy {
			continue
		}
		var steps []Item
		part := sl.part
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
				user = capText(t.prompt.Text, o.MaxUserBytes)
			} else {
				user = "[continued] " + capText(t.prompt.Text, continuedPrompt)
			}
		}
		ai, files := renderSteps(steps, o.Workspace)
		if strings.TrimSpace(user) == "" && strings.TrimSpace(ai) == "" {
			continue
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
		p.srcLine = line
		p.ev = logformat.Event{
			Type: logformat.TypeExchange, SessionID: s.ID,
			ID:        partID(t.id, first, part),
			Timestamp: timeOf(ts),
			User:      user, AI: ai, Files: files,
			Metadata: metaJSON(meta{Source: s.Agent, Native: nativeRef(s.Source, line), Turn: t.id, Through: through}),
		}
		out = append(out, p)
	}
	return out
}

// resetID is a context_reset's id: <agent>:reset:<session>:<record key>
// (the Claude Code SessionStart hook gives a compaction the same id, from
// the compact_boundary record's uuid), hashed when too long for an id.
func resetID(agent, session, key string) string {
	id := agent + ":reset:" + session + ":" + key
	if len(id) > 200 {
		id = agent + ":reset:" + shortHash(session+"\x00"+key)
	}
	return id
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
	ai, files := renderSteps(steps, o.Workspace)
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
		Metadata: metaJSON(meta{Source: s.Agent, Native: nativeRef(s.Source, steps[0].Line), Turn: p.turn, Through: steps[len(steps)-1].Key}),
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
func renderSteps(steps []Item, workspace string) (string, []string) {
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
			f = relPath(f, workspace)
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
