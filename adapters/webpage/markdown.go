package webpage

import "strings"

// markdown reads Markdown line by line: "#" and underlined headings build
// the heading path, fenced and indented listings are Code, list lines
// Item (their continuation lines joined), "|" tables Row (named by a head
// row over a "---|---" line), other paragraphs and block quotes Prose.
// Links and images keep their text, code spans and "**" lose their marks.
// YAML front matter is left out.
func markdown(s string) outline {
	m := mdReader{lines: strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")}
	m.skipFrontMatter()
	for m.i < len(m.lines) {
		m.line()
	}
	m.flush()
	return m.out
}

type mdReader struct {
	out    outline
	lines  []string
	i      int
	para   []string // the paragraph or list item being read
	kind   BlockKind
	inList bool     // an indented line continues the list, it is not code
	names  []string // the column names of the table being read
	inRow  bool     // the previous line was a table row
}

func (m *mdReader) flush() {
	if len(m.para) > 0 {
		m.out.add(m.kind, proseText(mdInline(strings.Join(m.para, " "))))
		m.para = m.para[:0]
	}
}

func (m *mdReader) skipFrontMatter() {
	if len(m.lines) < 3 || strings.TrimSpace(m.lines[0]) != "---" || !strings.Contains(m.lines[1], ":") {
		return
	}
	for j := 1; j < len(m.lines) && j < 200; j++ {
		if t := strings.TrimSpace(m.lines[j]); t == "---" || t == "..." {
			m.i = j + 1
			return
		}
	}
}

// line reads one line, or a whole listing.
func (m *mdReader) line() {
	raw := m.lines[m.i]
	m.i++
	t := strings.TrimSpace(raw)
	indent := indentOf(raw)
	if !(m.inRow && strings.Contains(t, "|")) {
		m.inRow, m.names = false, nil
	}
	switch {
	case t == "":
		m.flush()
		return
	case fenceOf(t) != "":
		m.flush()
		m.fenced(fenceOf(t), indent)
		return
	case indent >= 4 && len(m.para) == 0 && !m.inList:
		m.indented(raw)
		return
	case strings.Contains(t, "|") && (m.inRow || strings.HasPrefix(t, "|") || m.delimiterNext()):
		m.flush()
		m.row(t)
		return
	}
	if level, title := atxHeading(t); level > 0 {
		m.flush()
		m.inList = false
		m.out.heading(level, proseText(mdInline(title)), "")
		return
	}
	if len(m.para) > 0 && m.kind == Prose && (strings.Trim(t, "=") == "" || strings.Trim(t, "-") == "") {
		title := proseText(mdInline(strings.Join(m.para, " ")))
		m.para = m.para[:0]
		level := 1
		if t[0] == '-' {
			level = 2
		}
		m.out.heading(level, title, "")
		return
	}
	if rule(t) {
		m.flush()
		return
	}
	if rest, ok := listItem(t); ok {
		m.flush()
		m.para, m.kind, m.inList = append(m.para, rest), Item, true
		return
	}
	if strings.HasPrefix(t, ">") {
		t = strings.TrimSpace(strings.TrimLeft(t, "> "))
		if t == "" {
			m.flush()
			return
		}
	}
	if len(m.para) == 0 {
		m.kind = Prose
		m.inList = m.inList && indent > 0
	}
	m.para = append(m.para, t)
}

// fenced reads a fenced listing up to its closing fence (or the end).
func (m *mdReader) fenced(fence string, indent int) {
	var code []string
	for m.i < len(m.lines) {
		l := m.lines[m.i]
		m.i++
		if t := strings.TrimSpace(l); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
			break
		}
		code = append(code, trimIndent(l, indent))
	}
	m.out.add(Code, codeText(strings.Join(code, "\n")))
}

// indented reads a listing indented by four spaces, blank lines included.
func (m *mdReader) indented(first string) {
	code := []string{trimIndent(first, 4)}
	for m.i < len(m.lines) {
		l := m.lines[m.i]
		if strings.TrimSpace(l) != "" && indentOf(l) < 4 {
			break
		}
		code = append(code, trimIndent(l, 4))
		m.i++
	}
	m.out.add(Code, codeText(strings.Join(code, "\n")))
}

// row reads a table row; a row over a delimiter line ("---|:--:") names
// the columns.
func (m *mdReader) row(t string) {
	cells := tableCells(t)
	if !m.inRow && m.delimiterNext() {
		m.names = make([]string, len(cells))
		for i, c := range cells {
			m.names[i] = proseText(mdInline(c))
		}
		m.i++
		m.inRow = true
		return
	}
	m.inRow = true
	row := make([]cell, len(cells))
	for i, c := range cells {
		row[i] = cell{text: proseText(mdInline(c)), first: true}
	}
	m.out.add(Row, rowText(m.names, row))
}

// delimiterNext reports whether the next line is a table's delimiter row.
func (m *mdReader) delimiterNext() bool {
	if m.i >= len(m.lines) {
		return false
	}
	t := strings.TrimSpace(m.lines[m.i])
	return strings.Contains(t, "-") && strings.Contains(t, "|") && strings.Trim(t, "|-: \t") == ""
}

