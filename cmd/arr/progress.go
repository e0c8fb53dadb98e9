package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows long work: a bar with rate and ETA on a terminal, a plain
// line every few seconds otherwise (logs, CI).
type progress struct {
	label string
	w     io.Writer
	bar   *progressbar.ProgressBar
	start time.Time
	last  time.Time
	done  uint64
	total uint64
	unit  string
}

func newProgress(f *os.File, label string) *progress { return newProgressOf(f, label, "events") }

// newProgressOf counts unit (rows, events) instead of events.
func newProgressOf(f *os.File, label, unit string) *progress {
	p := &progress{label: label, w: f, start: time.Now(), unit: unit}
	if term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(f), progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(unit),
			progressbar.OptionSetPredictTime(true), progressbar.OptionFullWidth(), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	return p
}

// Set reports done of total events.
func (p *progress) Set(done, total uint64) {
	p.done, p.total = done, total
	if p.bar != nil {
		if int64(total) != p.bar.GetMax64() {
			p.bar.ChangeMax64(int64(total))
		}
		_ = p.bar.Set64(int64(done))
		return
	}
	if time.Since(p.last) >= 2*time.Second {
		p.last = time.Now()
		fmt.Fprintln(p.w, p.line())
	}
}

func (p *progress) line() string {
	el := time.Since(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.done) / el
	}
	pct, eta := 100.0, "0s"
	if p.total > 0 {
		pct = 100 * float64(p.done) / float64(p.total)
		if rate > 0 && p.total > p.done {
			eta = (time.Duration(float64(p.total-p.done)/rate) * time.Second).Round(time.Second).String()
		}
	}
	return fmt.Sprintf("%s: %d/%d %s (%.1f%%), %.0f %s/s, ETA %s", p.label, p.done, p.total, p.unit, pct, rate, p.unit, eta)
}

// clear takes the bar off the terminal until the next Set, so that a line
// can be printed in its place.
func (p *progress) clear() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}

// Finish prints the final line.
func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
	fmt.Fprintf(p.w, "%s: done, %d %s in %s (%.0f %s/s)\n", p.label, p.done, p.unit, time.Since(p.start).Round(time.Millisecond),
		float64(p.done)/max(time.Since(p.start).Seconds(), 1e-9), p.unit)
}
