package hf

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress reports a download: on a terminal one line per file redrawn
// in place (a bar, bytes, rate), elsewhere a line when a file starts and
// one when it is verified. A nil *progress reports nothing.
type progress struct {
	w        io.Writer
	terminal bool

	mu      sync.Mutex
	name    string
	total   int64
	done    int64
	start   time.Time
	startAt int64 // bytes already there when the file started (a resume)
	last    time.Time
}

func newProgress(w io.Writer, terminal bool) *progress {
	if w == nil {
		return nil
	}
	return &progress{w: w, terminal: terminal}
}

// printf writes a line of its own.
func (p *progress) printf(format string, a ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", a...)
}

// begin starts a file of total bytes, have of them already there.
func (p *progress) begin(name string, total, have int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.total, p.done, p.startAt = name, total, have, have
	p.start, p.last = time.Now(), time.Time{}
	switch {
	case have > 0:
		fmt.Fprintf(p.w, "%s: resuming at %s of %s\n", name, mb(have), mb(total))
	case !p.terminal:
		fmt.Fprintf(p.w, "%s: downloading %s\n", name, mb(total))
	}
	p.draw(false)
}

// add counts n more bytes of the current file.
func (p *progress) add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.draw(false)
}

// restart says the current file starts again from byte have.
func (p *progress) restart(have int64, why string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s: %s; retrying from %s\n", p.name, why, mb(have))
	p.done, p.startAt, p.start = have, have, time.Now()
}

// end finishes the current file's line with a note.
func (p *progress) end(note string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(true)
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "%s: %s, %s\n", p.name, mb(p.total), note)
}

// draw redraws the bar on a terminal, at most ten times a second.
func (p *progress) draw(force bool) {
	if !p.terminal {
		return
	}
	now := time.Now()
	if !force && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	frac := 1.0
	if p.total > 0 {
		frac = min(1, float64(p.done)/float64(p.total))
	}
	filled := int(frac * width)
	rate := ""
	if el := now.Sub(p.start).Seconds(); el > 0.5 {
		rate = fmt.Sprintf("  %s/s", mb(int64(float64(p.done-p.startAt)/el)))
	}
	fmt.Fprintf(p.w, "\r\033[K%s [%s%s] %s / %s %3.0f%%%s", p.name, strings.Repeat("=", filled), strings.Repeat(" ", width-filled), mb(p.done), mb(p.total), frac*100, rate)
}

// mb formats a byte count.
func mb(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
