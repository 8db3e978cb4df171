package ui

import (
	"embed"
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/praxis-os/continuity/analyze"
	"github.com/praxis-os/continuity/engine"
)

//go:embed templates/*.html static/*
var assets embed.FS

// pages are the parsed templates: one set per page, each with the layout.
type pages map[string]*template.Template

var pageNames = []string{"sessions", "session", "exchange", "search", "resume", "health", "doctor", "forget", "forgot", "error"}

func parsePages() (pages, error) {
	p := pages{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("ui: template %s: %w", name, err)
		}
		p[name] = t
	}
	return p, nil
}

var funcs = template.FuncMap{
	"text":     func(s string) template.HTML { return richText(s, nil) },
	"marked":   richText,
	"when":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") },
	"clock":    func(t time.Time) string { return t.UTC().Format("15:04:05") },
	"span":     timeSpan,
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"score":    func(f float64) string { return fmt.Sprintf("%.3f", f) },
	"bytes":    engine.HumanBytes,
	"duration": humanDuration,
	"reason":   func(r string) string { return strings.ReplaceAll(r, "_", " ") },
	"add":      func(a, b int) int { return a + b },
	"link":     urlFor,
	"list":     func(xs ...string) []string { return xs },
	// unknownAgent explains "unknown" in an Agent column: no event of
	// the session names its agent (metadata "source" or "agent"), as
	// with lines written by `echo >>` or `continuity log`.
	"unknownAgent": func() string {
		return `no event of this session names its agent (metadata "source" or "agent"): lines written to the logs directly, with echo >> or continuity log`
	},
	"plural": func(n any, one, many string) string {
		if s := fmt.Sprint(n); s != "1" {
			return s + " " + many
		}
		return "1 " + one
	},
}

// clipRunes is how much of a text the timeline and the results show
// before a link to the exchange whole.
const clipRunes = 1200

// clip is text cut to n runes (at a line end when one is near), and
// whether it was cut.
func clip(text string, n int) (string, bool) {
	if utf8.RuneCountInString(text) <= n {
		return text, false
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	if nl := strings.LastIndexByte(text[:i], '\n'); nl > i*3/4 {
		i = nl
	}
	return text[:i], true
}

// richText renders a stored text as HTML: fenced code blocks as <pre>
// (the fence's language named), `inline code` as <code>, the rest with its
// line breaks; the words whose stems are in hl marked. Every piece of the
// text goes through html.EscapeString: the only markup is this function's
// own.
func richText(text string, hl map[string]bool) template.HTML {
	var b strings.Builder
	for _, blk := range splitFences(text) {
		if blk.code {
			b.WriteString(`<pre class="code">`)
			if blk.lang != "" {
				b.WriteString(`<span class="lang">` + html.EscapeString(blk.lang) + `</span>`)
			}
			b.WriteString("<code>")
			mark(&b, blk.body, hl)
			b.WriteString("</code></pre>")
			continue
		}
		if strings.TrimSpace(blk.body) == "" {
			continue
		}
		b.WriteString(`<div class="prose">`)
		inline(&b, strings.Trim(blk.body, "\n"), hl)
		b.WriteString("</div>")
	}
	return template.HTML(b.String())
}

// block is a piece of a text: prose, or a fenced code block.
type block struct {
	code bool
	lang string
	body string
}

// splitFences cuts text at its code fences (``` or ~~~, three or more, at
// a line's start after up to three spaces). A block left open runs to the
// end.
func splitFences(text string) []block {
	var out []block
	var cur strings.Builder
	var fence string
	lang := ""
	flush := func(code bool) {
		if cur.Len() > 0 || code {
			out = append(out, block{code: code, lang: lang, body: cur.String()})
		}
		cur.Reset()
		lang = ""
	}
	for line := range strings.Lines(text) {
		trimmed := strings.TrimLeft(line, " ")
		body := strings.TrimRight(trimmed, "\r\n")
		switch {
		case fence == "" && len(line)-len(trimmed) <= 3 && opensFence(body):
			flush(false)
			n := len(body) - len(strings.TrimLeft(body, body[:1]))
			fence = body[:n]
			lang = strings.TrimSpace(body[n:])
		case fence != "" && strings.HasPrefix(body, fence) && strings.TrimSpace(strings.TrimLeft(body, fence[:1])) == "":
			body := strings.TrimSuffix(cur.String(), "\n")
			cur.Reset()
			cur.WriteString(body)
			flush(true)
			fence = ""
		default:
			cur.WriteString(line)
		}
	}
	flush(fence != "")
	return out
}

func opensFence(line string) bool {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(line, f) {
			return f[0] != '`' || !strings.Contains(strings.TrimLeft(line, "`"), "`")
		}
	}
	return false
}

// inline writes prose: code spans (a run of backticks, closed by a run of
// the same length) as <code>, line breaks kept (by CSS); a run that no
// run of its length closes is text.
func inline(b *strings.Builder, text string, hl map[string]bool) {
	done := 0 // text[:done] is written
	for i := 0; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		n := backticks(text[i:])
		end := -1
		for j := i + n; j < len(text); {
			if text[j] != '`' {
				j++
				continue
			}
			m := backticks(text[j:])
			if m == n {
				end = j
				break
			}
			j += m
		}
		if end < 0 {
			i += n
			continue
		}
		mark(b, text[done:i], hl)
		code := text[i+n : end]
		if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' {
			code = code[1 : len(code)-1]
		}
		b.WriteString("<code>")
		mark(b, code, hl)
		b.WriteString("</code>")
		i = end + n
		done = i
	}
	mark(b, text[done:], hl)
}

// backticks is the length of the run of backticks text opens with.
func backticks(text string) int {
	return len(text) - len(strings.TrimLeft(text, "`"))
}

// mark writes text escaped, each word whose stem is in hl inside <mark>.
func mark(b *strings.Builder, text string, hl map[string]bool) {
	if len(hl) == 0 {
		b.WriteString(html.EscapeString(text))
		return
	}
	start := -1
	word := func(end int) {
		w := text[start:end]
		if hl[analyze.Stem(strings.ToLower(w))] {
			b.WriteString("<mark>" + html.EscapeString(w) + "</mark>")
		} else {
			b.WriteString(html.EscapeString(w))
		}
		start = -1
	}
	last := 0
	for i, r := range text {
		if analyze.IsWordRune(r) {
			if start < 0 {
				b.WriteString(html.EscapeString(text[last:i]))
				start = i
			}
			continue
		}
		if start >= 0 {
			word(i)
			last = i
		}
	}
	if start >= 0 {
		word(len(text))
	} else {
		b.WriteString(html.EscapeString(text[last:]))
	}
}

// highlights are the stems of a query's meaningful words.
func highlights(query string) map[string]bool {
	hl := map[string]bool{}
	for _, w := range analyze.Words(query) {
		if !analyze.Meaningless(w) {
			hl[analyze.Stem(w)] = true
		}
	}
	return hl
}

// timeSpan is first to last in UTC, shorter within one day: 2026-11-21
// 12:00–12:10, a single time when they are the same minute.
func timeSpan(first, last time.Time) string {
	f, l := first.UTC(), last.UTC()
	from := f.Format("2006-01-02 15:04")
	switch {
	case l.Format("2006-01-02 15:04") == from:
		return from
	case l.Format("2006-01-02") == f.Format("2006-01-02"):
		return from + "–" + l.Format("15:04")
	}
	return from + " → " + l.Format("2006-01-02 15:04")
}

func humanDuration(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second)).Round(time.Second)
	if d < time.Minute {
		return d.String()
	}
	return d.Round(time.Minute).String()
}
