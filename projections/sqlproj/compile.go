package sqlproj

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// compilerVersion is part of every SQL projection's DDL hash: a build that
// compiles definitions differently bumps it, and Setup rebuilds each SQL
// projection with the functions this build makes.
const compilerVersion = 6

// The functions arr creates in a SQL projection's schema, owned by its
// role. arr_exec, arr_apply and arr_query are SECURITY DEFINER: what they
// run, runs as the role, and nothing inside them can change role (see
// guard.go). arr_events is the relation :events of arr:batch statements.
var (
	execFn  = function{name: "arr_exec", args: []string{"text"}, body: execBody}
	queryFn = function{name: "arr_query", args: []string{"text", "bigint"}, body: queryBody}
)

// applyArgs are arr_apply's argument types (applyParams).
var applyArgs = []string{"bigint[]", "text[]", "text[]", "bigint[]", "integer[]", "timestamp with time zone[]", "text", "text", "text[]"}

const eventsSig = "arr_events(text[],bigint[],text[],text[],bigint[],integer[],timestamp with time zone[],text[],text[])"

// applyFn is p's arr_apply.
func (p *program) applyFn() function {
	return function{name: "arr_apply", args: applyArgs, body: p.apply}
}

// batchParams are arr_apply's parameters: one array per bound name. Data
// and metadata travel as text (JSON) and become jsonb where they are read:
// arrays of jsonb cost twice as much to send.
const batchParams = `arr__positions bigint[], arr__types text[], arr__streams text[], arr__versions bigint[], arr__schema_versions integer[], arr__recorded_ats timestamptz[], arr__datas text[], arr__metadatas text[]`

// applyParams are arr_apply's: as batchParams, but data and metadata come
// as one text each, the events' JSON joined by the record separator
// (U+001E, which JSON text cannot hold unescaped): one value to send
// instead of thousands.
// The third, arr__paths_joined, holds one such text per path of the
// program (see paths.go): each event's value there, ” where it has none.
// Data and metadata are NULL when no statement reads them whole.
const applyParams = `arr__positions bigint[], arr__types text[], arr__streams text[], arr__versions bigint[], arr__schema_versions integer[], arr__recorded_ats timestamptz[], arr__datas_joined text, arr__metadatas_joined text, arr__paths_joined text[]`

// separator joins the events' JSON in arr_apply's arguments.
const separator = "\x1e"

const batchArgs = `arr__positions, arr__types, arr__streams, arr__versions, arr__schema_versions, arr__recorded_ats, arr__datas, arr__metadatas`

// baseArgs are arr_events_paths's arguments before the paths.
const baseArgs = `arr__positions, arr__types, arr__streams, arr__versions, arr__schema_versions, arr__recorded_ats`

// eventsPathsSig is the signature of arr_events_paths over n paths.
func eventsPathsSig(n int) string {
	return "arr_events_paths(text[],bigint[],text[],text[],bigint[],integer[],timestamp with time zone[]" + strings.Repeat(",text[]", n) + ")"
}

// eventsPathsFunction is arr_events_paths over n paths: :events for a
// batch statement that reads chains only (see paths.go), with the paths'
// values (arr__p1 …) for data and metadata.
func eventsPathsFunction(s string, n int) string {
	var params, cols, sel strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&params, ", arr__p%ds text[]", i)
		fmt.Fprintf(&cols, ", arr__p%d jsonb", i)
		fmt.Fprintf(&sel, ",\n  pg_catalog.unnest(arr__p%ds)::jsonb AS arr__p%d", i, i)
	}
	return `CREATE FUNCTION ` + s + `.arr_events_paths(arr__only text[], arr__positions bigint[], arr__types text[], arr__streams text[], arr__versions bigint[], arr__schema_versions integer[], arr__recorded_ats timestamptz[]` + params.String() + `)
RETURNS TABLE ("position" bigint, type text, stream text, version bigint, schema_version integer, recorded_at timestamptz` + cols.String() + `)
LANGUAGE sql STABLE AS ` + dollarQuote(`
SELECT * FROM (SELECT pg_catalog.unnest(arr__positions) AS position, pg_catalog.unnest(arr__types) AS type,
  pg_catalog.unnest(arr__streams) AS stream, pg_catalog.unnest(arr__versions) AS version,
  pg_catalog.unnest(arr__schema_versions) AS schema_version, pg_catalog.unnest(arr__recorded_ats) AS recorded_at`+sel.String()+`) AS arr__e
WHERE arr__e.type = ANY (arr__only)
OFFSET 0
`)
}

