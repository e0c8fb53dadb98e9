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

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
)

// Projection is a SQL projection as the runner keeps it: a
// projections.Projection whose spec reads its event types as JSON
// (Spec.JSON), builds its schema as its role (Spec.BuildSchema) and runs
// its transactions in sessions of that role (Spec.TxPool,
// Spec.SessionRole). Safe for concurrent use.
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

// Spec implements projections.Projection: the name the definition gives;
// as DDL the definition file, with the version of the compiler that runs
// it (the runner rebuilds the read model when either changes); the types
// the sections name, read as JSON; transactions each in a session that
// logs in as the projection's role (session.go).
func (p *Projection) Spec() projections.Spec {
	return projections.Spec{
		Name:        p.def.Name,
		DDL:         "-- arr:compiler " + strconv.Itoa(compilerVersion) + "\n" + p.def.SQL,
		JSON:        &projections.JSONHandler{Types: p.def.Types(), Apply: p.apply},
		TxPool:      sessions{e: p.e, role: p.g.role},
		SessionRole: p.g.role,
		BuildSchema: p.buildSchema,
	}
}

// IsSQL reports whether s is a SQL projection's spec (Projection.Spec):
// the only projections that read their events as JSON.
func IsSQL(s projections.Spec) bool { return s.JSON != nil }

// buildSchema makes schema (the live one, or a rebuild's shadow) the
// projection's: as arr, the role (created if missing) and the schema,
// given to it, committed; then, in a session of the role, arr's functions
// and the definition's DDL.
func (p *Projection) buildSchema(ctx context.Context, schema string) error {
	spec, err := p.e.spec(ctx, p.g.role, p.def.Name, time.Time{})
	if err != nil {
		return err
	}
	if err := p.e.prepare(ctx, spec, schema); err != nil {
		return err
	}
	return p.e.asRole(ctx, p.g.role, pgx.TxOptions{}, func(tx pgx.Tx) error {
		return build(ctx, tx, schema, p.g, p.def, p.prog)
	})
}

// spec is what role (of projection, "" for a check's) is made, with a
// fresh verifier of its password.
func (e *Engine) spec(ctx context.Context, role, projection string, validUntil time.Time) (roleSpec, error) {
	pw, err := e.rolePassword(ctx, role)
	if err != nil {
		return roleSpec{}, err
	}
	v, err := scramVerifier(pw)
	if err != nil {
		return roleSpec{}, err
	}
	return roleSpec{role: role, projection: projection, verifier: v, validUntil: validUntil, limits: e.limits(), timeout: e.cfg.StatementTimeout}, nil
}

// roleSetupLock serializes, over every process on the database, the
// transactions that change the grants of projections' roles (setting one
// up, dropping one): they all update the one ACL row of each table the
// roles share with arr.
const roleSetupLock = `SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('arr-sqlproj-role'), 0)`

// prepare makes spec's role and schema, given to it, in a transaction of
// arr's that commits (a session can log in as the role only then): an
// existing schema of the name is dropped first.
func (e *Engine) prepare(ctx context.Context, spec roleSpec, schema string) error {
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		// One setup of a role at a time, of all roles: a setup grants and
		// revokes on the tables the roles share with arr, whose one ACL
		// row two concurrent setups would both update ("tuple concurrently
		// updated").
		if _, err := tx.Exec(ctx, roleSetupLock); err != nil {
			return err
		}
		if err := ensureRole(ctx, tx, spec); err != nil {
			return err
		}
		id := pgx.Identifier{schema}.Sanitize()
		for _, q := range []string{
			`DROP SCHEMA IF EXISTS ` + id + ` CASCADE`,
			`CREATE SCHEMA ` + id,
			`GRANT USAGE, CREATE ON SCHEMA ` + id + ` TO ` + pgx.Identifier{spec.role}.Sanitize(),
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("setting up %s for %s: %w", schema, spec.role, err)
	}
	return nil
}

// build makes schema g's in tx, a transaction of a session of g's role:
// arr's functions (arr_apply of prog unless nil), then the DDL of d, each
// statement measured against the schema's limit.
func build(ctx context.Context, tx pgx.Tx, schema string, g *guard, d *Definition, prog *program) error {
	if current, err := sessionUser(ctx, tx); err != nil || current != g.role {
		return fmt.Errorf("sqlproj: building %s in a session of %q, not of %s (%v)", schema, current, g.role, err)
	}
	if err := setSearchPath(ctx, tx, schema); err != nil {
		return err
	}
	for _, stmt := range functions(schema, g.role, prog) {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("creating arr's functions in %s: %w", schema, err)
		}
	}
	for i, st := range d.DDL {
		what := fmt.Sprintf("DDL statement %d", i+1)
		if err := g.call(ctx, tx, schema, execFn, nil, st.Text); err != nil {
			return d.stmtError(what, st, nil, "", st.Text, err)
		}
		if err := g.measure(ctx, tx, schema); err != nil {
			return d.stmtError(what, st, nil, "", st.Text, err)
		}
	}
	return nil
}

// apply runs the definition's statements over events as the role (see
// compile). Each event's data is its payload at its type's current schema
// version, through the registry (Event.Current). What a statement reads
// by chains of -> and ->> (see paths.go) is found here, in the JSON;
// the whole data and metadata go only when a statement reads them whole.
func (p *Projection) apply(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
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
	start := time.Now()
	err = p.g.call(ctx, tx, schema, p.prog.applyFn(), nil, args...)
	if err == nil {
		err = p.g.measure(ctx, tx, schema)
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			if pl, ok := p.prog.locate(pgErr.Where); ok {
				err = p.def.stmtError(pl.what, pl.st, pl.m, "", pl.text, err)
			}
		}
		return untrusted(ctx, tx.Conn().IsClosed(), time.Since(start), p.g.timeout, err)
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
