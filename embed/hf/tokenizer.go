package hf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenizer is the tokenizer that a Hugging Face tokenizer.json describes,
// for the BERT family: added tokens matched first (special tokens such as
// [CLS] literally, in the raw text), a BertNormalizer, the
// BertPreTokenizer, a WordPiece model and a post-processor that adds the
// special tokens (TemplateProcessing or BertProcessing). Anything else
// (BPE, Unigram, other normalizers or pre-tokenizers) is refused when the
// file is read, with an error that names the file and what it found. It
// is read-only once built: safe for concurrent use.
type Tokenizer struct {
	vocab    map[string]int32
	tokens   map[int32]string // id → token, for display
	unkID    int32
	prefix   string // continuing_subword_prefix, "##"
	maxChars int    // max_input_chars_per_word: longer words are [UNK]
	norm     *bertNormalizer
	raw      matcher // added tokens matched in the raw text (normalized: false)
	normed   matcher // added tokens matched in the normalized text
	single   []templatePiece
	special  int // ids the post-processor adds to a single sequence
	// maxLength is tokenizer.json's truncation max_length, 0 when absent.
	maxLength int
}

// templatePiece is one item of the post-processor's template for a single
// sequence: the sequence itself (ids nil) or a special token's ids.
type templatePiece struct {
	ids    []int32
	typeID int32
}

// addedToken is an entry of tokenizer.json's added_tokens.
type addedToken struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// maxTokenizerFile bounds what ReadTokenizer reads: real BERT
// tokenizer.json files are under 1 MB.
const maxTokenizerFile = 64 << 20

