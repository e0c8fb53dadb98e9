package projections

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

// Projection turns events into one read model. Implementations must be
// deterministic functions of the events they are given (no clocks, no
// randomness), so a rebuild yields the same tables.
type Projection interface {
	// Name is the checkpoint key and the schema suffix; never rename one
	// without meaning to replay it.
	Name() string
	// DDL creates the read model's tables, with unqualified names; it runs
	// with search_path set to the target schema.
	DDL() string
	// Apply applies a batch of events, in log order, inside tx (whose
	// search_path is the target schema). Events it does not care about are
	// ignored. Each event's Payload is its typed event, decoded through the
	// registry at its current schema version (older versions upcast), for
	// the types the projection names (EventFilter); a projection that names
	// none reads every event with a nil Payload; a JSONReader reads the
	// payloads as JSON (Event.Current).
	Apply(ctx context.Context, tx pgx.Tx, events []Event) error
}

// Event is an event of the log with its payload decoded: a pointer to its
// domain type (e.g. *usage.CallsCounted), or nil (see Projection.Apply);
// for a JSONReader, the payload's JSON at its current schema version.
type Event struct {
	eventstore.Event
	Payload domain.Event
	// Current is the payload as its type's current schema version's JSON
	// and CurrentVersion that version, for a JSONReader (Payload is then
	// nil); nil otherwise.
	Current        json.RawMessage
	CurrentVersion int
}

// JSONReader is an EventFilter that takes its events' payloads as JSON
// rather than as Go values: the runner gives it, for the types it names,
// each payload at its type's current schema version through the registry
// (domain.Registry.CurrentJSON: as stored when it is that version, else
// upcast) in Event.Current. A SQL projection hands the JSON to
// PostgreSQL; decoding it into Go values first would be thrown away.
type JSONReader interface {
	EventFilter
	ReadsJSON()
}

// decode decodes the events p names through reg. An event that does not
// decode fails the batch like one that does not apply: alone, it is
// parked (or, for a projection that fails closed, holds it).
func decode(reg *domain.Registry, p Projection, events []eventstore.Event) ([]Event, error) {
	out := make([]Event, len(events))
	f, filters := p.(EventFilter)
	var names []string
	if filters {
		names = f.EventTypes()
	}
	_, asJSON := p.(JSONReader)
	for i, e := range events {
		out[i].Event = e
		if !filters || !slices.Contains(names, e.Type) {
			continue
		}
		if asJSON {
			cur, v, err := reg.CurrentJSON(e.Type, e.SchemaVersion, e.Data)
			if err != nil {
				return nil, fmt.Errorf("event %d: %w", e.Position, err)
			}
			out[i].Current, out[i].CurrentVersion = cur, v
			continue
		}
		payload, err := reg.Decode(e.Type, e.SchemaVersion, e.Data)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", e.Position, err)
		}
		out[i].Payload = payload
	}
	return out, nil
}

// apply decodes events for p and applies them in tx.
func apply(ctx context.Context, tx pgx.Tx, reg *domain.Registry, p Projection, events []eventstore.Event) error {
	evs, err := decode(reg, p, events)
	if err != nil {
		return err
	}
	return p.Apply(ctx, tx, evs)
}

// IndexDeferrer is a Projection with secondary indexes that a rebuild
// creates after loading the shadow tables rather than maintaining them row by
// row (as pg_restore does). Live read models get them at once.
type IndexDeferrer interface {
	// DeferredDDL creates the secondary indexes, with unqualified names.
	DeferredDDL() string
}

func deferredDDL(p Projection) string {
	if d, ok := p.(IndexDeferrer); ok {
		return d.DeferredDDL()
	}
	return ""
}

// SchemaBuilder is a Projection that builds its tables itself instead of
// having the runner execute its DDL (a SQL projection, whose DDL runs in
// a session of a restricted role). BuildSchema makes schema (the live one
// or a rebuild's shadow) anew, dropping what was there, and commits it;
// the runner calls it outside any transaction of its own, holding the
// projection's setup lock. DDL still names the tables for the
// checkpoint's hash: a change of it rebuilds the read model.
type SchemaBuilder interface {
	BuildSchema(ctx context.Context, schema string) error
}

