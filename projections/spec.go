package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

// Projection is a read model as the runner takes it: its Spec, declared
// once. Implementations must be deterministic functions of the events
// they are given (no clocks, no randomness), so a rebuild yields the
// same tables.
type Projection interface {
	Spec() Spec
}

// Spec declares a projection: what it is called, the tables it builds,
// how it applies the events it reads and the options the runner honours.
// The event types it reads are those of its handlers (Handlers, Batch);
// exactly one of Handlers, Batch, JSON and AllEvents is set.
type Spec struct {
	// Name is the checkpoint key and the schema suffix; never rename one
	// without meaning to replay it.
	Name string
	// DDL creates the read model's tables, with unqualified names; it
	// runs with search_path set to the target schema.
	DDL string
	// DeferredDDL, when set, creates secondary indexes (unqualified
	// names) that a rebuild creates after loading the shadow tables
	// rather than maintaining them row by row (as pg_restore does). Live
	// read models get them at once.
	DeferredDDL string

	// Handlers apply the projection's events one at a time, in log
	// order, inside the batch's transaction (whose search_path is the
	// target schema): one handler per event type (On). The runner reads
	// only the events of these types, decoded through the registry at
	// their current schema version (older versions upcast), and moves
	// the checkpoint past the others without a transaction of their own.
	Handlers []Handler
	// Batch is Handlers for a projection that gathers a batch in memory
	// and writes it at once: it begins one batch, whose handlers gather
	// into it and whose Flush writes it. The runner calls it once per
	// transaction (and once when the projection is registered, for the
	// types of its handlers).
	Batch func() Batch
	// JSON applies whole batches whose payloads it takes as JSON rather
	// than as Go values, for event types known only at run time (a SQL
	// projection, which hands the JSON to PostgreSQL).
	JSON *JSONHandler
	// AllEvents applies whole batches of every event of the log, with nil
	// payloads (logstats counts them all).
	AllEvents func(ctx context.Context, tx pgx.Tx, events []Event) error

	// FailClosedChannel, when set, makes the projection fail closed: its
	// read model guards security (identity, which decides revocations
	// and plans), so it never parks an event, and while it cannot advance
	// its readers refuse rather than answer from it. The runner notifies
	// the channel (LISTEN/NOTIFY) when it records a fault or swaps in a
	// rebuild, so processes caching the read model drop it.
	FailClosedChannel string
	// Cut, for a projection whose events carry very different amounts of
	// work (a chunk of 5,000 rows next to a one-row fact), returns how
	// many leading events of a batch (at least 1) make one transaction, so
	// a live transaction stays bounded whatever the batch size in events.
	// Rebuilds do not ask: their transactions write into a shadow schema
	// nobody reads.
	Cut func(events []eventstore.Event) int
	// BatchTimeout, when set, is the time a live batch of events (as Cut
	// left it) needs, for a projection whose events carry very different
	// amounts of work (publishing a load of a million rows next to a
	// one-row fact): the batch gets the larger of it and the runner's
	// timeout (Config.BatchTimeout, or the longer one of a retry), at most
	// Config.MaxBatchTimeout. Without it a batch that needs longer than
	// the default is rolled back and retried from scratch until the
	// doubling timeout fits.
	BatchTimeout func(events []eventstore.Event) time.Duration
	// TxPool, when set, begins the projection's transactions (applying
	// batches, the batches of a rebuild, retrying parked events) in
	// sessions of its own instead of the runner's: a SQL projection's log
	// in as its role, to run analyst SQL. The runner's statements in them
	// touch only the projection's own rows of projection_checkpoints and
	// projection_parked (which is all such a session may touch, migration
	// 00060), named with their schema; what needs more (a rebuild's swap
	// of schemas) the runner does in a transaction of its own around the
	// projection's.
	TxPool Beginner
	// SessionRole, with TxPool, is the role the projection's sessions log
	// in as, which may run none of arr's functions (a SQL projection's):
	// its batches take no batch lock (pg_try_advisory_xact_lock is not the
	// role's to run), and a batch of it left idle by a frozen process is
	// found by the sessions' role instead (unstick).
	SessionRole string
	// BuildSchema, when set, builds the projection's tables instead of
	// the runner executing its DDL (a SQL projection, whose DDL runs in a
	// session of a restricted role): it makes schema (the live one or a
	// rebuild's shadow) anew, dropping what was there, and commits it; the
	// runner calls it outside any transaction of its own, holding the
	// projection's setup lock. DDL still names the tables for the
	// checkpoint's hash: a change of it rebuilds the read model.
	BuildSchema func(ctx context.Context, schema string) error
}

// Handler applies the events of one type: see On.
type Handler struct {
	eventType string
	apply     func(ctx context.Context, tx pgx.Tx, ev Event) error
}

// On returns the handler of the events of type T: fn gets each one with
// its payload, decoded by the registry (as watermill's NewEventHandler[T]
// has it).
func On[T any, P interface {
	*T
	domain.Event
}](fn func(ctx context.Context, tx pgx.Tx, ev Event, payload *T) error) Handler {
	name := P(new(T)).EventType()
	return Handler{eventType: name, apply: func(ctx context.Context, tx pgx.Tx, ev Event) error {
		payload, ok := ev.Payload.(P)
		if !ok {
			return fmt.Errorf("event %d: payload %T is not a %s", ev.Position, ev.Payload, name)
		}
		return fn(ctx, tx, ev, payload)
	}}
}

