// Package redact removes secrets (API keys, tokens, private keys, passwords)
// from text before continuity stores or embeds it: an agent that pasted a
// key into a conversation must not find it again in the index, in search
// results or in an embedding server's logs.
//
// Each secret is replaced by "[REDACTED:<rule name>]"; the text around it is
// kept. The rules are in patterns.go. Redaction is idempotent: redacting a
// redacted text changes nothing.
//
// Rules are cheap when their secret is absent: each names literal keywords
// (a token's prefix, a key name) and its regular expression runs only when
// one of them occurs in the text, and most expressions start with a literal
// that the regexp engine finds with a fast substring search.
package redact

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"unsafe"
)

// Rule describes one kind of secret.
type Rule struct {
	// Name identifies the rule in the replacement "[REDACTED:<Name>]":
	// lower case, digits and '-'. Several rules may share a name (variants
	// of one kind of secret).
	Name string
	// Comment says what the rule finds, for people reading the rules.
	Comment string
	// Regexp (Go RE2 syntax) matches the secret. When it has groups named
	// "secret", only the participating ones are replaced (the text matched
	// around them, a key name or a URL's user, is kept); otherwise the whole
	// match is.
	Regexp string
	// Keywords are literal strings, at least 3 bytes long, with one of
	// which every match of Regexp starts: Regexp is tried only where one
	// occurs, anchored there (the fast path: a text without any keyword
	// costs one scan for all rules together). Empty: Regexp is searched in
	// the whole text.
	Keywords []string
	// Fold matches Regexp and Keywords against a copy of the text with
	// ASCII letters lowered (same byte offsets): write both in lower case.
	Fold bool
	// WordStart rejects a match that directly follows a letter, a digit or
	// '_' (except a JSON escape such as \n): the secret must start a word.
	WordStart bool
	// MaxLen bounds the length of a match tried at a keyword, in bytes
	// (default 1024): the text beyond is not looked at.
	MaxLen int
	// Check, if set, is given each secret and the whole match around it
	// (both in their original case) and redacts the secret only if it
	// returns true: entropy, placeholder and key name tests.
	Check func(secret, match string) bool
}

// Redactor redacts with a fixed set of rules. It is safe for concurrent
// use. A nil *Redactor redacts nothing (redaction switched off).
type Redactor struct {
	rules []compiled
	names []string
	// kws are the keywords of all rules; table maps a hash of a keyword's
	// first 3 bytes (lowered) to 1 + an index in buckets, the keywords
	// starting so, or to 0.
	kws     []keyword
	table   [tableSize]uint16
	buckets [][]int32
}

const (
	tableBits = 12
	tableSize = 1 << tableBits
	// defaultMaxLen is Rule.MaxLen's default.
	defaultMaxLen = 1024
)

type keyword struct {
	text  string        // as written
	fold  bool          // text is lower case and compared with the folded text
	rule  int           // index in Redactor.rules
	after *afterKeyword // what may come after it in a match; nil: unknown
}

type compiled struct {
	Rule
	re       *regexp.Regexp // searched in the whole text (no keywords)
	anchored *regexp.Regexp // ^(?:Regexp), tried at keywords
	groups   []int          // indexes of the groups named "secret"
	repl     string
}

// Replacement is what a secret found by the rule named name becomes.
func Replacement(name string) string { return "[REDACTED:" + name + "]" }

// marker starts every replacement; a secret containing it is not redacted
// again, which makes redaction idempotent.
const marker = "[REDACTED:"

