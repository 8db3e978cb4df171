package embed

import "testing"

func TestStem(t *testing.T) {
	// Word, stem: the examples of Porter's paper through the whole
	// algorithm, as the reference implementation stems them, plus ours.
	tests := [][2]string{
		// step 1a
		{"caresses", "caress"}, {"ponies", "poni"}, {"ties", "ti"}, {"caress", "caress"}, {"cats", "cat"},
		// step 1b
		{"feed", "feed"}, {"agreed", "agre"}, {"plastered", "plaster"}, {"bled", "bled"},
		{"motoring", "motor"}, {"sing", "sing"}, {"conflated", "conflat"}, {"troubled", "troubl"},
		{"sized", "size"}, {"hopping", "hop"}, {"tanned", "tan"}, {"falling", "fall"},
		{"hissing", "hiss"}, {"fizzed", "fizz"}, {"failing", "fail"}, {"filing", "file"},
		// step 1c
		{"happy", "happi"}, {"sky", "sky"},
		// step 2
		{"relational", "relat"}, {"conditional", "condit"}, {"rational", "ration"},
		{"valenci", "valenc"}, {"hesitanci", "hesit"}, {"digitizer", "digit"},
		{"conformabli", "conform"}, {"radicalli", "radic"}, {"differentli", "differ"},
		{"vileli", "vile"}, {"analogousli", "analog"}, {"vietnamization", "vietnam"},
		{"predication", "predic"}, {"operator", "oper"}, {"feudalism", "feudal"},
		{"decisiveness", "decis"}, {"hopefulness", "hope"}, {"callousness", "callous"},
		{"formaliti", "formal"}, {"sensitiviti", "sensit"}, {"sensibiliti", "sensibl"},
		// step 3
		{"triplicate", "triplic"}, {"formative", "form"}, {"formalize", "formal"},
		{"electriciti", "electr"}, {"electrical", "electr"}, {"hopeful", "hope"}, {"goodness", "good"},
		// step 4
		{"revival", "reviv"}, {"allowance", "allow"}, {"inference", "infer"}, {"airliner", "airlin"},
		{"gyroscopic", "gyroscop"}, {"adjustable", "adjust"}, {"defensible", "defens"},
		{"irritant", "irrit"}, {"replacement", "replac"}, {"adjustment", "adjust"},
		{"dependent", "depend"}, {"adoption", "adopt"}, {"homologou", "homolog"},
		{"communism", "commun"}, {"activate", "activ"}, {"angulariti", "angular"},
		{"homologous", "homolog"}, {"effective", "effect"}, {"bowdlerize", "bowdler"},
		// step 5
		{"probate", "probat"}, {"rate", "rate"}, {"cease", "ceas"}, {"controll", "control"}, {"roll", "roll"},
		// whole words
		{"generalizations", "gener"}, {"oscillators", "oscil"},
		{"connection", "connect"}, {"connections", "connect"}, {"connective", "connect"},
		{"connected", "connect"}, {"connecting", "connect"},
		{"authenticate", "authent"}, {"authentication", "authent"}, {"authenticated", "authent"},
		{"running", "run"}, {"runs", "run"}, {"indexing", "index"}, {"indexes", "index"},
		{"watcher", "watcher"}, {"ion", "ion"},
		// left alone
		{"", ""}, {"a", "a"}, {"is", "is"}, {"sha256", "sha256"}, {"Running", "Running"}, {"cafés", "cafés"},
	}
	for _, tt := range tests {
		if got := Stem(tt[0]); got != tt[1] {
			t.Errorf("Stem(%q) = %q, want %q", tt[0], got, tt[1])
		}
	}
}

// TestStemAllShortWords runs every lowercase word of up to four letters
// (and some longer ones) through the stemmer: no panic, never longer.
func TestStemAllShortWords(t *testing.T) {
	w := make([]byte, 0, 8)
	var rec func(n int)
	rec = func(n int) {
		if len(w) >= 3 {
			in := string(w)
			if st := Stem(in); len(st) > len(in) || len(st) == 0 {
				t.Fatalf("Stem(%q) = %q", in, st)
			}
		}
		if len(w) == n {
			return
		}
		for c := byte('a'); c <= 'z'; c++ {
			w = append(w, c)
			rec(n)
			w = w[:len(w)-1]
		}
	}
	rec(4)
	for _, s := range []string{"eeeeeeee", "yyyyyyyy", "ssssssss", "sses", "ies", "eed", "ings", "ational", "ization"} {
		Stem(s)
	}
}

func FuzzStem(f *testing.F) {
	for _, s := range []string{"generalizations", "ies", "yyy", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st := Stem(s)
		if len(st) > len(s) {
			t.Fatalf("Stem(%q) = %q is longer", s, st)
		}
		if Stem(s) != st {
			t.Fatalf("Stem(%q) not deterministic", s)
		}
	})
}

func BenchmarkStem(b *testing.B) {
	words := []string{"authentication", "running", "generalizations", "watcher", "connections", "the"}
	var buf []byte
	for b.Loop() {
		for _, w := range words {
			buf = stemBytes(append(buf[:0], w...))
		}
	}
}
