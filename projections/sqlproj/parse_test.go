package sqlproj_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/projections/sqlproj"
)

var known = catalog.Registry().Known

func TestParseTheIssuesExample(t *testing.T) {
	src, err := os.ReadFile("testdata/spend_by_model.sql")
	if err != nil {
		t.Fatal(err)
	}
	d, err := sqlproj.Parse("spend.sql", string(src), known)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "spend_by_model" || len(d.DDL) != 1 || len(d.Sections) != 1 {
		t.Fatalf("parsed %+v", d)
	}
	if !strings.HasPrefix(d.DDL[0].Text, "CREATE TABLE spend") || d.DDL[0].Line != 4 || !strings.HasSuffix(d.DDL[0].Text, ")") {
		t.Fatalf("DDL %+v", d.DDL[0])
	}
	s := d.Sections[0]
	if s.Batch || len(s.Types) != 1 || s.Types[0] != "CompletionRecorded" || s.Line != 12 || len(s.Statements) != 1 {
		t.Fatalf("section %+v", s)
	}
	st := s.Statements[0]
	var names []string
	for _, b := range st.Binds {
		names = append(names, b.Name)
		if got := st.Text[b.Offset : b.Offset+1+len(b.Name)]; got != ":"+b.Name {
			t.Errorf("bind %s at %d reads %q", b.Name, b.Offset, got)
		}
	}
	if strings.Join(names, ",") != "recorded_at,data,data" || st.Keyword != "INSERT" || st.Line != 13 {
		t.Fatalf("statement %+v (binds %v)", st, names)
	}
}

// TestParseSkipsQuotedText: a ; or :name inside strings, quoted
// identifiers, comments and dollar quotes is neither a statement's end nor
// a bound name; :: is a cast.
func TestParseSkipsQuotedText(t *testing.T) {
	src := `-- arr:projection quoted
CREATE TABLE t (a text, "b;:c" text); /* ; :x /* nested ; */ */
CREATE FUNCTION f() RETURNS text LANGUAGE sql AS $fn$ SELECT ';:y' $fn$;
-- arr:on KeyIssued
INSERT INTO t VALUES (E'it\'s; :z', $$;:w$$) -- ; :v
;
-- not a directive: -- arr:on Nothing
UPDATE t SET a = :type::text || ':u' WHERE "b;:c" = :stream`
	d, err := sqlproj.Parse("q.sql", src, known)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.DDL) != 2 || len(d.Sections) != 1 || len(d.Sections[0].Statements) != 2 {
		t.Fatalf("parsed %d DDL, %+v", len(d.DDL), d.Sections)
	}
	ins, upd := d.Sections[0].Statements[0], d.Sections[0].Statements[1]
	if len(ins.Binds) != 0 || strings.HasSuffix(ins.Text, "; :v") {
		t.Fatalf("insert %+v", ins)
	}
	if len(upd.Binds) != 2 || upd.Binds[0].Name != "type" || upd.Binds[1].Name != "stream" || upd.Keyword != "UPDATE" {
		t.Fatalf("update %+v", upd)
	}
}

func TestParseRefuses(t *testing.T) {
	head := "-- arr:projection p\nCREATE TABLE t (a int);\n"
	for _, tc := range []struct {
		name, src, want string
		line            int
	}{
		{"no projection line", "CREATE TABLE t (a int);", "must start with a line -- arr:projection NAME", 1},
		{"bad name", "-- arr:projection Bad-Name\n-- arr:on KeyIssued\nDELETE FROM t;", "projection name \"Bad-Name\"", 1},
		{"two names", head + "-- arr:projection q\n", "a second arr:projection", 3},
		{"unknown type", head + "-- arr:on KeyIssued, NothingHappened\nDELETE FROM t;", "unknown event type NothingHappened", 3},
		{"unknown directive", head + "-- arr:onn KeyIssued\n", "unknown directive -- arr:onn", 3},
		{"no section", head, "no arr:on or arr:batch section", 0},
		{"empty section", head + "-- arr:on KeyIssued\n-- arr:on KeyRevoked\nDELETE FROM t;", "arr:on KeyIssued holds no statement", 3},
		{"unknown bound name", head + "-- arr:on KeyIssued\nINSERT INTO t VALUES (1);\nINSERT INTO t VALUES (:positon::int);", "arr:on KeyIssued, statement 2: unknown bound name :positon", 5},
		{"bound name in DDL", "-- arr:projection p\nCREATE TABLE t (a int DEFAULT :position);\n-- arr:on KeyIssued\nDELETE FROM t;", "DDL statement 1: :position", 2},
		{"event name in batch", head + "-- arr:batch KeyIssued\nINSERT INTO t SELECT :position FROM :events;", "unknown bound name :position (here: :events)", 4},
		{"select in a section", head + "-- arr:on KeyIssued\nSELECT 1;", "must be INSERT, UPDATE, DELETE or MERGE", 4},
		{"set role in a section", head + "-- arr:on KeyIssued\nSET ROLE postgres;", "not SET", 4},
		{"select after with", head + "-- arr:on KeyIssued\nWITH x AS (DELETE FROM t RETURNING a) SELECT * FROM x;", "not SELECT", 4},
		{"unterminated string", head + "-- arr:on KeyIssued\nINSERT INTO t VALUES ('oops);", "a string does not end", 4},
		{"unterminated dollar quote", head + "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $b$ SELECT 1;", "the dollar-quoted string $b$ does not end", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sqlproj.Parse("p.sql", tc.src, known)
			var pe *sqlproj.Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *sqlproj.Error", err)
			}
			if !strings.Contains(err.Error(), tc.want) || pe.Line != tc.line || !strings.HasPrefix(err.Error(), "p.sql") {
				t.Fatalf("got %q (line %d), want %q at line %d", err, pe.Line, tc.want, tc.line)
			}
		})
	}
}

func TestParseWithBeforeInsert(t *testing.T) {
	src := "-- arr:projection p\nCREATE TABLE t (a int);\n-- arr:batch KeyIssued, KeyRevoked\nWITH n AS (SELECT count(*) AS c FROM :events) INSERT INTO t SELECT c FROM n;"
	d, err := sqlproj.Parse("p.sql", src, known)
	if err != nil {
		t.Fatal(err)
	}
	if s := d.Sections[0]; !s.Batch || s.Statements[0].Keyword != "INSERT" || strings.Join(d.Types(), ",") != "KeyIssued,KeyRevoked" {
		t.Fatalf("parsed %+v", s)
	}
}
