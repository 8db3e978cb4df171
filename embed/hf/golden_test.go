package hf

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/praxis-os/continuity/embed/internal/cores"
	"github.com/praxis-os/continuity/internal/shareddata"
)

// goldenRow is a line of bert-golden's golden.jsonl: what transformers and
// sentence-transformers compute for a text.
type goldenRow struct {
	Text      string    `json:"text"`
	InputIDs  []int32   `json:"input_ids"`
	Tokens    []string  `json:"tokens"`
	Embedding []float32 `json:"embedding"`
}

// goldenModels are the two tiny random-weight models of
// ../shared/data/bert-golden.
var goldenModels = []string{"tiny-bert-mean", "tiny-bert-cls"}

// goldenDir returns the folder of a golden model, skipping the test when
// the shared data is absent.
func goldenDir(t testing.TB, model string) string {
	t.Helper()
	return shareddata.Require(t, "bert-golden/"+model)
}

func readGolden(t testing.TB, dir string) []goldenRow {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []goldenRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var r goldenRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("golden.jsonl is empty")
	}
	return rows
}

// maxAbsDiff is the largest |a[i] - b[i]|, +Inf when the lengths differ.
func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var m float64
	for i := range a {
		m = max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}

// TestGoldenModel checks the tokenizer and the forward pass against
// Hugging Face's own code: every id list exactly (after truncation to
// max_seq_length, special tokens included), every token, and every vector
// within 1e-5 (float32 arithmetic in another order; the references are
// rounded to 7 decimals).
func TestGoldenModel(t *testing.T) {
	for _, name := range goldenModels {
		t.Run(name, func(t *testing.T) {
			dir := goldenDir(t, name)
			m, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Load(); err != nil {
				t.Fatal(err)
			}
			tok := m.Tokenizer()
			rows := readGolden(t, dir)
			worst, idsOK, vecOK := 0.0, 0, 0
			ws := &workspace{}
			for _, r := range rows {
				content := tok.Encode(r.Text)
				content = content[:min(len(content), m.MaxTokens()-tok.SpecialTokens())]
				ids, _ := tok.Wrap(content)
				var toks []string
				for _, id := range ids {
					toks = append(toks, tok.Token(id))
				}
				if !slices.Equal(ids, r.InputIDs) || !slices.Equal(toks, r.Tokens) {
					t.Errorf("%.60q:\n got %v %q\nwant %v %q", r.Text, ids, toks, r.InputIDs, r.Tokens)
				} else {
					idsOK++
				}
				out := make([]float32, m.Dimension())
				// The reference ids, so that a vector is checked even
				// when the tokenizer is wrong.
				m.forward(ws, []sequence{{r.InputIDs, make([]int32, len(r.InputIDs))}}, out, cores.Exec{Threads: 1})
				d := maxAbsDiff(out, r.Embedding)
				worst = max(worst, d)
				if d > 1e-5 {
					t.Errorf("%.60q: vector off by %g", r.Text, d)
				} else {
					vecOK++
				}
			}
			t.Logf("%s: ids %d/%d, vectors %d/%d within 1e-5, max abs error %.3g", name, idsOK, len(rows), vecOK, len(rows), worst)
		})
	}
}