// TxPooler is a Projection whose transactions (applying batches, the
// batches of a rebuild, retrying parked events) run in sessions of its
// own instead of the runner's: a SQL projection's log in as its role, to
// run analyst SQL. The runner's statements in them touch only the
// projection's own rows of projection_checkpoints and projection_parked
// (which is all such a session may touch, migration 00060), named with
// their schema; what needs more (a rebuild's swap of schemas) the runner
// does in a transaction of its own around the projection's.
type TxPooler interface {
	TxPool() Beginner
}

// SessionRoler is a TxPooler whose sessions log in as a role of their
// own that may run none of arr's functions (a SQL projection's): its
// batches take no batch lock (pg_try_advisory_xact_lock is not the
// role's to run), and a batch of it left idle by a frozen process is
// found by the sessions' role instead (unstick).
type SessionRoler interface {
	SessionRole() string
}

func (r *Runner) txPool(p Projection) Beginner {
	if tp, ok := p.(TxPooler); ok {
		if pool := tp.TxPool(); pool != nil {
			return pool
		}
	}
	return r.pool
}

// Schema is the PostgreSQL schema that holds a projection's live tables.
func Schema(name string) string { return "rm_" + name }

func shadowSchema(name string) string { return "rm_" + name + "__shadow" }

func retiredSchema(name string) string { return "rm_" + name + "__retired" }

func ddlHash(p Projection) string {
	sum := sha256.Sum256([]byte(p.DDL() + "\n" + deferredDDL(p)))
	return hex.EncodeToString(sum[:8])
}

func checkName(p Projection) error {
	n := p.Name()
	ok := len(n) > 0 && len(n) <= 40 && n[0] >= 'a' && n[0] <= 'z'
	for _, c := range n {
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')
	}
	if !ok {
		return fmt.Errorf("projection name %q: use lowercase letters, digits and _", p.Name())
	}
	return nil
}

// setSearchPath points unqualified table names at schema for the rest of
// the transaction.
func setSearchPath(ctx context.Context, tx pgx.Tx, schema string) error {
	_, err := tx.Exec(ctx, "SELECT set_config('search_path', $1, true)", pgx.Identifier{schema}.Sanitize()+", public")
	return err
}

// BatchCutter is a projection whose events carry very different amounts of
// work (a chunk of 5,000 rows next to a one-row fact). The live runner asks
// it how many events of a batch to apply in one transaction, so a
// transaction stays bounded whatever the batch size in events. Rebuilds do
// not ask: their transactions write into a shadow schema nobody reads.
type BatchCutter interface {
	// Cut returns how many leading events of events (at least 1) make one
	// transaction.
	Cut(events []eventstore.Event) int
}

// EventFilter is a Projection that names the event types its Apply acts
// on. The runner then reads only those (the store does the filtering when
// it is an eventstore.TypeReader) and moves the checkpoint past the others
// without a transaction of their own. EventTypes must name every type Apply acts
// on; TestFiltersNameEveryAppliedType checks it.
type EventFilter interface {
	EventTypes() []string
}

func cut(p Projection, events []eventstore.Event) []eventstore.Event {
	if c, ok := p.(BatchCutter); ok && len(events) > 1 {
		n := c.Cut(events)
		return events[:max(1, min(n, len(events)))]
	}
	return events
}

// Beginner begins transactions: a *pgxpool.Pool does, and so does what a
// TxPooler gives.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// ErrStopped is what a projection's failure is (errors.Is) when the
// projection must not be retried: the runner records the fault (with the
// reason, which /healthz and status show), counts it in
// arr_projection_stopped and follows the projection no more until the
// process starts again. A SQL projection past its disk limit stops so.
var ErrStopped = errors.New("projection stopped")

// StoppedMarker begins the reason of a failure that is ErrStopped, as
// the fault records it: Health.Stopped reads it there.
const StoppedMarker = "stopped"