// New compiles rules, applied in order: earlier rules see the text first,
// so specific rules (a GitHub token) should come before generic ones (a
// "token=" assignment).
func New(rules ...Rule) (*Redactor, error) {
	r := &Redactor{}
	seen := map[string]bool{}
	var buckets [tableSize][]int32
	for i, rule := range rules {
		if rule.Name == "" {
			return nil, fmt.Errorf("redact: rule with pattern %q has no name", rule.Regexp)
		}
		re, err := regexp.Compile(rule.Regexp)
		if err != nil {
			return nil, fmt.Errorf("redact: rule %s: %w", rule.Name, err)
		}
		c := compiled{Rule: rule, re: re, repl: Replacement(rule.Name)}
		c.anchored = regexp.MustCompile(`^(?:` + rule.Regexp + `)`)
		if c.MaxLen <= 0 {
			c.MaxLen = defaultMaxLen
		}
		for j, n := range re.SubexpNames() {
			if n == "secret" {
				c.groups = append(c.groups, j)
			}
		}
		for _, k := range rule.Keywords {
			if len(k) < 3 {
				return nil, fmt.Errorf("redact: rule %s: keyword %q is shorter than 3 bytes", rule.Name, k)
			}
			if rule.Fold && k != string(asciiLower(nil, []byte(k))) {
				return nil, fmt.Errorf("redact: rule %s: keyword %q must be lower case (Fold)", rule.Name, k)
			}
			h := hash3(lowerByte(k[0]), lowerByte(k[1]), lowerByte(k[2]))
			buckets[h] = append(buckets[h], int32(len(r.kws)))
			r.kws = append(r.kws, keyword{text: k, fold: rule.Fold, rule: i, after: afterKeywordOf(rule.Regexp, k)})
		}
		r.rules = append(r.rules, c)
		if !seen[rule.Name] {
			seen[rule.Name] = true
			r.names = append(r.names, rule.Name)
		}
	}
	for h, b := range buckets {
		if len(b) > 0 {
			r.buckets = append(r.buckets, b)
			r.table[h] = uint16(len(r.buckets))
		}
	}
	return r, nil
}

// MustNew is New that panics on an error, for rules known to be valid.
func MustNew(rules ...Rule) *Redactor {
	r, err := New(rules...)
	if err != nil {
		panic(err)
	}
	return r
}

var (
	defOnce sync.Once
	def     *Redactor
)

// Default returns the redactor with the built-in rules (DefaultRules).
func Default() *Redactor {
	defOnce.Do(func() { def = MustNew(DefaultRules()...) })
	return def
}

// EnvVar switches redaction off when set to "off", "0", "false" or "no".
// It is on by default.
const EnvVar = "CONTINUITY_REDACT"

// FromEnv returns Default(), or nil (which redacts nothing) when EnvVar
// switches redaction off.
func FromEnv() *Redactor {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvVar))) {
	case "off", "0", "false", "no":
		return nil
	}
	return Default()
}

// Redact redacts s with the built-in rules and returns the text and the
// number of secrets replaced.
func Redact(s string) (string, int) { return Default().Redact(s) }

// RedactBytes is Redact for a byte slice; see Redactor.RedactBytes.
func RedactBytes(b []byte) ([]byte, int) { return Default().RedactBytes(b) }

// Names lists the names of the built-in rules, in the order they apply.
func Names() []string { return Default().Names() }

// Names lists the rule names, each once, in the order they apply.
func (r *Redactor) Names() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.names...)
}

// Redact returns s with every secret replaced by "[REDACTED:<name>]", and
// the number of secrets replaced. Without secrets it returns s itself.
func (r *Redactor) Redact(s string) (string, int) {
	if r == nil || s == "" {
		return s, 0
	}
	return r.redact(s)
}

// RedactBytes is Redact for a byte slice. Without secrets it returns b
// itself; otherwise a new slice (b is never modified).
func (r *Redactor) RedactBytes(b []byte) ([]byte, int) {
	if r == nil || len(b) == 0 {
		return b, 0
	}
	// The string aliases b only for the duration of the call: every
	// result is copied into a new slice.
	out, n := r.redact(unsafe.String(&b[0], len(b)))
	if n == 0 {
		return b, 0
	}
	return []byte(out), n
}

