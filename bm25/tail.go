package bm25

// docTable holds the per-document arrays of a segment or of the tail,
// indexed by ordinal: in the tail Go slices, in a segment views of the
// mapped file.
type docTable struct {
	rows []int64  // events.id, ascending
	ts   []int64  // event time, unix ns
	lens []uint32 // tokens in both columns (FTS5's xColumnSize(-1))
	sess []uint32 // session ordinal (Index.sessions)
}

func (t *docTable) n() int { return len(t.rows) }

// ordinal returns the ordinal of row, or -1.
func (t *docTable) ordinal(row int64) int {
	lo, hi := 0, len(t.rows)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.rows[m] < row {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(t.rows) && t.rows[lo] == row {
		return lo
	}
	return -1
}

// tail is the mutable part of the index: the documents added since the
// last seal, with their postings in memory, in the segment files'
// encoding (postings.go). Only the writer changes it, under Index.mu.
type tail struct {
	docs  docTable
	terms *termTable // term -> index in post
	post  []tailTerm
	// tokens is the total of docs.lens.
	tokens int64
}

type tailTerm struct {
	buf  []byte // encoded postings
	last int32  // ordinal of the last posting, -1 before the first
	df   uint32 // postings
	// The document being added: its ordinal and the term's counts in it.
	cur    int32
	tu, ta uint32
}

func newTail() *tail {
	return &tail{terms: newTermTable()}
}

// tailAdder adds documents to a tail; it keeps scratch space between
// documents.
type tailAdder struct {
	touched []int32
	buf     []byte
}

// add appends one document (its session already an ordinal).
func (a *tailAdder) add(t *tail, d *Doc, sess uint32) {
	ord := int32(t.docs.n())
	a.touched = a.touched[:0]
	n := uint32(0)
	for col, text := range [2]string{d.User, d.AI} {
		for i := 0; ; {
			var tok []byte
			var ok bool
			tok, a.buf, i, ok = nextToken(text, i, a.buf)
			if !ok {
				break
			}
			n++
			id, added := t.terms.intern(tok)
			if added {
				t.post = append(t.post, tailTerm{last: -1, cur: -1})
			}
			p := &t.post[id]
			if p.cur != ord {
				p.cur, p.tu, p.ta = ord, 0, 0
				a.touched = append(a.touched, id)
			}
			if col == 0 {
				p.tu++
			} else {
				p.ta++
			}
		}
	}
	for _, id := range a.touched {
		p := &t.post[id]
		p.buf = appendPosting(p.buf, p.last, ord, p.tu, p.ta)
		p.last = ord
		p.df++
	}
	t.docs.rows = append(t.docs.rows, d.Row)
	t.docs.ts = append(t.docs.ts, d.TS)
	t.docs.lens = append(t.docs.lens, n)
	t.docs.sess = append(t.docs.sess, sess)
	t.tokens += int64(n)
}

// lookup returns the postings of term in the tail (read or not: they
// are in memory).
func (t *tail) lookup(term string, _ bool, _ *[]byte) (post []byte, df uint32, err error) {
	id := t.terms.find(stringBytes(term))
	if id < 0 {
		return nil, 0, nil
	}
	p := &t.post[id]
	return p.buf, p.df, nil
}