// EventType is the type of the events h handles.
func (h Handler) EventType() string { return h.eventType }

// Batch is one batch of a Spec.Batch projection: its handlers gather the
// batch's events; Flush, when set, writes what they gathered, after the
// last of them.
type Batch struct {
	Handlers []Handler
	Flush    func(ctx context.Context, tx pgx.Tx) error
}

// JSONHandler applies whole batches of the events of Types, each with its
// payload as its type's current schema version's JSON (domain.Registry.
// CurrentJSON: as stored when it is that version, else upcast) in
// Event.Current and nil Payload.
type JSONHandler struct {
	Types []string
	Apply func(ctx context.Context, tx pgx.Tx, events []Event) error
}

// Event is an event of the log with its payload decoded: a pointer to its
// domain type (e.g. *usage.CallsCounted) for Handlers and Batch, nil for
// AllEvents and JSON.
type Event struct {
	eventstore.Event
	Payload domain.Event
	// Current is the payload as its type's current schema version's JSON
	// and CurrentVersion that version, for a JSON projection (Payload is
	// then nil); nil otherwise.
	Current        json.RawMessage
	CurrentVersion int
}

// Apply applies events (decoded as the runner decodes them) with s's
// handlers, in tx: what the runner does with a batch, for tests that
// apply one by hand.
func (s Spec) Apply(ctx context.Context, tx pgx.Tx, events []Event) error {
	c, err := compile(s)
	if err != nil {
		return err
	}
	return c.apply(ctx, tx, events)
}

// Reads returns the event types the projection reads: its handlers'
// (JSON's for a JSON projection), nil for one that reads every event
// (AllEvents). It fails as NewRunner does for a spec it refuses.
func (s Spec) Reads() ([]string, error) {
	c, err := compile(s)
	if err != nil {
		return nil, err
	}
	return c.types, nil
}

// compiled is a Spec as the runner holds it: its handlers by type and the
// types it reads.
type compiled struct {
	Spec
	// filtered says the projection reads only types (every event
	// otherwise); asJSON that it takes payloads as JSON.
	filtered, asJSON bool
	types            []string
	handlers         map[string]Handler
}

// compile checks s and indexes its handlers.
func compile(s Spec) (*compiled, error) {
	if err := checkName(s.Name); err != nil {
		return nil, err
	}
	c, err := index(s)
	if err != nil {
		return nil, fmt.Errorf("projections: %s: %w", s.Name, err)
	}
	return c, nil
}

// index indexes the handlers of s, a spec with a valid name.
func index(s Spec) (c *compiled, err error) {
	set := 0
	for _, ok := range []bool{s.Handlers != nil, s.Batch != nil, s.JSON != nil, s.AllEvents != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return nil, errors.New("a spec sets exactly one of Handlers, Batch, JSON and AllEvents")
	}
	c = &compiled{Spec: s, filtered: s.AllEvents == nil, asJSON: s.JSON != nil}
	switch {
	case s.JSON != nil:
		if s.JSON.Apply == nil {
			return nil, errors.New("JSON without Apply")
		}
		c.types = s.JSON.Types
	case s.Batch != nil:
		c.handlers, c.types, err = byEventType(s.Batch().Handlers)
	case s.Handlers != nil:
		c.handlers, c.types, err = byEventType(s.Handlers)
	}
	return c, err
}

// byEventType maps handlers by their event type.
func byEventType(hs []Handler) (map[string]Handler, []string, error) {
	if len(hs) == 0 {
		return nil, nil, errors.New("no handlers")
	}
	m := make(map[string]Handler, len(hs))
	types := make([]string, 0, len(hs))
	for _, h := range hs {
		if _, dup := m[h.eventType]; dup {
			return nil, nil, fmt.Errorf("two handlers of %s", h.eventType)
		}
		m[h.eventType] = h
		types = append(types, h.eventType)
	}
	return m, types, nil
}

// apply applies decoded events with c's handlers in tx.
func (c *compiled) apply(ctx context.Context, tx pgx.Tx, events []Event) error {
	switch {
	case c.JSON != nil:
		return c.JSON.Apply(ctx, tx, events)
	case c.AllEvents != nil:
		return c.AllEvents(ctx, tx, events)
	case c.Batch != nil:
		b := c.Batch()
		if err := dispatch(ctx, tx, byType(b.Handlers), events); err != nil {
			return err
		}
		if b.Flush == nil {
			return nil
		}
		return b.Flush(ctx, tx)
	}
	return dispatch(ctx, tx, c.handlers, events)
}

func byType(hs []Handler) map[string]Handler {
	m := make(map[string]Handler, len(hs))
	for _, h := range hs {
		m[h.eventType] = h
	}
	return m
}

// dispatch hands each event to the handler of its type; events of other
// types are ignored.
func dispatch(ctx context.Context, tx pgx.Tx, hs map[string]Handler, events []Event) error {
	for _, ev := range events {
		h, ok := hs[ev.Type]
		if !ok {
			continue
		}
		if err := h.apply(ctx, tx, ev); err != nil {
			return err
		}
	}
	return nil
}