// scratch is the per-call working memory, pooled.
type scratch struct {
	lower []byte   // the folded text
	cands []int32  // where a keyword may start
	hits  []hit    // keyword occurrences, by position
	first []int32  // per rule, its first hit, or -1; hit.next chains the others
	last  []int32  // per rule, its last hit
	spans [][2]int // what one rule replaces
}

// hit is an occurrence of keyword kw (an index in Redactor.kws) at pos.
type hit struct {
	kw   int32
	pos  int32
	next int32 // the next hit of the same rule, or -1
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// redact applies the rules in order. One pass over the folded text finds
// the keywords of every rule; after a rule replaced something, offsets
// have moved, and the remaining rules get a new pass.
func (r *Redactor) redact(s string) (string, int) {
	sc := scratchPool.Get().(*scratch)
	defer func() {
		if cap(sc.lower) > 1<<20 { // do not keep the copy of a huge text
			sc.lower = nil
		}
		scratchPool.Put(sc)
	}()
	total := 0
	from := 0 // first rule not applied yet
scan:
	for from < len(r.rules) {
		r.scan(s, sc, from)
		for i := from; i < len(r.rules); i++ {
			c := &r.rules[i]
			var spans [][2]int
			if len(c.Keywords) == 0 {
				spans = c.search(s, sc.lower, sc.spans[:0])
			} else {
				if sc.first[i] < 0 {
					continue
				}
				spans = c.atHits(s, sc, r.kws, i)
			}
			sc.spans = spans
			if len(spans) > 0 {
				s = replace(s, spans, c.repl)
				total += len(spans)
				from = i + 1
				continue scan
			}
		}
		break
	}
	return s, total
}

// scan folds s into sc.lower and lists in sc.hits the occurrences of the
// keywords of rules from on, in order of position.
func (r *Redactor) scan(s string, sc *scratch, from int) {
	n := len(s)
	if cap(sc.lower) < n {
		sc.lower = make([]byte, n, n+n/2)
	}
	l := sc.lower[:n]
	sc.lower = l
	sc.hits = sc.hits[:0]
	sc.cands = sc.cands[:0]
	if len(sc.first) != len(r.rules) {
		sc.first = make([]int32, len(r.rules))
		sc.last = make([]int32, len(r.rules))
	}
	for i := range sc.first {
		sc.first[i] = -1
	}
	// One pass folds the text and notes where a keyword's first 3 bytes
	// may end (a hash table hit); the candidates are checked afterwards,
	// when the bytes after them are folded too.
	var key uint32
	for i := 0; i < n; i++ {
		c := s[i]
		if c-'A' < 26 {
			c += 'a' - 'A'
		}
		l[i] = c
		key = key<<8 | uint32(c)
		if r.table[((key&0xFFFFFF)*2654435761)>>(32-tableBits)] != 0 && i >= 2 {
			sc.cands = append(sc.cands, int32(i-2))
		}
	}
	for _, p := range sc.cands {
		i := int(p)
		e := r.table[hash3(l[i], l[i+1], l[i+2])]
		for _, k := range r.buckets[e-1] {
			kw := &r.kws[k]
			if kw.rule < from || i+len(kw.text) > n {
				continue
			}
			var ok bool
			if kw.fold {
				ok = string(l[i:i+len(kw.text)]) == kw.text
			} else {
				ok = s[i:i+len(kw.text)] == kw.text
			}
			if ok {
				idx := int32(len(sc.hits))
				if sc.first[kw.rule] < 0 {
					sc.first[kw.rule] = idx
				} else {
					sc.hits[sc.last[kw.rule]].next = idx
				}
				sc.last[kw.rule] = idx
				sc.hits = append(sc.hits, hit{kw: k, pos: p, next: -1})
			}
		}
	}
}

func hash3(a, b, c byte) uint32 {
	key := uint32(a)<<16 | uint32(b)<<8 | uint32(c)
	return (key * 2654435761) >> (32 - tableBits)
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// atHits tries rule i anchored at each of its keyword hits, and appends
// the spans to replace.
func (c *compiled) atHits(s string, sc *scratch, kws []keyword, i int) [][2]int {
	lower, out := sc.lower, sc.spans[:0]
	next := 0 // matches do not overlap
	for j := sc.first[i]; j >= 0; j = sc.hits[j].next {
		h := &sc.hits[j]
		kw := &kws[h.kw]
		p := int(h.pos)
		if p < next {
			continue
		}
		if c.WordStart && !wordStart(s, p) {
			continue
		}
		if f := kw.after; f != nil {
			if q := p + len(kw.text); q < len(s) && !f.set.has(lower[q]) && !f.set.has(s[q]) || q == len(s) && !f.end {
				continue
			}
		}
		end := min(len(s), p+c.MaxLen)
		var m []int
		if c.Fold {
			m = c.anchored.FindSubmatchIndex(lower[p:end])
		} else {
			m = c.anchored.FindStringSubmatchIndex(s[p:end])
		}
		if m == nil || m[1] == 0 {
			continue
		}
		for j := range m {
			if m[j] >= 0 {
				m[j] += p
			}
		}
		n := len(out)
		out = c.spansOf(s, m, out)
		if len(out) > n {
			next = m[1]
		}
	}
	return out
}

// search finds the matches of a rule without keywords in the whole text.
func (c *compiled) search(s string, lower []byte, out [][2]int) [][2]int {
	var ms [][]int
	if c.Fold {
		ms = c.re.FindAllSubmatchIndex(lower, -1)
	} else {
		ms = c.re.FindAllStringSubmatchIndex(s, -1)
	}
	for _, m := range ms {
		if c.WordStart && !wordStart(s, m[0]) {
			continue
		}
		out = c.spansOf(s, m, out)
	}
	return out
}

// spansOf appends the spans to replace for match m.
func (c *compiled) spansOf(s string, m []int, out [][2]int) [][2]int {
	if len(c.groups) == 0 {
		return c.add(s, m[0], m[1], m, out)
	}
	for _, g := range c.groups {
		if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
			out = c.add(s, m[2*g], m[2*g+1], m, out)
		}
	}
	return out
}

func (c *compiled) add(s string, a, b int, m []int, out [][2]int) [][2]int {
	sec := s[a:b]
	if strings.Contains(sec, marker) {
		return out
	}
	if c.Check != nil && !c.Check(sec, s[m[0]:m[1]]) {
		return out
	}
	return append(out, [2]int{a, b})
}

// replace replaces the ordered, disjoint spans of s by repl.
func replace(s string, spans [][2]int, repl string) string {
	var b strings.Builder
	n := len(s)
	for _, sp := range spans {
		n += len(repl) - (sp[1] - sp[0])
	}
	b.Grow(n)
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString(repl)
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// wordStart reports whether offset i of s starts a word: it is the start,
// or follows neither a letter, a digit nor '_'. A JSON escape (\n, \t, \r)
// before it counts as a separator, for raw log lines.
func wordStart(s string, i int) bool {
	if i == 0 || !isWord(s[i-1]) {
		return true
	}
	if i >= 2 && s[i-2] == '\\' {
		switch s[i-1] {
		case 'n', 't', 'r':
			return true
		}
	}
	return false
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// asciiLower appends src with ASCII letters lowered to dst: the same
// length, so offsets carry over.
func asciiLower(dst, src []byte) []byte {
	n := len(dst)
	dst = append(dst, src...)
	for i, c := range dst[n:] {
		if 'A' <= c && c <= 'Z' {
			dst[n+i] = c + ('a' - 'A')
		}
	}
	return dst
}

// Character classes of a candidate secret.
type classes struct {
	lower, upper, digit, other int
}

func classify(s string) classes {
	var c classes
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case 'a' <= b && b <= 'z':
			c.lower++
		case 'A' <= b && b <= 'Z':
			c.upper++
		case '0' <= b && b <= '9':
			c.digit++
		default:
			c.other++
		}
	}
	return c
}

// entropy is the Shannon entropy of s's bytes, in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
