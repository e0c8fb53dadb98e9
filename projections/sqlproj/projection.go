package sqlproj

import (
	"bytes"
	"context"
	"encoding/json"
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
		if err := g.call(ctx, tx, schema, execSig, execBody, false, nil, st.Text); err != nil {
			return d.stmtError(fmt.Sprintf("DDL statement %d", i+1), st, nil, "", st.Text, err)
		}
	}
	return nil
}

// Apply runs the definition's statements over events as the role (see
// compile). Each event's data is its payload decoded through the
// registry at its type's current schema version, as JSON.
func (p *Projection) Apply(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
	var schema string
	if err := tx.QueryRow(ctx, `SELECT pg_catalog.current_schema()::text`).Scan(&schema); err != nil {
		return err
	}
	if live := projections.Schema(p.def.Name); schema != live && schema != live+"__shadow" {
		return fmt.Errorf("sqlproj: %s applied with search_path on %s", p.def.Name, schema)
	}
	n := len(events)
	var (
		positions   = make([]int64, n)
		types       = make([]string, n)
		streams     = make([]string, n)
		versions    = make([]int64, n)
		schemaVers  = make([]int32, n)
		recordedAts = make([]time.Time, n)
		size        int
	)
	for _, e := range events {
		size += len(e.Data) + 1
	}
	datas := make([]byte, 0, size)
	metadatas := make([]byte, 0, 64*n)
	for i, e := range events {
		if e.Payload == nil {
			return fmt.Errorf("event %d (%s): no payload decoded", e.Position, e.Type)
		}
		// An event recorded at its type's current version reaches the SQL
		// as recorded (the registry decoded it, so it is that version's
		// JSON); an older one as the registry upcast it.
		data := []byte(e.Data)
		if e.SchemaVersion != e.Payload.SchemaVersion() {
			var err error
			if data, err = json.Marshal(e.Payload); err != nil {
				return fmt.Errorf("event %d (%s): %w", e.Position, e.Type, err)
			}
		}
		if bytes.IndexByte(data, separator[0]) >= 0 {
			return fmt.Errorf("event %d (%s): its JSON holds a raw U+001E", e.Position, e.Type)
		}
		if i > 0 {
			datas, metadatas = append(datas, separator...), append(metadatas, separator...)
		}
		datas = append(datas, data...)
		metadatas = eventstore.AppendMetadataJSON(metadatas, e.Metadata)
		positions[i], types[i], streams[i], versions[i] = int64(e.Position), e.Type, e.StreamID, int64(e.StreamVersion)
		schemaVers[i], recordedAts[i] = int32(e.Payload.SchemaVersion()), e.RecordedAt
	}
	err := p.g.call(ctx, tx, schema, applySig, p.prog.apply, false, nil, positions, types, streams, versions, schemaVers, recordedAts, string(datas), string(metadatas))
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
