package webpage

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain/text"
)

// outline gathers blocks into sections under a heading path. HTML and
// Markdown extraction both build one.
type outline struct {
	sections []Section
	open     []openHeading // the heading path, outermost first
}

type openHeading struct {
	level int
	text  string
}

// heading starts a section under a heading of level (1 for h1): headings
// of the same or a deeper level close first. An empty title ("#" alone)
// starts nothing.
func (o *outline) heading(level int, title, anchor string) {
	if title == "" {
		return
	}
	for len(o.open) > 0 && o.open[len(o.open)-1].level >= level {
		o.open = o.open[:len(o.open)-1]
	}
	o.open = append(o.open, openHeading{level: level, text: title})
	path := make([]string, len(o.open))
	for i, h := range o.open {
		path[i] = h.text
	}
	o.sections = append(o.sections, Section{Heading: path, Anchor: anchor})
}

// add appends a block to the current section (a section with no heading
// when none has begun). Empty text adds nothing.
func (o *outline) add(kind BlockKind, s string) {
	if s == "" {
		return
	}
	if len(o.sections) == 0 {
		o.sections = append(o.sections, Section{})
	}
	sec := &o.sections[len(o.sections)-1]
	sec.Blocks = append(sec.Blocks, Block{Kind: kind, Text: s})
}

// empty reports whether nothing was gathered.
func (o *outline) empty() bool {
	for _, s := range o.sections {
		if len(s.Heading) > 0 || len(s.Blocks) > 0 {
			return false
		}
	}
	return true
}

// proseText is s cleaned (text.Clean: no control characters, valid
// UTF-8) with every run of white space, no-break spaces included, made
// one space and both ends trimmed.
func proseText(s string) string {
	s = text.Clean(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '\v' {
				space = b.Len() > 0
				continue
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteByte(c)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			space = b.Len() > 0
		} else {
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// codeText is a listing cleaned (text.Clean) with its line structure and
// indentation kept: blank lines at either end and trailing white space of
// every line dropped.
func codeText(s string) string {
	s = text.Clean(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}
