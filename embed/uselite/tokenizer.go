package uselite

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// reservedPieces is the number of vocabulary entries at the start that are
// never matched in text ("�" = unknown, "<s>", "</s>", three extra ids).
const reservedPieces = 6

// unknownID is the id of the unknown piece: a character no piece covers.
const unknownID = 0

// separator replaces spaces and starts every text, as in SentencePiece.
const separator = '▁'

// Tokenizer is the SentencePiece unigram tokenizer of USE-lite, a port of
// the one in @energetic-ai/embeddings 0.2.0 (lib/tokenizer.ts), including
// its quirks, because the model was run with it: text is NFKC-normalised,
// a "▁" is prepended and every ASCII space (only U+0020) becomes "▁"; the
// segmentation maximising the sum of piece scores is found by Viterbi over
// code points, where a score of exactly 0 counts as "not reached yet" and
// ties go to the later candidate; characters no piece covers become the
// unknown id, and runs of unknowns collapse to one.
//
// A Tokenizer is immutable and safe for concurrent use.
type Tokenizer struct {
	root   *trieNode
	pieces []piece // by id
}

type piece struct {
	score  float64
	utf16n int // length of the piece in UTF-16 code units (the backtrack step of the JS code)
}

type trieNode struct {
	children map[rune]*trieNode
	end      bool
	id       int32
	score    float64
	runes    int32 // piece length in code points
}

// NewTokenizer reads a vocabulary in the vocab.json format: a JSON array
// of [piece, score] pairs, the index being the id. A null score counts as
// 0, as in JavaScript arithmetic.
func NewTokenizer(vocabJSON []byte) (*Tokenizer, error) {
	var raw [][2]json.RawMessage
	if err := json.Unmarshal(vocabJSON, &raw); err != nil {
		return nil, fmt.Errorf("uselite: vocabulary: %w", err)
	}
	if len(raw) <= reservedPieces {
		return nil, fmt.Errorf("uselite: vocabulary: only %d pieces", len(raw))
	}
	t := &Tokenizer{root: &trieNode{}, pieces: make([]piece, len(raw))}
	for i, r := range raw {
		var s string
		if err := json.Unmarshal(r[0], &s); err != nil {
			return nil, fmt.Errorf("uselite: vocabulary entry %d: %w", i, err)
		}
		var score *float64
		if err := json.Unmarshal(r[1], &score); err != nil {
			return nil, fmt.Errorf("uselite: vocabulary entry %d: %w", i, err)
		}
		p := piece{utf16n: len(utf16.Encode([]rune(s)))}
		if score != nil {
			p.score = *score
		}
		t.pieces[i] = p
		if i < reservedPieces || s == "" {
			continue
		}
		n := t.root
		runes := []rune(s)
		for _, c := range runes {
			next := n.children[c]
			if next == nil {
				if n.children == nil {
					n.children = map[rune]*trieNode{}
				}
				next = &trieNode{}
				n.children[c] = next
			}
			n = next
		}
		// A later duplicate overwrites an earlier one, as in the JS trie.
		n.end, n.id, n.score, n.runes = true, int32(i), p.score, int32(len(runes))
	}
	return t, nil
}

// VocabularySize is the number of pieces.
func (t *Tokenizer) VocabularySize() int { return len(t.pieces) }

// edge is a candidate piece in the lattice.
type edge struct {
	start int32
	id    int32
	score float64
}

// Encode returns the piece ids of text. An empty text has no ids.
func (t *Tokenizer) Encode(text string) []int32 {
	text = norm.NFKC.String(text)
	if text == "" {
		return nil
	}
	syms := make([]rune, 0, len(text)+1)
	syms = append(syms, separator)
	for _, c := range text {
		if c == ' ' {
			c = separator
		}
		syms = append(syms, c)
	}
	n := len(syms)

	// ends[e] lists the pieces ending at code point e, by increasing start
	// (the JS code iterates an object with integer keys: ascending order).
	ends := make([][]edge, n+1)
	for i := 0; i < n; i++ {
		found := false
		node := t.root.children[syms[i]]
		for j := i; node != nil; j++ {
			if node.end {
				ends[j+1] = append(ends[j+1], edge{start: int32(i), id: node.id, score: node.score})
				found = true
			}
			if j+1 >= n {
				break
			}
			node = node.children[syms[j+1]]
		}
		if !found {
			ends[i+1] = append(ends[i+1], edge{start: int32(i), id: unknownID, score: 0})
		}
	}
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for e := 0; e <= n; e++ {
		for _, w := range ends[e] {
			s := w.score + best[w.start]
			if best[e] == 0 || s >= best[e] {
				best[e] = s
				words[e] = w.id
			}
		}
	}
	// Backtrack. The JS code steps back by the piece's length in UTF-16
	// units although it indexes code points; pieces are all in the BMP, so
	// this only matters for the unknown piece, whose "�" is one unit long.
	var rev []int32
	for i := n; i > 0; {
		id := words[i]
		rev = append(rev, id)
		i -= t.pieces[id].utf16n
	}
	out := make([]int32, 0, len(rev))
	prevUnknown := false
	for _, id := range rev {
		if !(prevUnknown && id == unknownID) {
			out = append(out, id)
		}
		prevUnknown = id == unknownID
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// isBlank reports whether text has nothing but white space.
func isBlank(text string) bool { return strings.TrimSpace(text) == "" }
