package hf

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/praxis-os/continuity/internal/shareddata"
)

// FuzzSafetensorsHeader: any bytes as a model.safetensors are either
// refused with an error or parsed into tensors that lie within the file
// and can be read, never a panic.
func FuzzSafetensorsHeader(f *testing.F) {
	f.Add(stFile(`{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(stFile(`{"a":{"dtype":"F16","shape":[1,2],"data_offsets":[0,4]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]}}`, make([]byte, 8)))
	f.Add(stFile(`{"a":{"dtype":"I64","shape":[],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(stFile(`{}`, nil))
	f.Add([]byte{})
	if b, err := os.ReadFile(filepath.Join(shareddata.Dir("bert-golden"), "tiny-bert-mean", fileWeights)); err == nil {
		f.Add(b[:min(len(b), 8192)]) // the header of a real file, truncated
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := readSafetensors("fuzz.safetensors", bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for name, ti := range st.tensors {
			if ti.Begin < 0 || ti.Begin+ti.Size > int64(len(data)) {
				t.Fatalf("tensor %q [%d, +%d) outside %d bytes", name, ti.Begin, ti.Size, len(data))
			}
			elems := 1
			for _, d := range ti.Shape {
				elems *= d
			}
			if st.check(name, ti.Shape...) == nil && elems <= 1<<16 {
				if err := st.float32s(name, make([]float32, elems)); err != nil {
					t.Fatalf("tensor %q: %v", name, err)
				}
			}
		}
	})
}

// FuzzTokenizerJSON: any bytes as a tokenizer.json are either refused or
// give a tokenizer that encodes any text without panicking, into ids it
// knows.
func FuzzTokenizerJSON(f *testing.F) {
	mini := map[string]any{
		"added_tokens":   []any{map[string]any{"id": 0, "content": "[UNK]", "special": true}, map[string]any{"id": 3, "content": "<m>", "lstrip": true, "rstrip": true, "single_word": true, "normalized": true}},
		"normalizer":     map[string]any{"type": "BertNormalizer", "lowercase": true},
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{"type": "TemplateProcessing", "single": []any{map[string]any{"SpecialToken": map[string]any{"id": "[UNK]", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 1}}}, "special_tokens": map[string]any{"[UNK]": map[string]any{"ids": []int{0}}}},
		"model":          map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "max_input_chars_per_word": 5, "vocab": map[string]int{"[UNK]": 0, "ab": 1, "##c": 2}},
	}
	b, _ := json.Marshal(mini)
	f.Add(b, "abc AB<m>c a\u0301b 中文 \u200b!")
	if g, err := os.ReadFile(filepath.Join(shareddata.Dir("bert-golden"), "tiny-bert-cls", fileTokenizer)); err == nil {
		f.Add(g, "[CLS] Hello, world! café")
	}
	f.Add([]byte(`{"model":{"type":"BPE"}}`), "x")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := ParseTokenizer(data)
		if err != nil {
			return
		}
		ids := tok.Encode(text)
		wrapped, types := tok.Wrap(ids)
		if len(wrapped) != len(ids)+tok.SpecialTokens() || len(types) != len(wrapped) {
			t.Fatalf("Wrap: %d ids and %d types for %d + %d", len(wrapped), len(types), len(ids), tok.SpecialTokens())
		}
		for _, id := range wrapped {
			if id < 0 || id > tok.MaxID() {
				t.Fatalf("id %d outside [0, %d]", id, tok.MaxID())
			}
		}
	})
}

// FuzzEncode: the reference tokenizer encodes any text, deterministically,
// into ids of its vocabulary; removing white space at the ends changes
// nothing.
func FuzzEncode(f *testing.F) {
	p := shareddata.Require(f, "bert-golden/tiny-bert-cls/"+fileTokenizer)
	tok, err := ReadTokenizer(p)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "Hello, world!", "[CLS] x [SEP]", "café 中文 🚀", "\x00\xff\u200b", "İΣ ﬁ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a := tok.Encode(text)
		b := tok.Encode(text)
		if len(a) != len(b) {
			t.Fatal("Encode is not deterministic")
		}
		for i, id := range a {
			if id != b[i] || tok.Token(id) == "" {
				t.Fatalf("id %d (%q)", id, tok.Token(id))
			}
		}
		padded := tok.Encode(" \t" + text + "\n ")
		if len(padded) != len(a) {
			t.Fatalf("white space at the ends changed the ids: %v vs %v", a, padded)
		}
	})
}
