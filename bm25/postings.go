package bm25

// A term's postings list the documents holding it, by ordinal within a
// segment (or the tail), ascending, each with the term's frequency in the
// user and in the ai column. One encoding serves the tail and the segment
// files, so sealing copies the tail's bytes and merging needs no other
// format:
//
//	uvarint(gap<<2 | code), gap = ordinal - previous ordinal - 1 (the
//	previous ordinal of the first posting is -1), code:
//	  0: tf user 1, ai 0     1: tf user 0, ai 1     2: tf 1 and 1
//	  3: uvarint(tf user), uvarint(tf ai) follow
//
// Most postings of a chat log are one occurrence in one column: one byte
// when the gap is below 32, two below 4096: about half the bytes of a
// varint of the gap then one per column.

// appendPosting appends the posting (ord, tu, ta) after the one of
// ordinal prev (-1 for the first).
func appendPosting(dst []byte, prev, ord int32, tu, ta uint32) []byte {
	gap := uint64(ord - prev - 1)
	switch {
	case tu == 1 && ta == 0:
		return appendUvarint(dst, gap<<2)
	case tu == 0 && ta == 1:
		return appendUvarint(dst, gap<<2|1)
	case tu == 1 && ta == 1:
		return appendUvarint(dst, gap<<2|2)
	}
	dst = appendUvarint(dst, gap<<2|3)
	dst = appendUvarint(dst, uint64(tu))
	return appendUvarint(dst, uint64(ta))
}

func appendUvarint(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// uvarint decodes a uvarint at b[i:], returning it and the index after;
// ok is false when b ends first or the value takes more than 10 bytes
// (damaged data: never a panic).
func uvarint(b []byte, i int) (v uint64, next int, ok bool) {
	var s uint
	for n := 0; n < 10; n++ {
		if i >= len(b) {
			return 0, i, false
		}
		c := b[i]
		i++
		if c < 0x80 {
			return v | uint64(c)<<s, i, true
		}
		v |= uint64(c&0x7F) << s
		s += 7
	}
	return 0, i, false
}

// postingIter reads postings. It checks every ordinal against nDocs, so
// that damaged bytes end the list (err set) instead of indexing out of
// range.
type postingIter struct {
	b     []byte
	i     int
	ord   int32
	nDocs int32
	bad   bool
}

func newPostingIter(b []byte, nDocs int) postingIter {
	return postingIter{b: b, ord: -1, nDocs: int32(nDocs)}
}

// next returns the next posting; ok is false at the end (or on damage:
// see bad).
func (it *postingIter) next() (ord int32, tu, ta uint32, ok bool) {
	if it.i >= len(it.b) {
		return 0, 0, 0, false
	}
	v, i, ok := uvarint(it.b, it.i)
	if !ok {
		it.bad, it.i = true, len(it.b)
		return 0, 0, 0, false
	}
	gap := v >> 2
	if gap >= uint64(it.nDocs) || int64(it.ord)+1+int64(gap) >= int64(it.nDocs) {
		it.bad, it.i = true, len(it.b)
		return 0, 0, 0, false
	}
	switch v & 3 {
	case 0:
		tu, ta = 1, 0
	case 1:
		tu, ta = 0, 1
	case 2:
		tu, ta = 1, 1
	default:
		var u, a uint64
		var ok1, ok2 bool
		u, i, ok1 = uvarint(it.b, i)
		a, i, ok2 = uvarint(it.b, i)
		if !ok1 || !ok2 || u > 1<<31 || a > 1<<31 {
			it.bad, it.i = true, len(it.b)
			return 0, 0, 0, false
		}
		tu, ta = uint32(u), uint32(a)
	}
	it.i = i
	it.ord += int32(gap) + 1
	return it.ord, tu, ta, true
}
