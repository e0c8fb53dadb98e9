package sqlproj

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arr-dev/arr/domain/analysis"
)

// Definition is a parsed definition file (see docs/sql-projections.md):
//
//	-- arr:projection NAME
//	DDL statements
//	-- arr:on EventType[, EventType…]     statements run once per event
//	-- arr:batch EventType[, EventType…]  statements run once per batch
type Definition struct {
	Name string
	// File names the file in messages; SQL is its text.
	File string
	SQL  string
	// DDL are the statements before the first section: they create the
	// read model's tables in its schema.
	DDL      []Statement
	Sections []Section
}

// Section is an arr:on or arr:batch section.
type Section struct {
	// Batch: the statements run once per batch over :events, else once
	// per event with the event's bound names.
	Batch bool
	Types []string
	Line  int
	// Statements are run in file order.
	Statements []Statement
}

// Directive is the section's directive as written in the file.
func (s Section) Directive() string {
	kw := "arr:on"
	if s.Batch {
		kw = "arr:batch"
	}
	return kw + " " + strings.Join(s.Types, ", ")
}

// Statement is one SQL statement of a file, without its semicolon.
type Statement struct {
	Text string
	// Offset is where Text starts in the file (bytes).
	Offset int
	Line   int
	// Binds are the :names in Text, in order.
	Binds []Bind
	// Keyword is the statement's first word, upper case; for WITH, the
	// word of the statement the WITH precedes (INSERT, SELECT, …).
	Keyword string
}

// Bind is a :name in a statement: Text[Offset:Offset+1+len(Name)].
type Bind struct {
	Name   string
	Offset int
}

// The bound names of an arr:on section (each the event's) and of an
// arr:batch section.
var (
	eventNames = []string{"position", "type", "stream", "version", "schema_version", "recorded_at", "data", "metadata"}
	batchNames = []string{"events"}
)

