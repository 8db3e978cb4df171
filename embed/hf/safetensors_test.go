package hf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/praxis-os/continuity/embed/internal/cores"
)

// stFile builds a safetensors file from a raw header and data.
func stFile(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func parseST(b []byte) (*safetensors, error) {
	return readSafetensors("model.safetensors", bytes.NewReader(b), int64(len(b)))
}

// TestSafetensorsMalformed: every malformed, truncated or inconsistent
// file is an error naming the file and the reason, never a panic.
func TestSafetensorsMalformed(t *testing.T) {
	eight := make([]byte, 8)
	huge := make([]byte, 8)
	binary.LittleEndian.PutUint64(huge, 1<<62)
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"short", []byte{1, 2, 3}, "too short"},
		{"zero header", eight, "header length 0"},
		{"oversized header", huge, "more than the format's"},
		{"truncated header", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, nil)[:20], "truncated"},
		{"not JSON", stFile(`{nope}`, nil), "header"},
		{"not an object", stFile(`[1,2]`, nil), "does not start with '{'"},
		{"trailing bytes", stFile(`{} x`, nil), "after the JSON object"},
		{"unknown dtype", stFile(`{"a":{"dtype":"F13","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), `unknown dtype "F13"`},
		{"no shape", stFile(`{"a":{"dtype":"F32","data_offsets":[0,4]}}`, make([]byte, 4)), "no shape"},
		{"negative shape", stFile(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)), "shape"},
		{"shape overflow", stFile(`{"a":{"dtype":"F32","shape":[2147483647,2147483647,2147483647],"data_offsets":[0,4]}}`, make([]byte, 4)), "shape"},
		{"offsets out of range", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 4)), "outside"},
		{"offsets reversed", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}`, make([]byte, 4)), "outside"},
		{"size mismatch", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)), "takes 8 bytes"},
		{"overlap", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), "overlaps"},
		{"hole", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), "belong to no tensor"},
		{"data past the tensors", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 8)), "the file holds 8"},
		{"bad metadata", stFile(`{"__metadata__":{"a":1}}`, nil), "__metadata__"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseST(tc.file)
			if err == nil || !strings.Contains(err.Error(), "model.safetensors") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one naming the file and %q", err, tc.want)
			}
		})
	}
	// Valid: metadata, an empty tensor, I64 ids next to F32 weights.
	st, err := parseST(stFile(`{"__metadata__":{"format":"pt"},"e":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"ids":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[1,1],"data_offsets":[8,12]}}  `, make([]byte, 12)))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.check("ids", 1); err == nil || !strings.Contains(err.Error(), "I64") {
		t.Errorf("an I64 tensor read as weights: %v", err)
	}
	if err := st.check("w", 2, 1); err == nil || !strings.Contains(err.Error(), "config.json implies") {
		t.Errorf("a wrong shape: %v", err)
	}
	if err := st.check("nope", 1); err == nil {
		t.Error("a missing tensor")
	}
}

// rewriteWeights writes a copy of the model folder src into dst with its
// weights converted: to dtype (F32, F16 or BF16) and with the tensor names
// prefixed.
func rewriteWeights(t *testing.T, src, dst, dtype, prefix string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dst, fileWeights)
	os.Chmod(path, 0o600)
	f, err := os.Open(filepath.Join(src, fileWeights))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	st, err := readSafetensors(path, f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(st.tensors))
	for n := range st.tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data bytes.Buffer
	for _, n := range names {
		ti := st.tensors[n]
		elems := 1
		for _, d := range ti.Shape {
			elems *= d
		}
		v := make([]float32, elems)
		if err := st.float32s(n, v); err != nil {
			t.Fatal(err)
		}
		begin := data.Len()
		for _, x := range v {
			switch dtype {
			case "F32":
				binary.Write(&data, binary.LittleEndian, math.Float32bits(x))
			case "F16":
				binary.Write(&data, binary.LittleEndian, float16.Fromfloat32(x).Bits())
			case "BF16":
				binary.Write(&data, binary.LittleEndian, uint16(math.Float32bits(x)>>16))
			}
		}
		header[prefix+n] = map[string]any{"dtype": dtype, "shape": ti.Shape, "data_offsets": []int{begin, data.Len()}}
	}
	// A tensor the model does not read, in another dtype.
	header[prefix+"embeddings.position_ids"] = map[string]any{"dtype": "I64", "shape": []int{1, 1}, "data_offsets": []int{data.Len(), data.Len() + 8}}
	data.Write(make([]byte, 8))
	h, _ := json.Marshal(header)
	if err := os.WriteFile(path, stFile(string(h), data.Bytes()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestWeightFormats: F16 and BF16 weights, and tensor names with the
// "bert." prefix of a BertFor* checkpoint, load and give the F32 model's
// vectors (within the rounding of the narrower type).
func TestWeightFormats(t *testing.T) {
	src := goldenDir(t, "tiny-bert-cls")
	rows := readGolden(t, src)
	for _, tc := range []struct {
		dtype, prefix string
		tol           float64
	}{{"F32", "bert.", 1e-5}, {"F16", "", 5e-3}, {"BF16", "bert.", 5e-2}} {
		t.Run(tc.dtype+tc.prefix, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "m")
			rewriteWeights(t, src, dir, tc.dtype, tc.prefix)
			m, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Load(); err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for _, r := range rows {
				out := make([]float32, m.Dimension())
				m.forward(&workspace{}, []sequence{{r.InputIDs, make([]int32, len(r.InputIDs))}}, out, cores.Exec{Threads: 1})
				worst = max(worst, maxAbsDiff(out, r.Embedding))
			}
			if worst > tc.tol {
				t.Errorf("vectors off by up to %g, want ≤ %g", worst, tc.tol)
			}
			t.Logf("%s weights, prefix %q: max abs error %.3g", tc.dtype, tc.prefix, worst)
		})
	}
}