// tableCells splits a row at its pipes ("\|" is a pipe in a cell).
func tableCells(t string) []string {
	t = strings.TrimSpace(t)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			b.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// fenceOf is the fence that opens a listing ("```", "~~~~"), or "".
func fenceOf(t string) string {
	for _, c := range []string{"`", "~"} {
		n := len(t) - len(strings.TrimLeft(t, c))
		if n >= 3 && (c == "~" || !strings.Contains(t[n:], "`")) {
			return t[:n]
		}
	}
	return ""
}

// atxHeading is the level and text of a "## Heading ##" line, or 0.
func atxHeading(t string) (int, string) {
	n := len(t) - len(strings.TrimLeft(t, "#"))
	if n == 0 || n > 6 || (len(t) > n && t[n] != ' ' && t[n] != '\t') {
		return 0, ""
	}
	title := strings.TrimSpace(t[n:])
	if trimmed := strings.TrimRight(title, "#"); trimmed == "" || strings.HasSuffix(trimmed, " ") {
		title = strings.TrimSpace(trimmed)
	}
	return n, title
}

// rule reports whether t is a thematic break ("---", "* * *", "___").
func rule(t string) bool {
	for _, c := range []string{"-", "*", "_"} {
		if strings.Count(t, c) >= 3 && strings.Trim(t, c+" \t") == "" {
			return true
		}
	}
	return false
}

// listItem is the text of a list line ("- x", "* x", "+ x", "1. x", "2) x",
// a task's "[ ]" dropped).
func listItem(t string) (string, bool) {
	rest := ""
	switch {
	case len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t'):
		rest = t[2:]
	default:
		d := len(t) - len(strings.TrimLeft(t, "0123456789"))
		if d == 0 || d > 9 || len(t) < d+2 || (t[d] != '.' && t[d] != ')') || (t[d+1] != ' ' && t[d+1] != '\t') {
			return "", false
		}
		rest = t[d+2:]
	}
	rest = strings.TrimSpace(rest)
	for _, box := range []string{"[ ] ", "[x] ", "[X] "} {
		rest = strings.TrimPrefix(rest, box)
	}
	return rest, true
}

// indentOf counts a line's leading columns, a tab as four.
func indentOf(l string) int {
	n := 0
	for _, c := range l {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4 - n%4
		default:
			return n
		}
	}
	return n
}

// trimIndent drops up to n columns of a line's indentation.
func trimIndent(l string, n int) string {
	i, col := 0, 0
	for i < len(l) && col < n && (l[i] == ' ' || l[i] == '\t') {
		if l[i] == '\t' {
			col += 4 - col%4
		} else {
			col++
		}
		i++
	}
	return l[i:]
}

// mdInline drops inline Markdown marks: a link or image keeps its text,
// a code span its code, "**" goes. It runs in time linear in s: brackets
// are matched up front, a link's destination is looked for in the next
// maxURL bytes only, and a run of more than maxTicks backticks is text.
func mdInline(s string) string {
	if !strings.ContainsAny(s, "[`*") {
		return s
	}
	closing := matchBrackets(s)
	skip := map[int]int{}           // the "](url)" of a link whose text is being read: from its "]" to past its ")"
	noTicks := [maxTicks + 1]bool{} // no later run of this many backticks closes a span
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if end, ok := skip[i]; ok {
			i = end - 1
			continue
		}
		switch {
		case s[i] == '`':
			n := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
			tick := s[i : i+n]
			if n <= maxTicks && !noTicks[n] {
				if end := strings.Index(s[i+n:], tick); end >= 0 {
					b.WriteString(strings.TrimSpace(s[i+n : i+n+end]))
					i += n + end + n - 1
					continue
				}
				noTicks[n] = true
			}
			b.WriteString(tick)
			i += n - 1
		case s[i] == '*' && i+1 < len(s) && s[i+1] == '*':
			i++
		case s[i] == '[' || (s[i] == '!' && i+1 < len(s) && s[i+1] == '['):
			open := i
			if s[i] == '!' {
				open++
			}
			if end, ok := linkEnd(s, closing[open]); ok {
				skip[closing[open]] = end
				i = open
				continue
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

const (
	maxURL   = 2048
	maxTicks = 16
)

// matchBrackets maps the index of every "[" of s that is closed to the
// index of its "]".
func matchBrackets(s string) map[int]int {
	closing := map[int]int{}
	var open []int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			open = append(open, i)
		case ']':
			if len(open) > 0 {
				closing[open[len(open)-1]] = i
				open = open[:len(open)-1]
			}
		}
	}
	return closing
}

// linkEnd is the index just past "[text](url)" or "[text][ref]" whose "]"
// is at close (0: no closing bracket).
func linkEnd(s string, close int) (int, bool) {
	if close == 0 || close+1 >= len(s) {
		return 0, false
	}
	closer := byte(')')
	switch s[close+1] {
	case '(':
	case '[':
		closer = ']'
	default:
		return 0, false
	}
	rest := s[close+2:]
	if len(rest) > maxURL {
		rest = rest[:maxURL]
	}
	end := strings.IndexByte(rest, closer)
	if end < 0 {
		return 0, false
	}
	return close + 2 + end + 1, true
}