// Error is a mistake in a definition file, at a place in it. Err is the
// database's error, when the database found it.
type Error struct {
	File      string
	Line, Col int
	// Statement says which statement, if the mistake is in one: "DDL
	// statement 2", "arr:on CompletionRecorded, statement 1".
	Statement string
	Msg       string
	Err       error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Statement != "" {
		b.WriteString(e.Statement + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Parse reads a definition file. file names it in errors; known reports
// whether an event type exists (domain.Registry.Known). It checks
// everything that can be checked without a database: the directives, the
// event types, the statements' ends and bound names, and that an arr:on
// or arr:batch statement changes rows (INSERT, UPDATE, DELETE, MERGE).
func Parse(file, src string, known func(string) bool) (*Definition, error) {
	p := &parser{d: &Definition{File: file, SQL: src}, src: src, ln: newLines(src), first: -1}
	sc := &scanner{src: src}
	for {
		it, err := sc.next(p.depth)
		if err != nil {
			var ue *unterminatedError
			if errors.As(err, &ue) {
				return nil, p.fail(ue.at, "%s", ue.Error())
			}
			return nil, err
		}
		switch it.kind {
		case itemEOF:
			p.closeStmt()
			if !p.named {
				return nil, p.fail(0, "the file must start with a line -- arr:projection NAME")
			}
			p.closeSection()
			return p.d, p.d.check(p.ln, known)
		case itemSpace, itemBlockComment:
			continue
		case itemLineComment:
			if err := p.directive(it); err != nil {
				return nil, err
			}
			continue
		case itemSemicolon:
			p.closeStmt()
			continue
		}
		if err := p.add(it); err != nil {
			return nil, err
		}
	}
}

// parser is Parse's state: the definition so far and the statement being
// read.
type parser struct {
	d       *Definition
	src     string
	ln      *lines
	named   bool        // the arr:projection line was seen
	section *Section    // nil: the DDL
	first   int         // the current statement's first item (-1: none)
	last    item        // its last significant item
	binds   []Bind      // its bound names (offsets in the file)
	words   []item      // its words at its own depth 0
	depth   int         // parenthesis depth
	stmts   []Statement // of the DDL or the section
}

func (p *parser) fail(off int, format string, args ...any) error {
	at := p.ln.at(off)
	return &Error{File: p.d.File, Line: at.line, Col: at.col, Msg: fmt.Sprintf(format, args...)}
}

// closeStmt ends the statement being read, if any.
func (p *parser) closeStmt() {
	if p.first < 0 {
		return
	}
	st := Statement{Text: p.src[p.first:p.last.end], Offset: p.first, Line: p.ln.at(p.first).line, Keyword: keyword(p.words)}
	for _, b := range p.binds {
		st.Binds = append(st.Binds, Bind{Name: b.Name, Offset: b.Offset - p.first})
	}
	p.stmts = append(p.stmts, st)
	p.first, p.binds, p.words, p.depth = -1, nil, nil, 0
}

// closeSection ends the DDL or the section being read.
func (p *parser) closeSection() {
	if p.section == nil {
		p.d.DDL = p.stmts
	} else {
		p.section.Statements = p.stmts
		p.d.Sections = append(p.d.Sections, *p.section)
	}
	p.stmts = nil
}

// directive reads a line comment: a directive if it starts a line and
// begins with arr:, else nothing.
func (p *parser) directive(it item) error {
	body := strings.TrimSpace(it.word)
	if !strings.HasPrefix(body, "arr:") || !lineStart(p.src, it.start) {
		return nil
	}
	p.closeStmt()
	kw, args, _ := strings.Cut(body, " ")
	args = strings.TrimSpace(args)
	switch kw {
	case "arr:projection":
		if p.named {
			return p.fail(it.start, "a second arr:projection line: one file defines one projection")
		}
		if len(p.d.DDL) > 0 || len(p.stmts) > 0 {
			return p.fail(it.start, "arr:projection must come before any statement")
		}
		if err := analysis.CheckName(args); err != nil {
			return p.fail(it.start+strings.Index(p.src[it.start:it.end], "arr:")+len("arr:projection "), "%s", strings.TrimPrefix(err.Error(), "invalid_projection_name: "))
		}
		p.named, p.d.Name = true, args
	case "arr:on", "arr:batch":
		if !p.named {
			return p.fail(it.start, "the file must start with a line -- arr:projection NAME")
		}
		p.closeSection()
		p.section = &Section{Batch: kw == "arr:batch", Line: p.ln.at(it.start).line}
		for _, t := range strings.FieldsFunc(args, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			if slices.Contains(p.section.Types, t) {
				return p.fail(it.start, "%s names %s twice", kw, t)
			}
			p.section.Types = append(p.section.Types, t)
		}
		if len(p.section.Types) == 0 {
			return p.fail(it.start, "%s names no event type: write -- %s EventType[, EventType…]", kw, kw)
		}
	default:
		return p.fail(it.start, "unknown directive -- %s: use arr:projection, arr:on or arr:batch", kw)
	}
	return nil
}

// add takes an item of a statement.
func (p *parser) add(it item) error {
	if !p.named {
		return p.fail(it.start, "the file must start with a line -- arr:projection NAME")
	}
	if p.first < 0 {
		p.first = it.start
	}
	p.last = it
	switch {
	case it.kind == itemBound:
		p.binds = append(p.binds, Bind{Name: it.word, Offset: it.start})
	case it.kind == itemWord && p.depth == 0:
		p.words = append(p.words, it)
	case it.kind == itemOther && p.src[it.start] == '(':
		p.depth++
	case it.kind == itemOther && p.src[it.start] == ')':
		p.depth = max(0, p.depth-1)
	}
	return nil
}

// lineStart reports whether only blanks precede offset on its line.
func lineStart(src string, off int) bool {
	for i := off - 1; i >= 0 && src[i] != '\n'; i-- {
		if src[i] != ' ' && src[i] != '\t' {
			return false
		}
	}
	return true
}

// keyword is a statement's first word, or for WITH the first word of the
// statement it precedes.
func keyword(words []item) string {
	if len(words) == 0 {
		return ""
	}
	kw := strings.ToUpper(words[0].word)
	if kw != "WITH" {
		return kw
	}
	for _, w := range words[1:] {
		switch k := strings.ToUpper(w.word); k {
		case "SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "VALUES", "TABLE":
			return k
		}
	}
	return kw
}

// changesRows are the statements an arr:on or arr:batch section may hold.
var changesRows = []string{"INSERT", "UPDATE", "DELETE", "MERGE"}

func (d *Definition) check(ln *lines, known func(string) bool) error {
	fail := func(off int, stmt, format string, args ...any) error {
		p := ln.at(off)
		return &Error{File: d.File, Line: p.line, Col: p.col, Statement: stmt, Msg: fmt.Sprintf(format, args...)}
	}
	for i, st := range d.DDL {
		for _, b := range st.Binds {
			return fail(st.Offset+b.Offset, fmt.Sprintf("DDL statement %d", i+1), ":%s: bound names belong in arr:on and arr:batch sections", b.Name)
		}
	}
	if len(d.Sections) == 0 {
		return &Error{File: d.File, Msg: "no arr:on or arr:batch section: the projection would never change"}
	}
	for _, s := range d.Sections {
		for _, t := range s.Types {
			if !known(t) {
				return &Error{File: d.File, Line: s.Line, Msg: fmt.Sprintf("unknown event type %s (arr events types lists them)", t)}
			}
		}
		if len(s.Statements) == 0 {
			return &Error{File: d.File, Line: s.Line, Msg: fmt.Sprintf("%s holds no statement", s.Directive())}
		}
		names := eventNames
		if s.Batch {
			names = batchNames
		}
		for i, st := range s.Statements {
			what := fmt.Sprintf("%s, statement %d", s.Directive(), i+1)
			if !slices.Contains(changesRows, st.Keyword) {
				return fail(st.Offset, what, "a %s statement must be INSERT, UPDATE, DELETE or MERGE (optionally after WITH), not %s; put other statements in the DDL before the first section",
					strings.Fields(s.Directive())[0], st.Keyword)
			}
			for _, b := range st.Binds {
				if !slices.Contains(names, b.Name) {
					return fail(st.Offset+b.Offset, what, "unknown bound name :%s (here: :%s)", b.Name, strings.Join(names, ", :"))
				}
			}
		}
	}
	return nil
}

// Types are the event types the definition's sections name, in order of
// first mention.
func (d *Definition) Types() []string {
	var out []string
	for _, s := range d.Sections {
		for _, t := range s.Types {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}
