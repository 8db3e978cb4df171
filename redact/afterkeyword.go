package redact

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(b byte)      { s[b>>6] |= 1 << (b & 63) }
func (s *byteSet) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }
func (s *byteSet) addRange(lo, hi byte) {
	for b := int(lo); b <= int(hi); b++ {
		s.add(byte(b))
	}
}
func (s *byteSet) union(o byteSet) {
	for i := range s {
		s[i] |= o[i]
	}
}

// afterKeyword is what may come right after a keyword in a match of a rule:
// a cheap test that spares running the regexp at most keyword hits
// ("tokenizer" cannot be a "token" assignment).
type afterKeyword struct {
	set byteSet
	end bool // the match may end right after the keyword
}

// afterKeywordOf computes the bytes that may follow keyword kw at the start of a
// match of expr, or nil when it cannot tell (then the regexp always runs).
// It knows how when expr starts with a literal that starts with kw.
func afterKeywordOf(expr, kw string) *afterKeyword {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	var head *syntax.Regexp
	var rest []*syntax.Regexp
	switch re.Op {
	case syntax.OpLiteral:
		head = re
	case syntax.OpConcat:
		head, rest = re.Sub[0], re.Sub[1:]
	default:
		return nil
	}
	if head.Op != syntax.OpLiteral || head.Flags&syntax.FoldCase != 0 {
		return nil
	}
	lit := string(head.Rune)
	switch {
	case len(lit) < len(kw) || lit[:len(kw)] != kw:
		return nil
	case len(lit) > len(kw):
		f := &afterKeyword{}
		f.set.add(lit[len(kw)])
		return f
	}
	f := &afterKeyword{end: true}
	for _, sub := range rest {
		set, nullable := first(sub)
		f.set.union(set)
		if !nullable {
			f.end = false
			break
		}
	}
	if f.end { // anything may follow the match
		f.set = byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	}
	return f
}

// first returns the bytes with which a match of re may start, and whether
// re matches the empty string. Assertions count as empty (conservative).
func first(re *syntax.Regexp) (set byteSet, nullable bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return set, false
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return set, true
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return set, true
		}
		r := re.Rune[0]
		addRune(&set, r)
		if re.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				addRune(&set, f)
			}
		}
		return set, false
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo < utf8.RuneSelf {
				set.addRange(byte(lo), byte(min(hi, utf8.RuneSelf-1)))
			}
			if hi >= utf8.RuneSelf {
				set.addRange(0xC0, 0xFF) // UTF-8 lead bytes
			}
		}
		return set, false
	case syntax.OpAnyCharNotNL:
		set.addRange(0, 0xFF)
		set[0] &^= 1 << '\n'
		return set, false
	case syntax.OpAnyChar:
		set.addRange(0, 0xFF)
		return set, false
	case syntax.OpCapture, syntax.OpPlus:
		return first(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		set, _ = first(re.Sub[0])
		return set, true
	case syntax.OpRepeat:
		set, nullable = first(re.Sub[0])
		return set, nullable || re.Min == 0
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			s, n := first(sub)
			set.union(s)
			if !n {
				return set, false
			}
		}
		return set, true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, n := first(sub)
			set.union(s)
			nullable = nullable || n
		}
		return set, nullable
	}
	set.addRange(0, 0xFF) // unknown: anything
	return set, true
}

func addRune(s *byteSet, r rune) {
	if r < utf8.RuneSelf {
		s.add(byte(r))
		return
	}
	var buf [utf8.UTFMax]byte
	utf8.EncodeRune(buf[:], r)
	s.add(buf[0])
}
