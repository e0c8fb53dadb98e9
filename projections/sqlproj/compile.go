package sqlproj

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// compilerVersion is part of every SQL projection's DDL hash: a build that
// compiles definitions differently bumps it, and Setup rebuilds each SQL
// projection with the functions this build makes.
const compilerVersion = 4

// The functions arr creates in a SQL projection's schema, owned by its
// role. arr_exec, arr_apply and arr_query are SECURITY DEFINER: what they
// run, runs as the role, and nothing inside them can change role (see
// guard.go). arr_events is the relation :events of arr:batch statements.
const (
	execSig   = "arr_exec(text)"
	querySig  = "arr_query(text)"
	applySig  = "arr_apply(bigint[],text[],text[],bigint[],integer[],timestamp with time zone[],text,text)"
	eventsSig = "arr_events(text[],bigint[],text[],text[],bigint[],integer[],timestamp with time zone[],text[],text[])"
)

// batchParams are arr_apply's parameters: one array per bound name. Data
// and metadata travel as text (JSON) and become jsonb where they are read:
// arrays of jsonb cost twice as much to send.
const batchParams = `arr__positions bigint[], arr__types text[], arr__streams text[], arr__versions bigint[], arr__schema_versions integer[], arr__recorded_ats timestamptz[], arr__datas text[], arr__metadatas text[]`

// applyParams are arr_apply's: as batchParams, but data and metadata come
// as one text each, the events' JSON joined by the record separator
// (U+001E, which JSON text cannot hold unescaped): one value to send
// instead of thousands.
const applyParams = `arr__positions bigint[], arr__types text[], arr__streams text[], arr__versions bigint[], arr__schema_versions integer[], arr__recorded_ats timestamptz[], arr__datas_joined text, arr__metadatas_joined text`

// separator joins the events' JSON in arr_apply's arguments.
const separator = "\x1e"

const batchArgs = `arr__positions, arr__types, arr__streams, arr__versions, arr__schema_versions, arr__recorded_ats, arr__datas, arr__metadatas`

// eventColumns are the columns of :events, and the variables of a per-event
// statement, in the order of eventNames.
var eventTypes = []string{"bigint", "text", "text", "bigint", "integer", "timestamptz", "jsonb", "jsonb"}

const execBody = `
BEGIN
  EXECUTE arr__sql;
END
`

// queryBody runs a read-only query and returns each row as a JSON object
// (its columns in order). The newline keeps a trailing -- comment of the
// query from swallowing the parenthesis.
const queryBody = `
BEGIN
  RETURN QUERY EXECUTE 'SELECT pg_catalog.row_to_json(arr__q)::text FROM (' || arr__sql || E'\n) AS arr__q';
END
`

// eventsBody yields the batch's events of the types arr__only. The arrays
// are unnested in the select list (a ProjectSet, which streams, where a
// function scan would first write the batch to a tuplestore), and OFFSET 0
// keeps the subquery whole in the statement that reads it, so each row's
// JSON becomes jsonb once however often the statement reads it.
const eventsBody = `
SELECT * FROM (SELECT pg_catalog.unnest(arr__positions) AS position, pg_catalog.unnest(arr__types) AS type,
  pg_catalog.unnest(arr__streams) AS stream, pg_catalog.unnest(arr__versions) AS version,
  pg_catalog.unnest(arr__schema_versions) AS schema_version, pg_catalog.unnest(arr__recorded_ats) AS recorded_at,
  pg_catalog.unnest(arr__datas)::jsonb AS data, pg_catalog.unnest(arr__metadatas)::jsonb AS metadata) AS arr__e
WHERE arr__e.type = ANY (arr__only)
OFFSET 0
`

// program is a definition compiled: the body of its arr_apply and where
// each statement sits in it.
type program struct {
	def   *Definition
	apply string
	// at maps a line of arr_apply's body to the statement there.
	at []placed
}

