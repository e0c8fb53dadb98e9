package sqlproj

import (
	"fmt"
	"strings"
)

// scanner walks SQL text the way PostgreSQL's lexer does for what matters
// here: it knows where strings ('…', E'…', $tag$…$tag$), quoted
// identifiers and comments begin and end, so a ; or a :name inside them is
// not taken for a statement's end or a bound name.
type scanner struct {
	src string
	i   int
}

// item is what next found at [start, end).
type item struct {
	kind       itemKind
	start, end int
	// word is the text of a word, a bound name (without the colon) or a
	// line comment (without the dashes), as written.
	word string
	// depth is the parenthesis depth where the item starts.
	depth int
}

type itemKind uint8

const (
	itemEOF itemKind = iota
	itemSpace
	itemLineComment
	itemBlockComment
	itemString // '…', E'…', $tag$…$tag$, "…"
	itemWord   // a keyword or an unquoted identifier
	itemBound  // :name
	itemSemicolon
	itemOther // any other character (operators, digits, parentheses, ::)
)

// unterminatedError is a string, identifier or comment that does not end.
type unterminatedError struct {
	what string
	at   int
}

func (e *unterminatedError) Error() string { return e.what + " does not end" }

func identStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func identPart(c byte) bool { return identStart(c) || c >= '0' && c <= '9' || c == '$' }

func (s *scanner) peek(k int) byte {
	if s.i+k < len(s.src) {
		return s.src[s.i+k]
	}
	return 0
}

// next returns the next item; depth is the caller's parenthesis depth.
func (s *scanner) next(depth int) (item, error) {
	start := s.i
	it := item{start: start, depth: depth}
	if s.i >= len(s.src) {
		it.kind, it.end = itemEOF, s.i
		return it, nil
	}
	c := s.src[s.i]
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		for s.i < len(s.src) && strings.IndexByte(" \t\n\r\f\v", s.src[s.i]) >= 0 {
			s.i++
		}
		it.kind = itemSpace
	case c == '-' && s.peek(1) == '-':
		end := strings.IndexByte(s.src[s.i:], '\n')
		if end < 0 {
			end = len(s.src) - s.i
		}
		it.kind, it.word = itemLineComment, s.src[s.i+2:s.i+end]
		s.i += end
	case c == '/' && s.peek(1) == '*':
		if err := s.blockComment(start); err != nil {
			return it, err
		}
		it.kind = itemBlockComment
	case c == '\'':
		if err := s.quoted('\'', false, "a string"); err != nil {
			return it, err
		}
		it.kind = itemString
	case c == '"':
		if err := s.quoted('"', false, "a quoted identifier"); err != nil {
			return it, err
		}
		it.kind = itemString
	case c == '$' && (start == 0 || !identPart(s.src[start-1])):
		if tag, ok := s.dollarTag(); ok {
			end := strings.Index(s.src[s.i+len(tag):], tag)
			if end < 0 {
				return it, &unterminatedError{"the dollar-quoted string " + tag, start}
			}
			s.i += len(tag) + end + len(tag)
			it.kind = itemString
			break
		}
		s.i++
		for s.i < len(s.src) && s.src[s.i] >= '0' && s.src[s.i] <= '9' { // $1
			s.i++
		}
		it.kind = itemOther
	case identStart(c):
		for s.i < len(s.src) && identPart(s.src[s.i]) {
			s.i++
		}
		it.kind, it.word = itemWord, s.src[start:s.i]
		// E'…' is one string: the E is its prefix, not a word.
		if (it.word == "E" || it.word == "e") && s.i < len(s.src) && s.src[s.i] == '\'' {
			if err := s.quoted('\'', true, "a string"); err != nil {
				return it, err
			}
			it.kind, it.word = itemString, ""
		}
	case c == ':' && s.peek(1) == ':':
		s.i += 2
		it.kind = itemOther
	case c == ':' && identStart(s.peek(1)):
		s.i++
		// A name runs as far as PostgreSQL's identifiers do, $ included:
		// `:events$$` is the name events$$ (unknown), not :events before a
		// dollar quote that only arr's rewrite would open.
		for s.i < len(s.src) && identPart(s.src[s.i]) {
			s.i++
		}
		it.kind, it.word = itemBound, s.src[start+1:s.i]
	case c == ';':
		s.i++
		it.kind = itemSemicolon
	case c >= '0' && c <= '9':
		for s.i < len(s.src) && (identPart(s.src[s.i]) || s.src[s.i] == '.') {
			s.i++
		}
		it.kind = itemOther
	default:
		s.i++
		it.kind = itemOther
	}
	it.end = s.i
	return it, nil
}

// quoted consumes a string or quoted identifier opened by q at s.i; a
// doubled q stands for itself, and with escapes a backslash escapes the
// next byte.
// blockComment moves past a /* comment that starts at start, nested
// comments included, as PostgreSQL's lexer does.
func (s *scanner) blockComment(start int) error {
	n := 0
	for {
		switch {
		case s.i >= len(s.src):
			return &unterminatedError{"a /* comment", start}
		case s.src[s.i] == '/' && s.peek(1) == '*':
			n++
			s.i += 2
		case s.src[s.i] == '*' && s.peek(1) == '/':
			n--
			s.i += 2
		default:
			s.i++
		}
		if n == 0 {
			return nil
		}
	}
}

func (s *scanner) quoted(q byte, escapes bool, what string) error {
	start := s.i
	s.i++
	for s.i < len(s.src) {
		switch c := s.src[s.i]; {
		case escapes && c == '\\':
			s.i += 2
		case c == q && s.peek(1) == q:
			s.i += 2
		case c == q:
			s.i++
			return nil
		default:
			s.i++
		}
	}
	return &unterminatedError{what, start}
}

// dollarTag reports the $tag$ (or $$) that opens a dollar-quoted string at
// s.i.
func (s *scanner) dollarTag() (string, bool) {
	j := s.i + 1
	if j < len(s.src) && s.src[j] == '$' {
		return "$$", true
	}
	if j >= len(s.src) || !identStart(s.src[j]) {
		return "", false
	}
	for j < len(s.src) && identPart(s.src[j]) && s.src[j] != '$' {
		j++
	}
	if j < len(s.src) && s.src[j] == '$' {
		return s.src[s.i : j+1], true
	}
	return "", false
}

// position is a place in a definition file, for error messages.
type position struct {
	line, col int
}

// lines maps byte offsets of a file to lines and columns (1-based,
// columns in characters).
type lines struct {
	src    string
	starts []int
}

func newLines(src string) *lines {
	l := &lines{src: src, starts: []int{0}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			l.starts = append(l.starts, i+1)
		}
	}
	return l
}

func (l *lines) at(off int) position {
	lo, hi := 0, len(l.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	col := 1 + len([]rune(l.src[l.starts[lo]:min(off, len(l.src))]))
	return position{line: lo + 1, col: col}
}

func (p position) String() string { return fmt.Sprintf("%d:%d", p.line, p.col) }
