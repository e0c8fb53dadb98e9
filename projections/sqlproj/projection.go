package sqlproj

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
)

// Projection is a SQL projection as the runner keeps it: a
// projections.Projection that reads only its event types (EventFilter),
// builds its schema as its role (SchemaBuilder) and runs its transactions
// on the engine's pool (TxPooler). Safe for concurrent use.
type Projection struct {
	e    *Engine
	def  *Definition
	prog *program
	g    *guard
}

// Projection makes the projection of a parsed definition.
func (e *Engine) Projection(d *Definition) *Projection {
	return &Projection{e: e, def: d, prog: compile(d), g: e.guard(d.Name)}
}

// Definition is the projection's parsed definition.
func (p *Projection) Definition() *Definition { return p.def }

// Name is the name the definition gives.
func (p *Projection) Name() string { return p.def.Name }

// DDL is the definition file, with the version of the compiler that runs
// it: the runner rebuilds the read model when either changes.
func (p *Projection) DDL() string {
	return "-- arr:compiler " + strconv.Itoa(compilerVersion) + "\n" + p.def.SQL
}

// EventTypes are the types the sections name.
func (p *Projection) EventTypes() []string { return p.def.Types() }

// TxPool is the engine's pool (see projections.TxPooler).
func (p *Projection) TxPool() *pgxpool.Pool { return p.e.tx }

// BuildSchema gives schema to the projection's role and runs the
// definition's DDL in it, as the role.
func (p *Projection) BuildSchema(ctx context.Context, tx pgx.Tx, schema string) error {
	return build(ctx, tx, schema, p.g, p.def, p.prog)
}

// build sets schema up for g's role: the role (created if missing), its
// rights on schema, arr's functions (arr_apply of prog unless nil) and,
// run as the role, the DDL of d.
func build(ctx context.Context, tx pgx.Tx, schema string, g *guard, d *Definition, prog *program) error {
	k1, k2 := g.lockKeys()
	if _, err := tx.Exec(ctx, `SELECT pg_catalog.pg_advisory_xact_lock($1, $2)`, k1, k2); err != nil {
		return err
	}
	if err := ensureRole(ctx, tx, g.role); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `GRANT USAGE, CREATE ON SCHEMA `+pgx.Identifier{schema}.Sanitize()+` TO `+pgx.Identifier{g.role}.Sanitize()); err != nil {
		return fmt.Errorf("giving %s to %s: %w", schema, g.role, err)
	}
	for _, stmt := range functions(schema, g.role, prog) {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("creating arr's functions in %s: %w", schema, err)
		}
	}
	for i, st := range d.DDL {
		if err := g.call(ctx, tx, schema, execFn, false, nil, st.Text); err != nil {
			return d.stmtError(fmt.Sprintf("DDL statement %d", i+1), st, nil, "", st.Text, err)
		}
	}
	return nil
}

// ReadsJSON makes the projection a projections.JSONReader: it hands each
// event's JSON to PostgreSQL as it is.
func (p *Projection) ReadsJSON() {}

// Apply runs the definition's statements over events as the role (see
// compile). Each event's data is its payload at its type's current schema
// version, through the registry (Event.Current). What a statement reads
// by chains of -> and ->> (see paths.go) is found here, in the JSON;
// the whole data and metadata go only when a statement reads them whole.
func (p *Projection) Apply(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
	var schema string
	if err := tx.QueryRow(ctx, `SELECT pg_catalog.current_schema()::text`).Scan(&schema); err != nil {
		return err
	}
	if live := projections.Schema(p.def.Name); schema != live && schema != live+"__shadow" {
		return fmt.Errorf("sqlproj: %s applied with search_path on %s", p.def.Name, schema)
	}
	args, err := p.encode(events)
	if err != nil {
		return err
	}
	err = p.g.call(ctx, tx, schema, p.prog.applyFn(), false, nil, args...)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			if pl, ok := p.prog.locate(pgErr.Where); ok {
				return p.def.stmtError(pl.what, pl.st, pl.m, "", pl.text, err)
			}
		}
		return err
	}
	return nil
}

// encode is arr_apply's arguments for events (applyParams): one array
// per bound name, data and metadata each joined into one text (when a
// statement reads them whole), and one joined text per path of the
// program, each event's value found in its JSON.
func (p *Projection) encode(events []projections.Event) ([]any, error) {
	n := len(events)
	var (
		positions   = make([]int64, n)
		types       = make([]string, n)
		streams     = make([]string, n)
		versions    = make([]int64, n)
		schemaVers  = make([]int32, n)
		recordedAts = make([]time.Time, n)
		datas       []byte
		metadatas   []byte
		paths       = make([][]byte, len(p.prog.paths))
		meta        []byte // an event's metadata JSON
	)
	// Metadata is encoded only for a statement that reads it.
	readsMeta := p.prog.metadata
	for _, pa := range p.prog.paths {
		readsMeta = readsMeta || pa.root == "metadata"
	}
	if p.prog.data {
		size := 0
		for _, e := range events {
			size += len(e.Current) + 1
		}
		datas = make([]byte, 0, size)
	}
	for i, e := range events {
		if e.Current == nil {
			return nil, fmt.Errorf("event %d (%s): no payload decoded", e.Position, e.Type)
		}
		if bytes.IndexByte(e.Current, separator[0]) >= 0 {
			return nil, fmt.Errorf("event %d (%s): its JSON holds a raw U+001E", e.Position, e.Type)
		}
		if readsMeta {
			meta = eventstore.AppendMetadataJSON(meta[:0], e.Metadata)
			if bytes.IndexByte(meta, separator[0]) >= 0 {
				return nil, fmt.Errorf("event %d (%s): its metadata holds a raw U+001E", e.Position, e.Type)
			}
		}
		if i > 0 {
			if p.prog.data {
				datas = append(datas, separator...)
			}
			if p.prog.metadata {
				metadatas = append(metadatas, separator...)
			}
			for k := range paths {
				paths[k] = append(paths[k], separator...)
			}
		}
		if p.prog.data {
			datas = append(datas, e.Current...)
		}
		if p.prog.metadata {
			metadatas = append(metadatas, meta...)
		}
		for k, pa := range p.prog.paths {
			doc := []byte(e.Current)
			if pa.root == "metadata" {
				doc = meta
			}
			v, ok, err := valueAt(doc, pa.keys)
			if err != nil {
				return nil, fmt.Errorf("event %d (%s): reading %s: %w", e.Position, e.Type, pa.root, err)
			}
			if ok {
				paths[k] = append(paths[k], v...)
			}
		}
		positions[i], types[i], streams[i], versions[i] = int64(e.Position), e.Type, e.StreamID, int64(e.StreamVersion)
		schemaVers[i], recordedAts[i] = int32(e.CurrentVersion), e.RecordedAt
	}
	var dataArg, metadataArg *string
	if p.prog.data {
		s := string(datas)
		dataArg = &s
	}
	if p.prog.metadata {
		s := string(metadatas)
		metadataArg = &s
	}
	pathArgs := make([]string, len(paths))
	for k, b := range paths {
		pathArgs[k] = string(b)
	}
	return []any{positions, types, streams, versions, schemaVers, recordedAts, dataArg, metadataArg, pathArgs}, nil
}