type placed struct {
	first, last int // lines of the body
	what        string
	st          Statement
	text        string // as rewritten
	m           offsetMap
}

// compile builds arr_apply's body: a loop over the batch that runs each
// arr:on section's statements for the events of its types, the event's
// bound names being variables, then each arr:batch section's statements
// once, if the batch holds an event of its types.
func compile(d *Definition) *program {
	p := &program{def: d}
	var b strings.Builder
	line := 1
	w := func(s string) {
		b.WriteString(s)
		line += strings.Count(s, "\n")
	}
	emit := func(what string, st Statement, repl func(string) string) {
		text, m := rewrite(st, repl)
		first := line
		w(text + "\n;\n")
		p.at = append(p.at, placed{first: first, last: line - 1, what: what, st: st, text: text, m: m})
	}
	w("\n#variable_conflict use_column\nDECLARE\n  arr__i integer;\n")
	w("  arr__datas text[] := pg_catalog.string_to_array(arr__datas_joined, E'\\x1e');\n")
	w("  arr__metadatas text[] := pg_catalog.string_to_array(arr__metadatas_joined, E'\\x1e');\n")
	for i, n := range eventNames {
		w(fmt.Sprintf("  arr__%s %s;\n", n, eventTypes[i]))
	}
	w("BEGIN\n")
	var perEvent, perBatch []Section
	for _, s := range d.Sections {
		if s.Batch {
			perBatch = append(perBatch, s)
		} else {
			perEvent = append(perEvent, s)
		}
	}
	if len(perEvent) > 0 {
		w("FOR arr__i IN 1 .. coalesce(pg_catalog.array_length(arr__positions, 1), 0) LOOP\n")
		for i, n := range eventNames {
			w(fmt.Sprintf("  arr__%s := arr__%ss[arr__i]::%s;\n", n, n, eventTypes[i]))
		}
		for _, s := range perEvent {
			w("  IF arr__type = ANY (" + typeArray(s.Types) + ") THEN\n")
			for i, st := range s.Statements {
				emit(fmt.Sprintf("%s, statement %d", s.Directive(), i+1), st, func(name string) string { return "arr__" + name })
			}
			w("  END IF;\n")
		}
		w("END LOOP;\n")
	}
	for _, s := range perBatch {
		w("IF arr__types && " + typeArray(s.Types) + " THEN\n")
		for i, st := range s.Statements {
			emit(fmt.Sprintf("%s, statement %d", s.Directive(), i+1), st, func(string) string {
				return "arr_events(" + typeArray(s.Types) + ", " + batchArgs + ")"
			})
		}
		w("END IF;\n")
	}
	w("END\n")
	p.apply = b.String()
	return p
}

func typeArray(types []string) string {
	q := make([]string, len(types))
	for i, t := range types {
		q[i] = "'" + strings.ReplaceAll(t, "'", "''") + "'"
	}
	return "ARRAY[" + strings.Join(q, ", ") + "]::text[]"
}

// prepared is a section statement as a PREPARE of it would read it (the
// bound names $1…$8, or :events over $1…$8), for checking it.
func prepared(s Section, st Statement) (string, offsetMap) {
	if s.Batch {
		args := make([]string, len(eventNames))
		for i := range args {
			args[i] = "$" + strconv.Itoa(i+1)
		}
		call := "arr_events(" + typeArray(s.Types) + ", " + strings.Join(args, ", ") + ")"
		return rewrite(st, func(string) string { return call })
	}
	return rewrite(st, func(name string) string {
		for i, n := range eventNames {
			if n == name {
				return "$" + strconv.Itoa(i+1)
			}
		}
		return ":" + name // Parse refused it already
	})
}

// prepareTypes are the parameter types of prepared's statement.
func prepareTypes(batch bool) string {
	if batch {
		return "bigint[], text[], text[], bigint[], integer[], timestamptz[], text[], text[]"
	}
	return strings.Join(eventTypes, ", ")
}

