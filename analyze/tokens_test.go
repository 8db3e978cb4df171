package analyze

import (
	"slices"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want string // space-separated
	}{
		{"", ""},
		{"  \t\n ", ""},
		{"Hello, World!", "hello world"},
		{"ConversationWatcher", "conversation watcher"},
		{"conversationWatcher", "conversation watcher"},
		{"conversation_watcher", "conversation watcher"},
		{"CONVERSATION_WATCHER", "conversation watcher"},
		{"conversation-watcher.go", "conversation watcher go"},
		{"HTTPServer", "http server"},
		{"XMLHttpRequest", "xml http request"},
		{"getHTTPResponseCode", "get http response code"},
		{"ABTest", "ab test"},
		{"URLs APIs IDs", "urls apis ids"},
		{"IPv4Address", "ipv4 address"},
		{"Base64Encode", "base64 encode"},
		{"HTTP2Server", "http2 server"},
		{"sha256sum md5 utf8 v2", "sha256sum md5 utf8 v2"},
		{"3D 2FA 4K", "3d 2fa 4k"},
		{"don't user's", "don t user s"},
		{"func (w *Watcher) Run(ctx context.Context) error {", "func w watcher run ctx context context error"},
		{"Café NAÏVE Straße ÜberGroß", "café naïve straße über groß"},
		{"日本語のテキスト", "日本語のテキスト"},
		{"Ελληνικά κείμενα", "ελληνικά κείμενα"},
		{"e\u0301cole", "e\u0301cole"}, // combining accent stays in the word
		{"emoji🙂between", "emoji between"},
		{"a1b2 x_y_z", "a1b2 x y z"},
	}
	for _, tt := range tests {
		got := strings.Join(Tokens(tt.in), " ")
		if got != tt.want {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", ""},
		{"the and of is", ""},
		{"ConversationWatcher", "convers watcher"},
		{"conversation_watcher", "convers watcher"},
		{"Authentication failed; authenticate again", "authent fail authent"},
		{"Running the runners runs", "run runner run"},
		{"I don't know what's wrong", "know wrong"},
		{"connections connected connecting", "connect connect connect"},
		{"Generalizations", "general"},
		{"sha256 HTTP2 3D", "sha256 http2 3d"},
		{"naïve cafés", "naïve cafés"},
	}
	for _, tt := range tests {
		got := strings.Join(Terms(tt.in), " ")
		if got != tt.want {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Terms are what the embedder sees: equal terms, equal unigram features.
	if !slices.Equal(Terms("ConversationWatcher"), Terms("conversation watcher")) {
		t.Error("camelCase and spaced words differ")
	}
}

func TestStopwords(t *testing.T) {
	for _, w := range []string{"the", "and", "don", "ll"} {
		if !IsStopword(w) {
			t.Errorf("%q is not a stopword", w)
		}
	}
	for _, w := range []string{"watcher", "error", "go", "The"} {
		if IsStopword(w) {
			t.Errorf("%q is a stopword", w)
		}
	}
}

// tokensBenchText reads like an exchange about code: camelCase and
// snake_case names, paths, numbers.
var tokensBenchText = strings.Repeat("The ConversationWatcher keeps re-indexing session-42.jsonl after every restart; "+
	"I think matchGeneration in watcher/tail.go compares the wrong offsets (HTTPServer, base64Encode, IPv4). ", 8)

func BenchmarkTokens(b *testing.B) {
	var tk Tokenizer
	var buf []byte
	var spans []Span
	b.SetBytes(int64(len(tokensBenchText)))
	for b.Loop() {
		buf, spans = tk.AppendTokens(buf[:0], spans[:0], tokensBenchText)
	}
}

func BenchmarkTerms(b *testing.B) {
	b.SetBytes(int64(len(tokensBenchText)))
	for b.Loop() {
		Terms(tokensBenchText)
	}
}

// Meaningless allocates nothing for a word in bytes: the hash embedder
// asks it of every token.
func TestMeaninglessNoAlloc(t *testing.T) {
	words := [][]byte{[]byte("the"), []byte("watcher"), []byte("s")}
	want := []bool{true, false, true}
	for i, w := range words {
		if got := Meaningless(w); got != want[i] {
			t.Errorf("Meaningless(%q) = %v", w, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, w := range words {
			Meaningless(w)
		}
	}); n != 0 {
		t.Errorf("Meaningless allocates %v times", n)
	}
}
