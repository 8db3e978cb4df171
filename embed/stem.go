package embed

// The Porter stemming algorithm (M.F. Porter, "An algorithm for suffix
// stripping", 1980), following the author's reference ANSI C implementation,
// including its two departures from the paper (-bli -> -ble, -logi -> -log).
// https://tartarus.org/martin/PorterStemmer/

// Stem returns the Porter stem of a lowercase English word:
// authenticate, authentication -> authent; running, runs -> run;
// connections -> connect. Words of one or two letters, and words holding
// anything but the ASCII letters a-z (digits, capitals, other scripts), are
// returned unchanged.
func Stem(word string) string {
	if !stemmable([]byte(word)) {
		return word
	}
	return string(stemBytes([]byte(word)))
}

// stemmable reports whether w is a lowercase ASCII word of three letters or
// more.
func stemmable(w []byte) bool {
	if len(w) <= 2 {
		return false
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// stemBytes stems w in place if it is stemmable and returns the stem, a
// prefix-sharing slice of w (the stem is never longer than the word).
func stemBytes(w []byte) []byte {
	if !stemmable(w) {
		return w
	}
	p := porter{b: w, k: len(w) - 1}
	p.step1ab()
	if p.k > 0 {
		p.step1c()
		p.step2()
		p.step3()
		p.step4()
		p.step5()
	}
	return w[:p.k+1]
}

// porter is the stemmer state: the word is b[0..k]; j is a general offset
// set by ends.
type porter struct {
	b    []byte
	k, j int
}

// cons reports whether b[i] is a consonant.
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// m measures the number of consonant sequences in b[0..j]: with c a
// consonant sequence and v a vowel sequence, [c](vc)^m[v].
func (p *porter) m() int {
	n, i := 0, 0
	for {
		if i > p.j {
			return n
		}
		if !p.cons(i) {
			break
		}
		i++
	}
	i++
	for {
		for {
			if i > p.j {
				return n
			}
			if p.cons(i) {
				break
			}
			i++
		}
		i++
		n++
		for {
			if i > p.j {
				return n
			}
			if !p.cons(i) {
				break
			}
			i++
		}
		i++
	}
}

// vowelInStem reports whether b[0..j] contains a vowel.
func (p *porter) vowelInStem() bool {
	for i := 0; i <= p.j; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

// doublec reports whether b[i-1..i] is a double consonant.
func (p *porter) doublec(i int) bool {
	return i >= 1 && p.b[i] == p.b[i-1] && p.cons(i)
}

// cvc reports whether b[i-2..i] is consonant-vowel-consonant and the last
// consonant is not w, x or y (hop, not snow, box, tray).
func (p *porter) cvc(i int) bool {
	if i < 2 || !p.cons(i) || p.cons(i-1) || !p.cons(i-2) {
		return false
	}
	switch p.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b[0..k] ends with s, setting j to the offset before
// the suffix.
func (p *porter) ends(s string) bool {
	n := len(s)
	if n > p.k+1 || s[n-1] != p.b[p.k] || string(p.b[p.k-n+1:p.k+1]) != s {
		return false
	}
	p.j = p.k - n
	return true
}

// setto replaces b[j+1..k] with s.
func (p *porter) setto(s string) {
	copy(p.b[p.j+1:], s)
	p.k = p.j + len(s)
}

// r replaces the suffix with s if m() > 0.
func (p *porter) r(s string) {
	if p.m() > 0 {
		p.setto(s)
	}
}

// step1ab removes plurals and -ed or -ing.
func (p *porter) step1ab() {
	if p.b[p.k] == 's' {
		switch {
		case p.ends("sses"):
			p.k -= 2
		case p.ends("ies"):
			p.setto("i")
		case p.b[p.k-1] != 's':
			p.k--
		}
	}
	if p.ends("eed") {
		if p.m() > 0 {
			p.k--
		}
	} else if (p.ends("ed") || p.ends("ing")) && p.vowelInStem() {
		p.k = p.j
		switch {
		case p.ends("at"):
			p.setto("ate")
		case p.ends("bl"):
			p.setto("ble")
		case p.ends("iz"):
			p.setto("ize")
		case p.doublec(p.k):
			switch p.b[p.k] {
			case 'l', 's', 'z':
			default:
				p.k--
			}
		default:
			p.j = p.k
			if p.m() == 1 && p.cvc(p.k) {
				p.setto("e")
			}
		}
	}
}

// step1c turns a terminal y into i when there is another vowel in the stem.
func (p *porter) step1c() {
	if p.ends("y") && p.vowelInStem() {
		p.b[p.k] = 'i'
	}
}

// step2 maps double suffixes to single ones (-ization -> -ize, ...).
func (p *porter) step2() {
	switch p.b[p.k-1] {
	case 'a':
		if p.ends("ational") {
			p.r("ate")
		} else if p.ends("tional") {
			p.r("tion")
		}
	case 'c':
		if p.ends("enci") {
			p.r("ence")
		} else if p.ends("anci") {
			p.r("ance")
		}
	case 'e':
		if p.ends("izer") {
			p.r("ize")
		}
	case 'l':
		switch {
		case p.ends("bli"):
			p.r("ble")
		case p.ends("alli"):
			p.r("al")
		case p.ends("entli"):
			p.r("ent")
		case p.ends("eli"):
			p.r("e")
		case p.ends("ousli"):
			p.r("ous")
		}
	case 'o':
		switch {
		case p.ends("ization"):
			p.r("ize")
		case p.ends("ation"):
			p.r("ate")
		case p.ends("ator"):
			p.r("ate")
		}
	case 's':
		switch {
		case p.ends("alism"):
			p.r("al")
		case p.ends("iveness"):
			p.r("ive")
		case p.ends("fulness"):
			p.r("ful")
		case p.ends("ousness"):
			p.r("ous")
		}
	case 't':
		switch {
		case p.ends("aliti"):
			p.r("al")
		case p.ends("iviti"):
			p.r("ive")
		case p.ends("biliti"):
			p.r("ble")
		}
	case 'g':
		if p.ends("logi") {
			p.r("log")
		}
	}
}

// step3 handles -ic-, -full, -ness etc.
func (p *porter) step3() {
	switch p.b[p.k] {
	case 'e':
		switch {
		case p.ends("icate"):
			p.r("ic")
		case p.ends("ative"):
			p.r("")
		case p.ends("alize"):
			p.r("al")
		}
	case 'i':
		if p.ends("iciti") {
			p.r("ic")
		}
	case 'l':
		if p.ends("ical") {
			p.r("ic")
		} else if p.ends("ful") {
			p.r("")
		}
	case 's':
		if p.ends("ness") {
			p.r("")
		}
	}
}

// step4 removes -ant, -ence etc. in context <c>vcvc<v>.
func (p *porter) step4() {
	var ok bool
	switch p.b[p.k-1] {
	case 'a':
		ok = p.ends("al")
	case 'c':
		ok = p.ends("ance") || p.ends("ence")
	case 'e':
		ok = p.ends("er")
	case 'i':
		ok = p.ends("ic")
	case 'l':
		ok = p.ends("able") || p.ends("ible")
	case 'n':
		ok = p.ends("ant") || p.ends("ement") || p.ends("ment") || p.ends("ent")
	case 'o':
		ok = p.ends("ion") && p.j >= 0 && (p.b[p.j] == 's' || p.b[p.j] == 't') || p.ends("ou")
	case 's':
		ok = p.ends("ism")
	case 't':
		ok = p.ends("ate") || p.ends("iti")
	case 'u':
		ok = p.ends("ous")
	case 'v':
		ok = p.ends("ive")
	case 'z':
		ok = p.ends("ize")
	}
	if ok && p.m() > 1 {
		p.k = p.j
	}
}

// step5 removes a final -e if m() > 1 (or m() == 1 and not *o), and turns
// -ll into -l if m() > 1.
func (p *porter) step5() {
	p.j = p.k
	if p.b[p.k] == 'e' {
		a := p.m()
		if a > 1 || a == 1 && !p.cvc(p.k-1) {
			p.k--
		}
	}
	if p.b[p.k] == 'l' && p.doublec(p.k) && p.m() > 1 {
		p.k--
	}
}