// offsetMap maps offsets of a rewritten statement back to the statement.
type offsetMap []span

type span struct{ newOff, newLen, oldOff, oldLen int }

// rewrite replaces each bound name of st with repl(name).
func rewrite(st Statement, repl func(string) string) (string, offsetMap) {
	var b strings.Builder
	var m offsetMap
	at := 0
	for _, bd := range st.Binds {
		b.WriteString(st.Text[at:bd.Offset])
		r := repl(bd.Name)
		m = append(m, span{newOff: b.Len(), newLen: len(r), oldOff: bd.Offset, oldLen: 1 + len(bd.Name)})
		b.WriteString(r)
		at = bd.Offset + 1 + len(bd.Name)
	}
	b.WriteString(st.Text[at:])
	return b.String(), m
}

// old returns the statement offset of offset off of the rewritten text.
func (m offsetMap) old(off int) int {
	delta := 0
	for _, s := range m {
		if off < s.newOff {
			break
		}
		if off < s.newOff+s.newLen {
			return s.oldOff
		}
		delta = s.oldOff + s.oldLen - (s.newOff + s.newLen)
	}
	return off + delta
}

// dollarQuote quotes body with a dollar tag it does not contain, so no
// text of a definition can end the quote early.
func dollarQuote(body string) string {
	tag := "$arr$"
	for i := 1; strings.Contains(body, tag); i++ {
		tag = "$arr" + strconv.Itoa(i) + "$"
	}
	return tag + body + tag
}

// functions are the statements that create arr's functions in schema,
// given to role; with p, arr_apply of p too.
func functions(schema, role string, p *program) []string {
	s := pgx.Identifier{schema}.Sanitize()
	out := []string{
		`CREATE FUNCTION ` + s + `.arr_exec(arr__sql text) RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS ` + dollarQuote(execBody),
		`CREATE FUNCTION ` + s + `.arr_query(arr__sql text) RETURNS SETOF text LANGUAGE plpgsql SECURITY DEFINER AS ` + dollarQuote(queryBody),
		`CREATE FUNCTION ` + s + `.arr_events(arr__only text[], ` + batchParams + `)
RETURNS TABLE ("position" bigint, type text, stream text, version bigint, schema_version integer, recorded_at timestamptz, data jsonb, metadata jsonb)
LANGUAGE sql STABLE AS ` + dollarQuote(eventsBody),
	}
	out = append(out, give(s, role, execSig, querySig, eventsSig)...)
	if p != nil {
		out = append(out, applyFunction(schema, role, p)...)
	}
	return out
}

// applyFunction creates p's arr_apply in schema, given to role.
func applyFunction(schema, role string, p *program) []string {
	s := pgx.Identifier{schema}.Sanitize()
	return append([]string{`CREATE FUNCTION ` + s + `.arr_apply(` + applyParams + `) RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS ` + dollarQuote(p.apply)},
		give(s, role, applySig)...)
}

// give makes role the owner of functions of schema s, which nobody else
// may call but arr.
func give(s, role string, sigs ...string) []string {
	var out []string
	for _, sig := range sigs {
		out = append(out, `REVOKE ALL ON FUNCTION `+s+`.`+sig+` FROM PUBLIC`, `ALTER FUNCTION `+s+`.`+sig+` OWNER TO `+pgx.Identifier{role}.Sanitize())
	}
	return out
}

var bodyLine = regexp.MustCompile(`function [^\n]*arr_apply\([^)]*\) line (\d+)`)

// locate names the statement of arr_apply that an error's context (a
// PL/pgSQL "line N") points to.
func (p *program) locate(where string) (placed, bool) {
	m := bodyLine.FindStringSubmatch(where)
	if m == nil {
		return placed{}, false
	}
	n, _ := strconv.Atoi(m[1])
	for _, pl := range p.at {
		if n >= pl.first && n <= pl.last+1 {
			return pl, true
		}
	}
	return placed{}, false
}
