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
	d := &Definition{File: file, SQL: src}
	ln := newLines(src)
	fail := func(off int, format string, args ...any) error {
		p := ln.at(off)
		return &Error{File: file, Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
	}
	sc := &scanner{src: src}
	var (
		named   bool        // the arr:projection line was seen
		section *Section    // nil: the DDL
		first   = -1        // the current statement's first item
		last    item        // its last significant item
		binds   []Bind      // its bound names (offsets in the file)
		words   []item      // its words at its own depth 0
		depth   int         // parenthesis depth
		stmts   []Statement // of the DDL or the section
	)
	closeStmt := func() {
		if first < 0 {
			return
		}
		st := Statement{Text: src[first:last.end], Offset: first, Line: ln.at(first).line, Keyword: keyword(words)}
		for _, b := range binds {
			st.Binds = append(st.Binds, Bind{Name: b.Name, Offset: b.Offset - first})
		}
		stmts = append(stmts, st)
		first, binds, words, depth = -1, nil, nil, 0
	}
	closeSection := func() {
		if section == nil {
			d.DDL = stmts
		} else {
			section.Statements = stmts
			d.Sections = append(d.Sections, *section)
		}
		stmts = nil
	}
	for {
		it, err := sc.next(depth)
		if err != nil {
			var ue *unterminatedError
			if errors.As(err, &ue) {
				return nil, fail(ue.at, "%s", ue.Error())
			}
			return nil, err
		}
		switch it.kind {
		case itemEOF:
			closeStmt()
			if !named {
				return nil, fail(0, "the file must start with a line -- arr:projection NAME")
			}
			closeSection()
			return d, d.check(ln, known)
		case itemSpace, itemBlockComment:
			continue
		case itemLineComment:
			body := strings.TrimSpace(it.word)
			if !strings.HasPrefix(body, "arr:") || !lineStart(src, it.start) {
				continue
			}
			closeStmt()
			kw, args, _ := strings.Cut(body, " ")
			args = strings.TrimSpace(args)
			switch kw {
			case "arr:projection":
				if named {
					return nil, fail(it.start, "a second arr:projection line: one file defines one projection")
				}
				if len(d.DDL) > 0 || len(stmts) > 0 {
					return nil, fail(it.start, "arr:projection must come before any statement")
				}
				if err := analysis.CheckName(args); err != nil {
					return nil, fail(it.start+strings.Index(src[it.start:it.end], "arr:")+len("arr:projection "), "%s", strings.TrimPrefix(err.Error(), "invalid_projection_name: "))
				}
				named, d.Name = true, args
			case "arr:on", "arr:batch":
				if !named {
					return nil, fail(it.start, "the file must start with a line -- arr:projection NAME")
				}
				closeSection()
				section = &Section{Batch: kw == "arr:batch", Line: ln.at(it.start).line}
				for _, t := range strings.FieldsFunc(args, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
					if slices.Contains(section.Types, t) {
						return nil, fail(it.start, "%s names %s twice", kw, t)
					}
					section.Types = append(section.Types, t)
				}
				if len(section.Types) == 0 {
					return nil, fail(it.start, "%s names no event type: write -- %s EventType[, EventType…]", kw, kw)
				}
			default:
				return nil, fail(it.start, "unknown directive -- %s: use arr:projection, arr:on or arr:batch", kw)
			}
			continue
		case itemSemicolon:
			closeStmt()
			continue
		}
		if !named {
			return nil, fail(it.start, "the file must start with a line -- arr:projection NAME")
		}
		if first < 0 {
			first = it.start
		}
		last = it
		switch {
		case it.kind == itemBound:
			binds = append(binds, Bind{Name: it.word, Offset: it.start})
		case it.kind == itemWord && depth == 0:
			words = append(words, it)
		case it.kind == itemOther && src[it.start] == '(':
			depth++
		case it.kind == itemOther && src[it.start] == ')':
			depth = max(0, depth-1)
		}
	}
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
