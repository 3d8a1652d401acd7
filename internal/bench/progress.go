package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress shows which phase runs and how far it is. On a terminal it
// redraws one bar line; elsewhere it writes a line as each phase ends.
// The zero value and a nil *Progress are silent.
type Progress struct {
	w   io.Writer
	tty bool

	mu       sync.Mutex
	phase    string
	total    int
	done     int
	began    time.Time
	lastDraw time.Time
}

// NewProgress writes to w; tty says whether w is a terminal.
func NewProgress(w io.Writer, tty bool) *Progress { return &Progress{w: w, tty: tty} }

// Start begins a phase of total steps (0 when unknown), ending the
// previous one.
func (p *Progress) Start(phase string, total int) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
	p.phase, p.total, p.done, p.began = phase, total, 0, time.Now()
	p.drawLocked(true)
}

// Set records that done steps of the phase are done.
func (p *Progress) Set(done int) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = done
	p.drawLocked(false)
}

// Add records one more step done.
func (p *Progress) Add() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.drawLocked(false)
}

// Finish ends the current phase.
func (p *Progress) Finish() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
}

func (p *Progress) endLocked() {
	if p.phase == "" {
		return
	}
	if p.tty {
		p.drawLocked(true)
		fmt.Fprintln(p.w)
	} else {
		fmt.Fprintf(p.w, "bench: %-28s %s %6.1fs\n", p.phase, p.counts(), time.Since(p.began).Seconds())
	}
	p.phase = ""
}

func (p *Progress) counts() string {
	switch {
	case p.total > 0:
		return fmt.Sprintf("%d/%d", p.done, p.total)
	case p.done > 0:
		return fmt.Sprint(p.done)
	}
	return "-"
}

// drawLocked redraws the bar, at most ten times a second unless forced.
func (p *Progress) drawLocked(force bool) {
	if !p.tty {
		return
	}
	now := time.Now()
	if !force && now.Sub(p.lastDraw) < 100*time.Millisecond {
		return
	}
	p.lastDraw = now
	const width = 30
	fill := 0
	if p.total > 0 {
		fill = min(width, p.done*width/p.total)
	}
	bar := strings.Repeat("#", fill) + strings.Repeat(".", width-fill)
	fmt.Fprintf(p.w, "\r\033[K%-28s [%s] %s %6.1fs", p.phase, bar, p.counts(), now.Sub(p.began).Seconds())
}