// eventColumns are the columns of :events, and the variables of a per-event
// statement, in the order of eventNames.
var eventTypes = []string{"bigint", "text", "text", "bigint", "integer", "timestamptz", "jsonb", "jsonb"}

const execBody = `
BEGIN
  EXECUTE arr__sql;
END
`

// queryBody runs a read-only query and returns each row as a JSON object
// (its columns in order), at most arr__limit rows (all if NULL): PostgreSQL
// stops there. The newline keeps a trailing -- comment of the query from
// swallowing the parenthesis.
const queryBody = `
BEGIN
  RETURN QUERY EXECUTE 'SELECT pg_catalog.row_to_json(arr__q)::pg_catalog.text FROM (' || arr__sql || E'\n) AS arr__q LIMIT $1' USING arr__limit;
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
	// paths are the values apply finds in each event's JSON for the
	// chains statements read (arr__p1 …, see paths.go).
	paths []path
	// data and metadata: apply sends each event's data or metadata whole,
	// for a statement that reads it so.
	data, metadata bool
	// eventsPaths is the signature of arr_events_paths, "" if no batch
	// statement reads chains only.
	eventsPaths string
}

type placed struct {
	first, last int // lines of the body
	what        string
	st          Statement
	text        string // as rewritten
	m           offsetMap
}

// pathIndex returns the 1-based number of pa in p.paths, adding it.
func (p *program) pathIndex(pa path) int {
	for i, q := range p.paths {
		if q.equal(pa) {
			return i + 1
		}
	}
	p.paths = append(p.paths, pa)
	return len(p.paths)
}

// compile builds arr_apply's body: a loop over the batch that runs each
// arr:on section's statements for the events of its types, the event's
// bound names being variables, then each arr:batch section's statements
// once, if the batch holds an event of its types. Chains of -> and ->>
// become the values apply found (see paths.go).
func compile(d *Definition) *program {
	p := &program{def: d}
	plans, eventPaths := p.plan(reservedNames(d))
	var b body
	b.w("\n#variable_conflict use_column\nDECLARE\n  arr__i integer;\n")
	b.w("  arr__datas text[] := pg_catalog.string_to_array(arr__datas_joined, E'\\x1e');\n")
	b.w("  arr__metadatas text[] := pg_catalog.string_to_array(arr__metadatas_joined, E'\\x1e');\n")
	for i := range p.paths {
		b.w(fmt.Sprintf("  arr__p%ds text[] := pg_catalog.string_to_array(arr__paths_joined[%d], E'\\x1e', '');\n", i+1, i+1))
	}
	for _, n := range eventPaths {
		b.w(fmt.Sprintf("  arr__p%d jsonb;\n", n))
	}
	for i, n := range eventNames {
		b.w(fmt.Sprintf("  arr__%s %s;\n", n, eventTypes[i]))
	}
	b.w("BEGIN\n")
	var perEvent, perBatch []*Section
	for si := range d.Sections {
		if s := &d.Sections[si]; s.Batch {
			perBatch = append(perBatch, s)
		} else {
			perEvent = append(perEvent, s)
		}
	}
	if len(perEvent) > 0 {
		p.emitPerEvent(&b, perEvent, plans, eventPaths)
	}
	p.emitPerBatch(&b, perBatch, plans)
	b.w("END\n")
	p.apply = b.String()
	for _, pl := range plans {
		if pl.pushed {
			p.eventsPaths = eventsPathsSig(len(p.paths))
			break
		}
	}
	return p
}

// reservedNames are the words of d's DDL, with data and metadata among
// them if the DDL uses arr's own prefix arr__: a statement naming one of
// them keeps the whole JSON (see paths.go).
func reservedNames(d *Definition) map[string]bool {
	reserved := map[string]bool{}
	for _, st := range d.DDL {
		for _, t := range tokenize(st.Text) {
			if w := t.ident(); w != "" {
				reserved[w] = true
				if strings.HasPrefix(w, "arr__") {
					reserved["data"], reserved["metadata"] = true, true
				}
			}
		}
	}
	return reserved
}

// plan is how a statement reads :data and :metadata: the chains arr
// finds in the JSON, and for a batch statement whether it reads chains
// only (pushed).
type plan struct {
	reads  []read
	pushed bool
}

// plan finds, for each statement, the chains it reads (adding their paths
// to p) and whether it reads data or metadata whole; eventPaths are the
// paths arr:on statements read.
func (p *program) plan(reserved map[string]bool) (plans map[*Statement]plan, eventPaths []int) {
	plans = map[*Statement]plan{}
	for si := range p.def.Sections {
		s := &p.def.Sections[si]
		for i := range s.Statements {
			st := &s.Statements[i]
			if s.Batch {
				reads, ok := batchReads(*st, func(w string) bool { return reserved[w] })
				if !ok {
					p.data, p.metadata = true, true
					continue
				}
				for _, r := range reads {
					p.pathIndex(r.path)
				}
				plans[st] = plan{reads: reads, pushed: true}
				continue
			}
			reads, full := eventReads(*st)
			if reserved["data"] || reserved["metadata"] {
				reads, full = nil, map[string]bool{"data": true, "metadata": true}
			}
			p.data, p.metadata = p.data || full["data"], p.metadata || full["metadata"]
			for _, r := range reads {
				if n := p.pathIndex(r.path); !slices.Contains(eventPaths, n) {
					eventPaths = append(eventPaths, n)
				}
			}
			plans[st] = plan{reads: reads}
		}
	}
	return plans, eventPaths
}

// body is arr_apply's body being written, with its line count.
type body struct {
	strings.Builder
	line int // the line being written, 1-based
}

func (b *body) w(s string) {
	if b.line == 0 {
		b.line = 1
	}
	b.WriteString(s)
	b.line += strings.Count(s, "\n")
}

// emit writes statement st with its replacements, and notes where it is.
func (p *program) emit(b *body, what string, st Statement, reps []replacement) {
	text, m := rewriteSpans(st.Text, reps)
	if b.line == 0 {
		b.line = 1
	}
	first := b.line
	b.w(text + "\n;\n")
	p.at = append(p.at, placed{first: first, last: b.line - 1, what: what, st: st, text: text, m: m})
}

// emitPerEvent writes the loop over the batch's events that runs each
// arr:on section's statements for the events of its types.
func (p *program) emitPerEvent(b *body, sections []*Section, plans map[*Statement]plan, eventPaths []int) {
	b.w("FOR arr__i IN 1 .. coalesce(pg_catalog.array_length(arr__positions, 1), 0) LOOP\n")
	for i, n := range eventNames {
		if n == "data" && !p.data || n == "metadata" && !p.metadata {
			continue
		}
		b.w(fmt.Sprintf("  arr__%s := arr__%ss[arr__i]::%s;\n", n, n, eventTypes[i]))
	}
	for _, n := range eventPaths {
		b.w(fmt.Sprintf("  arr__p%d := arr__p%ds[arr__i]::jsonb;\n", n, n))
	}
	for _, s := range sections {
		b.w("  IF arr__type = ANY (" + typeArray(s.Types) + ") THEN\n")
		for i := range s.Statements {
			st := &s.Statements[i]
			var reps []replacement
			for _, r := range plans[st].reads {
				reps = append(reps, replacement{r.start, r.end, pathValue("", p.pathIndex(r.path), r.text)})
			}
			for _, bd := range st.Binds {
				reps = append(reps, replacement{bd.Offset, bd.Offset + 1 + len(bd.Name), "arr__" + bd.Name})
			}
			p.emit(b, fmt.Sprintf("%s, statement %d", s.Directive(), i+1), *st, reps)
		}
		b.w("  END IF;\n")
	}
	b.w("END LOOP;\n")
}

// emitPerBatch writes each arr:batch section's statements, run once if
// the batch holds an event of its types, over :events.
func (p *program) emitPerBatch(b *body, sections []*Section, plans map[*Statement]plan) {
	var pathArgs strings.Builder
	for i := range p.paths {
		fmt.Fprintf(&pathArgs, ", arr__p%ds", i+1)
	}
	for _, s := range sections {
		b.w("IF arr__types && " + typeArray(s.Types) + " THEN\n")
		for i := range s.Statements {
			st := &s.Statements[i]
			pl := plans[st]
			call := "arr_events(" + typeArray(s.Types) + ", " + batchArgs + ")"
			if pl.pushed {
				call = "arr_events_paths(" + typeArray(s.Types) + ", " + baseArgs + pathArgs.String() + ")"
			}
			var reps []replacement
			for _, r := range pl.reads {
				reps = append(reps, replacement{r.start, r.end, pathValue(r.qual, p.pathIndex(r.path), r.text)})
			}
			for _, bd := range st.Binds {
				reps = append(reps, replacement{bd.Offset, bd.Offset + 1 + len(bd.Name), call})
			}
			p.emit(b, fmt.Sprintf("%s, statement %d", s.Directive(), i+1), *st, reps)
		}
		b.w("END IF;\n")
	}
}

// pathValue is what replaces a chain: the path's value, qualified as the
// chain's column was, or its text for a chain ending in ->>.
func pathValue(qual string, n int, text bool) string {
	v := fmt.Sprintf("arr__p%d", n)
	if qual != "" {
		v = qual + "." + v
	}
	if text {
		return "(" + v + " OPERATOR(pg_catalog.#>>) '{}'::text[])"
	}
	return "(" + v + ")"
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
	reps := make([]replacement, len(st.Binds))
	for i, bd := range st.Binds {
		reps[i] = replacement{bd.Offset, bd.Offset + 1 + len(bd.Name), repl(bd.Name)}
	}
	return rewriteSpans(st.Text, reps)
}

// replacement puts text in place of [start, end) of a statement.
type replacement struct {
	start, end int
	text       string
}

// rewriteSpans makes the replacements in text; one that overlaps an
// earlier one (a bound name inside a chain already replaced) is dropped.
func rewriteSpans(text string, reps []replacement) (string, offsetMap) {
	reps = slices.Clone(reps)
	slices.SortStableFunc(reps, func(a, b replacement) int { return a.start - b.start })
	var b strings.Builder
	var m offsetMap
	at := 0
	for _, r := range reps {
		if r.start < at {
			continue
		}
		b.WriteString(text[at:r.start])
		// A replacement never joins the text around it into one token
		// (`$A:data$` must not become the dollar tag `$Aarr__data$`, nor
		// `$A:data` the tag opener `$A$7`): where a character that can
		// continue a word or a dollar tag touches it, a space goes between.
		rt := r.text
		if r.start > 0 && identPart(text[r.start-1]) {
			rt = " " + rt
		}
		if r.end < len(text) && identPart(text[r.end]) {
			rt += " "
		}
		m = append(m, span{newOff: b.Len(), newLen: len(rt), oldOff: r.start, oldLen: r.end - r.start})
		b.WriteString(rt)
		at = r.end
	}
	b.WriteString(text[at:])
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
		`CREATE FUNCTION ` + s + `.arr_query(arr__sql text, arr__limit bigint) RETURNS SETOF text LANGUAGE plpgsql SECURITY DEFINER AS ` + dollarQuote(queryBody),
		`CREATE FUNCTION ` + s + `.arr_events(arr__only text[], ` + batchParams + `)
RETURNS TABLE ("position" bigint, type text, stream text, version bigint, schema_version integer, recorded_at timestamptz, data jsonb, metadata jsonb)
LANGUAGE sql STABLE AS ` + dollarQuote(eventsBody),
	}
	out = append(out, give(s, role, execFn.sig(), queryFn.sig(), eventsSig)...)
	if p != nil {
		out = append(out, applyFunction(schema, role, p)...)
	}
	return out
}

// applyFunction creates p's arr_apply in schema, given to role.
func applyFunction(schema, role string, p *program) []string {
	s := pgx.Identifier{schema}.Sanitize()
	var out []string
	if p.eventsPaths != "" {
		out = append(out, eventsPathsFunction(s, len(p.paths)))
		out = append(out, give(s, role, p.eventsPaths)...)
	}
	out = append(out, `CREATE FUNCTION `+s+`.arr_apply(`+applyParams+`) RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS `+dollarQuote(p.apply))
	return append(out, give(s, role, p.applyFn().sig())...)
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