// ReadTokenizer reads a tokenizer.json file.
func ReadTokenizer(path string) (*Tokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxTokenizerFile {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a tokenizer.json may have", path, st.Size(), maxTokenizerFile)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t, err := ParseTokenizer(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseTokenizer parses the contents of a tokenizer.json.
func ParseTokenizer(b []byte) (*Tokenizer, error) {
	var f struct {
		Truncation *struct {
			MaxLength int `json:"max_length"`
		} `json:"truncation"`
		AddedTokens   []addedToken    `json:"added_tokens"`
		Normalizer    json.RawMessage `json:"normalizer"`
		PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
		PostProcessor json.RawMessage `json:"post_processor"`
		Model         json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	t := &Tokenizer{}
	if err := t.readModel(f.Model); err != nil {
		return nil, err
	}
	if err := t.readNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if err := readPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := t.readAdded(f.AddedTokens); err != nil {
		return nil, err
	}
	if err := t.readPostProcessor(f.PostProcessor); err != nil {
		return nil, err
	}
	if f.Truncation != nil && f.Truncation.MaxLength > 0 {
		t.maxLength = f.Truncation.MaxLength
	}
	return t, nil
}

// typeOf returns the "type" field of a JSON object ("" when absent) and
// whether raw is null or absent.
func typeOf(raw json.RawMessage) (string, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", true, nil
	}
	var v struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", false, err
	}
	return v.Type, false, nil
}

func (t *Tokenizer) readModel(raw json.RawMessage) error {
	typ, null, err := typeOf(raw)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if null {
		return fmt.Errorf("no model: want a WordPiece model")
	}
	var m struct {
		Type     string          `json:"type"`
		Unk      *string         `json:"unk_token"`
		Prefix   *string         `json:"continuing_subword_prefix"`
		MaxChars *int            `json:"max_input_chars_per_word"`
		Vocab    json.RawMessage `json:"vocab"`
		Merges   json.RawMessage `json:"merges"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if typ == "" && m.Merges == nil && m.Prefix != nil {
		typ = "WordPiece" // the library infers an untagged model from its fields
	}
	if typ != "WordPiece" {
		if typ == "" {
			typ = "untyped"
		}
		return fmt.Errorf("model type %s: continuity's hf embedder reads BERT-family tokenizers (WordPiece) only", typ)
	}
	if err := json.Unmarshal(m.Vocab, &t.vocab); err != nil || len(t.vocab) == 0 {
		return fmt.Errorf("model: vocab: want an object of token ids (%v)", err)
	}
	t.tokens = make(map[int32]string, len(t.vocab))
	for tok, id := range t.vocab {
		if id < 0 {
			return fmt.Errorf("model: vocab: token %q has id %d", tok, id)
		}
		t.tokens[id] = tok
	}
	unk := "[UNK]"
	if m.Unk != nil {
		unk = *m.Unk
	}
	id, ok := t.vocab[unk]
	if !ok {
		return fmt.Errorf("model: unk_token %q is not in the vocabulary", unk)
	}
	t.unkID = id
	t.prefix = "##"
	if m.Prefix != nil {
		t.prefix = *m.Prefix
	}
	t.maxChars = 100
	if m.MaxChars != nil {
		t.maxChars = *m.MaxChars
	}
	return nil
}

func (t *Tokenizer) readNormalizer(raw json.RawMessage) error {
	typ, null, err := typeOf(raw)
	if err != nil {
		return fmt.Errorf("normalizer: %w", err)
	}
	if null {
		return nil
	}
	if typ != "BertNormalizer" {
		return fmt.Errorf("normalizer type %q: continuity's hf embedder reads BertNormalizer only", typ)
	}
	var n struct {
		CleanText          *bool `json:"clean_text"`
		HandleChineseChars *bool `json:"handle_chinese_chars"`
		StripAccents       *bool `json:"strip_accents"`
		Lowercase          *bool `json:"lowercase"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("normalizer: %w", err)
	}
	or := func(b *bool, def bool) bool {
		if b == nil {
			return def
		}
		return *b
	}
	t.norm = &bertNormalizer{
		cleanText:          or(n.CleanText, true),
		handleChineseChars: or(n.HandleChineseChars, true),
		lowercase:          or(n.Lowercase, true),
	}
	// strip_accents null follows lowercase.
	t.norm.stripAccents = or(n.StripAccents, t.norm.lowercase)
	return nil
}

func readPreTokenizer(raw json.RawMessage) error {
	typ, null, err := typeOf(raw)
	if err != nil {
		return fmt.Errorf("pre_tokenizer: %w", err)
	}
	if null || typ != "BertPreTokenizer" {
		if null {
			typ = "none"
		}
		return fmt.Errorf("pre_tokenizer %s: continuity's hf embedder reads BertPreTokenizer only", typ)
	}
	return nil
}

func (t *Tokenizer) readAdded(added []addedToken) error {
	var raw, normed []pattern
	for i := range added {
		a := &added[i]
		if a.Content == "" {
			continue
		}
		if a.ID < 0 {
			return fmt.Errorf("added_tokens: %q has id %d", a.Content, a.ID)
		}
		if _, ok := t.tokens[a.ID]; !ok {
			t.tokens[a.ID] = a.Content
		}
		if a.Normalized {
			text := a.Content
			if t.norm != nil {
				text = t.norm.normalize(text)
			}
			if text != "" {
				normed = append(normed, pattern{text: text, tok: a})
			}
		} else {
			raw = append(raw, pattern{text: a.Content, tok: a})
		}
	}
	t.raw = newMatcher(raw)
	t.normed = newMatcher(normed)
	return nil
}

func (t *Tokenizer) readPostProcessor(raw json.RawMessage) error {
	typ, null, err := typeOf(raw)
	if err != nil {
		return fmt.Errorf("post_processor: %w", err)
	}
	if null {
		t.single = []templatePiece{{}}
		return nil
	}
	switch typ {
	case "TemplateProcessing":
		var p struct {
			Single []struct {
				SpecialToken *struct {
					ID     string `json:"id"`
					TypeID int32  `json:"type_id"`
				} `json:"SpecialToken"`
				Sequence *struct {
					ID     string `json:"id"`
					TypeID int32  `json:"type_id"`
				} `json:"Sequence"`
			} `json:"single"`
			SpecialTokens map[string]struct {
				IDs []int32 `json:"ids"`
			} `json:"special_tokens"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("post_processor: %w", err)
		}
		seq := 0
		for _, piece := range p.Single {
			switch {
			case piece.Sequence != nil:
				if piece.Sequence.ID != "A" {
					return fmt.Errorf("post_processor: single template has sequence %q, want A", piece.Sequence.ID)
				}
				seq++
				t.single = append(t.single, templatePiece{typeID: piece.Sequence.TypeID})
			case piece.SpecialToken != nil:
				st, ok := p.SpecialTokens[piece.SpecialToken.ID]
				if !ok || len(st.IDs) == 0 {
					return fmt.Errorf("post_processor: special token %q has no ids", piece.SpecialToken.ID)
				}
				t.single = append(t.single, templatePiece{ids: st.IDs, typeID: piece.SpecialToken.TypeID})
				t.special += len(st.IDs)
			default:
				return fmt.Errorf("post_processor: a template piece is neither SpecialToken nor Sequence")
			}
		}
		if seq != 1 {
			return fmt.Errorf("post_processor: the single template holds the sequence %d times, want once", seq)
		}
	case "BertProcessing":
		var p struct {
			Sep []json.RawMessage `json:"sep"`
			Cls []json.RawMessage `json:"cls"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("post_processor: %w", err)
		}
		id := func(pair []json.RawMessage, name string) ([]int32, error) {
			var v int32
			if len(pair) != 2 || json.Unmarshal(pair[1], &v) != nil {
				return nil, fmt.Errorf("post_processor: %s: want [token, id]", name)
			}
			return []int32{v}, nil
		}
		cls, err := id(p.Cls, "cls")
		if err != nil {
			return err
		}
		sep, err := id(p.Sep, "sep")
		if err != nil {
			return err
		}
		t.single = []templatePiece{{ids: cls}, {}, {ids: sep}}
		t.special = 2
	default:
		return fmt.Errorf("post_processor type %q: continuity's hf embedder reads TemplateProcessing and BertProcessing only", typ)
	}
	for _, p := range t.single {
		if p.typeID < 0 {
			return fmt.Errorf("post_processor: type_id %d", p.typeID)
		}
		for _, id := range p.ids {
			if id < 0 {
				return fmt.Errorf("post_processor: special token id %d", id)
			}
		}
	}
	return nil
}

// MaxTypeID is the largest token type id the post-processor gives.
func (t *Tokenizer) MaxTypeID() int32 {
	m := int32(0)
	for _, p := range t.single {
		m = max(m, p.typeID)
	}
	return m
}

// SpecialTokens is how many ids the post-processor adds around a text.
func (t *Tokenizer) SpecialTokens() int { return t.special }

// MaxLength is tokenizer.json's truncation max_length, 0 when it has none.
func (t *Tokenizer) MaxLength() int { return t.maxLength }

// Token returns the token of id ("" when unknown), for display.
func (t *Tokenizer) Token(id int32) string { return t.tokens[id] }

// MaxID is the largest id the tokenizer can produce.
func (t *Tokenizer) MaxID() int32 {
	m := int32(-1)
	for id := range t.tokens {
		m = max(m, id)
	}
	for _, p := range t.single {
		for _, id := range p.ids {
			m = max(m, id)
		}
	}
	return m
}

// Encode returns the token ids of text, without the special tokens the
// post-processor adds (see Wrap) and without truncation: added tokens
// first, then the normalizer, the pre-tokenizer and WordPiece.
func (t *Tokenizer) Encode(text string) []int32 {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	var ids []int32
	t.raw.split(text, func(piece string, tok *addedToken) {
		if tok != nil {
			ids = append(ids, tok.ID)
			return
		}
		if t.norm != nil {
			piece = t.norm.normalize(piece)
		}
		t.normed.split(piece, func(piece string, tok *addedToken) {
			if tok != nil {
				ids = append(ids, tok.ID)
				return
			}
			ids = t.preTokenize(ids, piece)
		})
	})
	return ids
}

// Wrap adds the post-processor's special tokens around content: the ids
// the model reads and their token type ids.
func (t *Tokenizer) Wrap(content []int32) (ids, types []int32) {
	n := len(content) + t.special
	ids, types = make([]int32, 0, n), make([]int32, 0, n)
	for _, p := range t.single {
		src := p.ids
		if src == nil {
			src = content
		}
		ids = append(ids, src...)
		for range src {
			types = append(types, p.typeID)
		}
	}
	return ids, types
}

// preTokenize splits s on white space (dropped) and punctuation (each
// mark a word of its own), as BertPreTokenizer does, and appends the
// WordPiece ids of each word.
func (t *Tokenizer) preTokenize(ids []int32, s string) []int32 {
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				ids = t.wordPiece(ids, s[start:i])
				start = -1
			}
		case isBertPunct(r):
			if start >= 0 {
				ids = t.wordPiece(ids, s[start:i])
				start = -1
			}
			ids = t.wordPiece(ids, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		ids = t.wordPiece(ids, s[start:])
	}
	return ids
}

