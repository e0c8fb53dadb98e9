package sqlproj

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/analysis"
	"github.com/arr-dev/arr/domain/catalog"
)

// FuzzDefinition feeds the parser and the compiler definition files,
// starting from the hostile files (testdata/hostile) and the examples
// (testdata). Whatever the file, nothing panics, and what arr sends to
// PostgreSQL for a file it accepts keeps the file's text where arr put
// it:
//   - the name is one a projection may have (no "__");
//   - every statement is whole: it ends no string, identifier or comment
//     of arr's, and holds no top-level ; of its own;
//   - a section statement changes rows (INSERT, UPDATE, DELETE, MERGE,
//     after WITH) and nothing else;
//   - each function arr creates quotes its body with a dollar tag the
//     body does not hold, so no text of the file can end the quote and
//     run as arr's own statement;
//   - a statement prepared for the check is the file's statement with
//     its bound names replaced, and nothing else.
func FuzzDefinition(f *testing.F) {
	for _, pattern := range []string{"testdata/*.sql", "testdata/hostile/*.sql"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(b))
		}
	}
	f.Add("-- arr:projection p\nCREATE TABLE t (a text);\n-- arr:on KeyIssued\nINSERT INTO t VALUES ($x$;$x$ || :type || E'\\';') /* /* ; */ ; */;\n")
	f.Add("-- arr:projection p\nCREATE TABLE t (a text);\n-- arr:batch KeyIssued\nINSERT INTO t SELECT data->'payload'->>'k' FROM :events AS e WHERE e.data->>'x' = '$arr$';\n")
	known := catalog.Registry().Known
	f.Fuzz(func(t *testing.T, src string) {
		d, err := Parse("f.sql", src, known)
		if err != nil {
			return
		}
		if err := analysis.CheckName(d.Name); err != nil {
			t.Fatalf("accepted the name %q: %v", d.Name, err)
		}
		whole := func(what, text string) {
			sc := &scanner{src: text}
			depth := 0
			for {
				it, err := sc.next(depth)
				if err != nil {
					t.Fatalf("%s %q: %v", what, text, err)
				}
				if it.kind == itemEOF {
					return
				}
				if it.kind == itemSemicolon {
					t.Fatalf("%s %q holds a ;", what, text)
				}
				if it.kind == itemOther {
					switch text[it.start:it.end] {
					case "(":
						depth++
					case ")":
						depth--
					}
				}
			}
		}
		for _, st := range d.DDL {
			whole("DDL statement", st.Text)
		}
		for _, s := range d.Sections {
			for _, st := range s.Statements {
				whole("section statement", st.Text)
				switch st.Keyword {
				case "INSERT", "UPDATE", "DELETE", "MERGE":
				default:
					t.Fatalf("section statement %q runs as %q", st.Text, st.Keyword)
				}
				text, _ := prepared(s, st)
				whole("prepared statement", text)
			}
		}
		p := compile(d)
		for _, pl := range p.at {
			whole("compiled statement", pl.text)
		}
		for _, stmt := range functions("rm_"+d.Name, "arrsql_1_"+d.Name, p) {
			if !strings.HasPrefix(stmt, "CREATE FUNCTION") {
				continue
			}
			m := dollarTag.FindStringSubmatchIndex(stmt)
			if m == nil {
				t.Fatalf("a function without a dollar-quoted body: %q", stmt)
			}
			tag := stmt[m[2]:m[3]]
			body := stmt[m[1]:]
			if !strings.HasSuffix(body, tag) {
				t.Fatalf("the body does not end with its tag %s: %q", tag, stmt)
			}
			if strings.Contains(strings.TrimSuffix(body, tag), tag) {
				t.Fatalf("the body holds its own tag %s: %q", tag, stmt)
			}
		}
	})
}

// dollarTag finds where the body of a CREATE FUNCTION arr makes starts.
// (arr's own text, before the body, holds the first " AS $arr…$").
var dollarTag = regexp.MustCompile(` AS (\$arr\d*\$)`)
