package analyze

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/praxis-os/continuity/internal/shareddata"
)

// documentReference is Document as it was first written (Words, then the
// segments of each word): the straightforward form that AppendDocument's
// fast path must match byte for byte, since the full-text index
// (fulltext.db layout 2) holds terms made by either.
func documentReference(text string) string {
	var b strings.Builder
	first := true
	sep := func() {
		if !first {
			b.WriteByte(' ')
		}
		first = false
	}
	for _, w := range Words(text) {
		segments(w, func(seg string, cjk bool) {
			if !cjk {
				sep()
				b.WriteString(Stem(seg))
				return
			}
			prev := -1
			for i := range seg {
				if prev >= 0 {
					sep()
					b.WriteString(seg[prev:nextRune(seg, i)])
				}
				prev = i
			}
			sep()
			b.WriteString(seg[prev:])
		})
	}
	return b.String()
}

// documentSamples are texts of every kind the fast path must handle like
// the reference: ASCII words and punctuation, capitals, digits, long
// words, diacritics (composed and combining), CJK runs inside and beside
// words, other scripts, letters whose lowercase is ASCII (Kelvin sign,
// dotted capital I), private-use characters, invalid UTF-8.
var documentSamples = []string{
	"",
	" ",
	"The builds are FAILING again! Running, runs, RUNNING; connections...",
	"snake_case and kebab-case, don't stop-the-world ipv4 sha256 x86_64 0xFF 3.14",
	"authentication authenticate generously dying retries retried webhooks cooking",
	strings.Repeat("supercalifragilisticexpialidocious", 5) + " a b cd efg",
	"Naïve café, Ærø, résumé, façade, coöperate, Ångström, ÉCOLE, straße, İstanbul",
	"Cafe\u0301 nai\u0308ve (combining marks) e\u0301e\u0301",
	"日本語のテストです。utf8エンコード ok 中文分词，测试！한국어 문장",
	"がぎぐ パーティー ﾊﾝｶｸ 〜ー々",
	"Привет мир, Ελληνικά ΣΊΣΥΦΟΣ, עברית, العربية, हिन्दी, ไทย",
	"\u212Aelvin \u212A \u0130 \u0131 ǅungla ǈ ǋ",
	"private \ue000use\ue001 chars",
	"invalid \xff\xfe utf8 \xc3( mixed\xe2\x82",
	"emoji 🚀 launch🚀now 👍🏽 and ZWJ 👩‍💻 sequences",
	"tabs\tand\nnewlines\r\nand\u00a0nbsp\u2003em-space",
	"MiXeD CaSe WoRdS with Numbers123 and 123numbers and UPPER-lower",
	"½ ² ③ Ⅻ ١٢٣ digits of other scripts",
	"x'y\"z`w ~!@#$%^&*()_+={}[]|\\:;<>,.?/",
}

func TestAppendDocumentMatchesReference(t *testing.T) {
	samples := append([]string(nil), documentSamples...)
	samples = append(samples, realTexts(t)...)
	// One Analyzer for everything, twice over: its cache of stems fills,
	// collides and answers.
	an := new(Analyzer)
	for _, s := range append(samples, samples...) {
		want := documentReference(s)
		if got := an.Document(s); got != want {
			t.Fatalf("Analyzer.Document(%q)\n got %q\nwant %q", s, got, want)
		}
	}
	for _, s := range samples {
		want := documentReference(s)
		if got := Document(s); got != want {
			t.Errorf("Document(%q)\n got %q\nwant %q", s, got, want)
		}
		if got := string(AppendDocument([]byte("prefix"), s)); got != "prefix"+want {
			t.Errorf("AppendDocument(prefix, %q) = %q, want %q", s, got, "prefix"+want)
		}
	}
}

func FuzzAppendDocument(f *testing.F) {
	for _, s := range documentSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := documentReference(s)
		if got := Document(s); got != want {
			t.Fatalf("Document(%q) = %q, want %q", s, got, want)
		}
		if utf8.ValidString(s) && !utf8.ValidString(want) {
			t.Fatalf("Document(%q) = %q: invalid UTF-8 from valid text", s, want)
		}
	})
}

// realTexts returns the user and ai texts of a few LongMemEval logs
// (real English conversations, some with other scripts), found at
// $CONTINUITY_EVAL_DATA or ../../shared/data/longmemeval-s-dev; none when
// absent.
func realTexts(t testing.TB) []string {
	dir := shareddata.LongMemEval()
	files, _ := filepath.Glob(filepath.Join(dir, "logs", "*.jsonl"))
	if len(files) == 0 {
		t.Logf("no LongMemEval logs under %s (set CONTINUITY_EVAL_DATA): synthetic samples only", dir)
		return nil
	}
	var out []string
	for _, f := range files[:min(len(files), 4)] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			var ev struct{ User, AI string }
			if json.Unmarshal(line, &ev) == nil {
				out = append(out, ev.User, ev.AI)
			}
		}
	}
	return out
}

func BenchmarkDocumentReference(b *testing.B) {
	text := strings.Repeat("The watcher tails the log files; rotation is detected by inode and fingerprints, then retried. ", 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		documentReference(text)
	}
}

// BenchmarkDocumentReal analyses LongMemEval texts (skipped without them).
func BenchmarkDocumentReal(b *testing.B) {
	texts := realTexts(b)
	if len(texts) == 0 {
		b.Skip("no LongMemEval logs (set CONTINUITY_EVAL_DATA)")
	}
	var size int64
	for _, s := range texts {
		size += int64(len(s))
	}
	b.SetBytes(size)
	for b.Loop() {
		for _, s := range texts {
			Document(s)
		}
	}
}

func BenchmarkDocumentRealReference(b *testing.B) {
	texts := realTexts(b)
	if len(texts) == 0 {
		b.Skip("no LongMemEval logs (set CONTINUITY_EVAL_DATA)")
	}
	for b.Loop() {
		for _, s := range texts {
			documentReference(s)
		}
	}
}