// wordPiece appends the ids of word: the longest vocabulary entry from
// the start, then the longest continuation (prefixed "##") from there, and
// so on; a word that cannot be covered, or of more than maxChars
// characters, is one [UNK].
func (t *Tokenizer) wordPiece(ids []int32, word string) []int32 {
	if utf8.RuneCountInString(word) > t.maxChars {
		return append(ids, t.unkID)
	}
	if id, ok := t.vocab[word]; ok { // the common case: a whole word
		return append(ids, id)
	}
	n := len(ids)
	var buf []byte
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for start < end {
			var id int32
			var ok bool
			if start == 0 {
				id, ok = t.vocab[word[:end]]
			} else {
				buf = append(append(buf[:0], t.prefix...), word[start:end]...)
				id, ok = t.vocab[string(buf)] // no allocation: a map index by a converted []byte
			}
			if ok {
				ids = append(ids, id)
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if !found {
			return append(ids[:n], t.unkID)
		}
		start = end
	}
	return ids
}

// pattern is an added token's text as matched.
type pattern struct {
	text string
	tok  *addedToken
}

// matcher finds added tokens in a text the way the tokenizers library's
// Aho-Corasick automaton does (leftmost-longest, non-overlapping, a match
// discarded by single_word still consumed), with the tokens' single_word,
// lstrip and rstrip rules. Added tokens are few, so a scan by first byte
// does.
type matcher struct {
	byFirst map[byte][]pattern // longest first
}

func newMatcher(ps []pattern) matcher {
	if len(ps) == 0 {
		return matcher{}
	}
	m := matcher{byFirst: map[byte][]pattern{}}
	for _, p := range ps {
		m.byFirst[p.text[0]] = append(m.byFirst[p.text[0]], p)
	}
	for _, l := range m.byFirst {
		sort.SliceStable(l, func(i, j int) bool { return len(l[i].text) > len(l[j].text) })
	}
	return m
}

// split calls fn with the pieces of s in order: the added tokens found
// (tok set; their text may include white space stripped by lstrip or
// rstrip) and the text between them (tok nil, never empty).
func (m *matcher) split(s string, fn func(piece string, tok *addedToken)) {
	if m.byFirst == nil {
		if s != "" {
			fn(s, nil)
		}
		return
	}
	last := 0 // end of the last piece emitted
	for i := 0; i < len(s); {
		var hit *pattern
		for k, p := range m.byFirst[s[i]] {
			if strings.HasPrefix(s[i:], p.text) {
				hit = &m.byFirst[s[i]][k]
				break
			}
		}
		if hit == nil {
			i++
			continue
		}
		start, stop := i, i+len(hit.text)
		i = stop
		tok := hit.tok
		if tok.SingleWord {
			before := start == 0 || !endsWithWordChar(s[:start])
			after := stop == len(s) || !startsWithWordChar(s[stop:])
			if !before || !after {
				continue
			}
		}
		if tok.LStrip {
			start = max(len(strings.TrimRightFunc(s[:start], unicode.IsSpace)), last)
		}
		if tok.RStrip {
			stop = len(s) - len(strings.TrimLeftFunc(s[stop:], unicode.IsSpace))
			i = stop
		}
		if last < start {
			fn(s[last:start], nil)
		}
		fn(s[start:stop], tok)
		last = stop
	}
	if last < len(s) {
		fn(s[last:], nil)
	}
}

// isWordChar is \w of Rust's regex crate: alphabetic, marks, decimal
// digits, connector punctuation and join controls.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.In(r, unicode.M, unicode.Nd, unicode.Pc, unicode.Nl, unicode.Other_Alphabetic, unicode.Join_Control)
}

func endsWithWordChar(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r != utf8.RuneError && isWordChar(r)
}

func startsWithWordChar(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r != utf8.RuneError && isWordChar(r)
}