// TestOpenRefuses: folders that are not BERT models, or not whole, are
// refused when opened, with an error naming the file.
func TestOpenRefuses(t *testing.T) {
	src := goldenDir(t, "tiny-bert-mean")
	edit := func(t *testing.T, file string, f func([]byte) []byte) string {
		dir := filepath.Join(t.TempDir(), "m")
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(file))
		os.Chmod(p, 0o600)
		b, _ := os.ReadFile(p)
		if b = f(b); b == nil {
			os.Remove(p)
		} else if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	replace := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
	}
	for _, tc := range []struct {
		name, file string
		f          func([]byte) []byte
		want       string
	}{
		{"roberta", fileConfig, replace(`"model_type": "bert"`, `"model_type": "roberta"`), `config.json: model_type "roberta" (architectures BertModel)`},
		{"no model_type", fileConfig, func(b []byte) []byte {
			return replace(`"BertModel"`, `"GPT2Model"`)(replace(`"model_type": "bert"`, `"model_typo": "bert"`)(b))
		}, "config.json: model_type missing (architectures GPT2Model)"},
		{"heads", fileConfig, replace(`"num_attention_heads": 4`, `"num_attention_heads": 5`), "does not divide"},
		{"activation", fileConfig, replace(`"hidden_act": "gelu"`, `"hidden_act": "swish"`), `hidden_act "swish"`},
		{"relative positions", fileConfig, replace(`"model_type": "bert"`, `"model_type": "bert", "position_embedding_type": "relative_key"`), "position_embedding_type"},
		{"hidden size", fileConfig, replace(`"hidden_size": 64`, `"hidden_size": 128`), "has shape [3000 64], config.json implies [3000 128]"},
		{"layers", fileConfig, replace(`"num_hidden_layers": 2`, `"num_hidden_layers": 3`), `tensor "encoder.layer.2.attention.self.query.weight": no such tensor`},
		{"vocab", fileConfig, replace(`"vocab_size": 3000`, `"vocab_size": 100`), "token id 2999 but config.json's vocab_size is 100"},
		{"config JSON", fileConfig, func(b []byte) []byte { return b[:len(b)/2] }, "config.json"},
		{"no weights", fileWeights, func([]byte) []byte { return nil }, "model.safetensors: missing"},
		{"truncated weights", fileWeights, func(b []byte) []byte { return b[:len(b)-10] }, "model.safetensors: not a valid safetensors file"},
		{"no tokenizer", fileTokenizer, func([]byte) []byte { return nil }, "tokenizer.json: missing"},
		{"type vocabulary", fileConfig, replace(`"type_vocab_size": 2`, `"type_vocab_size": 1`), "has shape [2 64], config.json implies [1 64]"},
		{"type id past the table", fileTokenizer, replace(`"id": "A",
          "type_id": 0`, `"id": "A",
          "type_id": 2`), "token type id 2 but config.json's type_vocab_size is 2"},
		{"BPE", fileTokenizer, replace(`"type": "WordPiece",
    "unk_token"`, `"type": "BPE",
    "unk_token"`), "tokenizer.json: model type BPE"},
		{"dense module", fileModules, replace(`{"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}`, `{"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}`), "2_Dense"},
		{"module outside", fileModules, replace(`"path": "1_Pooling"`, `"path": "../1_Pooling"`), "leaves the model folder"},
		{"no pooling config", filePooling, func([]byte) []byte { return nil }, "missing (modules.json names a Pooling module)"},
		{"weighted mean", filePooling, replace(`"pooling_mode_mean_tokens": true`, `"pooling_mode_mean_tokens": false, "pooling_mode_weightedmean_tokens": true`), "weighted-mean"},
		{"max_seq_length", fileSBert, replace(`"max_seq_length": 32`, `"max_seq_length": 2`), "no room for text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(edit(t, tc.file, tc.f), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// Pooling from a known model's default when the folder has none.
	dir := edit(t, fileModules, func([]byte) []byte { return nil })
	os.Remove(filepath.Join(dir, filePooling))
	k, _ := LookupKnown("bge-small-en-v1.5")
	if m, err := Open(dir, k); err != nil || m.Pooling() != PoolCLS {
		t.Errorf("a folder without pooling, known bge defaults: %v %v", m, err)
	}
	if m, err := Open(dir, nil); err != nil || m.Pooling() != PoolMean {
		t.Errorf("a folder without pooling: %v %v", m, err)
	}
}
