package hf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// miniTokenizer builds a tokenizer.json around a small vocabulary.
func miniTokenizer(t *testing.T, edit func(map[string]any)) (*Tokenizer, error) {
	t.Helper()
	vocab := map[string]int{"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "hello": 5, "world": 6, "un": 7, "##aff": 8, "##able": 9, ",": 10, "!": 11, "a": 12, "σ": 13, "i": 14, "<mask>": 15}
	tj := map[string]any{
		"version": "1.0",
		"added_tokens": []any{
			map[string]any{"id": 0, "content": "[PAD]", "special": true},
			map[string]any{"id": 1, "content": "[UNK]", "special": true},
			map[string]any{"id": 2, "content": "[CLS]", "special": true},
			map[string]any{"id": 3, "content": "[SEP]", "special": true},
			map[string]any{"id": 4, "content": "[MASK]", "special": true},
		},
		"normalizer":     map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{"type": "BertProcessing", "sep": []any{"[SEP]", 3}, "cls": []any{"[CLS]", 2}},
		"model":          map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 10, "vocab": vocab},
	}
	if edit != nil {
		edit(tj)
	}
	b, err := json.Marshal(tj)
	if err != nil {
		t.Fatal(err)
	}
	return ParseTokenizer(b)
}

func tokens(tok *Tokenizer, ids []int32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tok.Token(id)
	}
	return out
}

func TestTokenizerRules(t *testing.T) {
	tok, err := miniTokenizer(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ text, want string }{
		{"Hello, WORLD!", "hello , world !"},
		{"unaffable", "un ##aff ##able"},
		{"unaffablex", "[UNK]"},                    // a word WordPiece cannot cover is one [UNK]
		{"aaaaaaaaaaa", "[UNK]"},                   // longer than max_input_chars_per_word
		{"áá", "[UNK]"},                            // accents stripped: "aa" is not in the vocabulary
		{"a\u0301", "a"},                           // a combining accent goes
		{"\u200b a \u0007", "a"},                   // format and control characters go
		{"[MASK]hello[CLS]", "[MASK] hello [CLS]"}, // special tokens matched in the raw text, inside words too
		{"[mask]", "[UNK] [UNK] [UNK]"},            // ... case-sensitively: "[", "mask", "]" are not in this vocabulary
		{"ΣΑ", "[UNK]"},                            // lowercase per character: σα, not in the vocabulary
		{"Σ", "σ"},                                 // no final-sigma rule
		{"İ", "i"},                                 // İ: stripped to I, lowercased
		{"", ""},
		{"   \t\n", ""},
		{"\xff\xfehello", "hello"}, // invalid UTF-8: replacement characters, cleaned away
	} {
		got := strings.Join(tokens(tok, tok.Encode(tc.text)), " ")
		if got != tc.want {
			t.Errorf("Encode(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	ids, types := tok.Wrap([]int32{5, 6})
	if !slices.Equal(ids, []int32{2, 5, 6, 3}) || !slices.Equal(types, []int32{0, 0, 0, 0}) {
		t.Errorf("BertProcessing wraps [5 6] as %v %v", ids, types)
	}
}

// TestAddedTokenOptions: lstrip, rstrip, single_word and normalized
// behave as in the tokenizers library's added vocabulary.
func TestAddedTokenOptions(t *testing.T) {
	tok, err := miniTokenizer(t, func(tj map[string]any) {
		tj["added_tokens"] = append(tj["added_tokens"].([]any),
			map[string]any{"id": 15, "content": "<mask>", "lstrip": true, "rstrip": false, "single_word": true},
			map[string]any{"id": 16, "content": "Tok", "normalized": true},
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ text, want string }{
		{"hello <mask> world", "hello <mask> world"},
		{"hello<mask> world", "hello [UNK] [UNK] [UNK] world"}, // not a single word: "<", "mask", ">", unknown
		{"a TOK a", "a Tok a"},                                 // a normalized added token matches the normalized text
	} {
		got := strings.Join(tokens(tok, tok.Encode(tc.text)), " ")
		if got != tc.want {
			t.Errorf("Encode(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	// The matcher's pieces: lstrip takes the white space before the token.
	var pieces []string
	tok.raw.split("hello  <mask> world", func(p string, a *addedToken) { pieces = append(pieces, p) })
	if !slices.Equal(pieces, []string{"hello", "  <mask>", " world"}) {
		t.Errorf("lstrip pieces %q", pieces)
	}
}

// TestTokenizerRefuses: tokenizer.json files of other model types, or
// malformed, are refused with what was found.
func TestTokenizerRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"BPE", func(tj map[string]any) {
			tj["model"] = map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}, "merges": []string{}}
		}, "model type BPE"},
		{"Unigram", func(tj map[string]any) {
			tj["model"] = map[string]any{"type": "Unigram", "vocab": []any{[]any{"a", 0.0}}}
		}, "model type Unigram"},
		{"untyped BPE", func(tj map[string]any) {
			tj["model"] = map[string]any{"vocab": map[string]int{"a": 0}, "merges": []string{}}
		}, "model type untyped"},
		{"no model", func(tj map[string]any) { delete(tj, "model") }, "no model"},
		{"no unk", func(tj map[string]any) { tj["model"].(map[string]any)["unk_token"] = "<unk>" }, `unk_token "<unk>" is not in the vocabulary`},
		{"normalizer", func(tj map[string]any) { tj["normalizer"] = map[string]any{"type": "NFKC"} }, `normalizer type "NFKC"`},
		{"pre-tokenizer", func(tj map[string]any) { tj["pre_tokenizer"] = map[string]any{"type": "ByteLevel"} }, "pre_tokenizer ByteLevel"},
		{"no pre-tokenizer", func(tj map[string]any) { delete(tj, "pre_tokenizer") }, "pre_tokenizer none"},
		{"post-processor", func(tj map[string]any) { tj["post_processor"] = map[string]any{"type": "RobertaProcessing"} }, `post_processor type "RobertaProcessing"`},
		{"template without A", func(tj map[string]any) {
			tj["post_processor"] = map[string]any{"type": "TemplateProcessing", "single": []any{}, "special_tokens": map[string]any{}}
		}, "holds the sequence 0 times"},
		{"negative id", func(tj map[string]any) { tj["model"].(map[string]any)["vocab"].(map[string]int)["x"] = -1 }, "has id -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := miniTokenizer(t, tc.edit)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ParseTokenizer([]byte(`{"model": `)); err == nil || !strings.Contains(err.Error(), "not a tokenizer.json") {
		t.Errorf("truncated JSON: %v", err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "tokenizer.json")
	os.WriteFile(p, []byte(`[]`), 0o600)
	if _, err := ReadTokenizer(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("ReadTokenizer does not name the file: %v", err)
	}
}
