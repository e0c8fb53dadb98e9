package projections

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

// decode decodes the events p reads through reg. An event that does not
// decode fails the batch like one that does not apply: alone, it is
// parked (or, for a projection that fails closed, holds it).
func decode(reg *domain.Registry, p *compiled, events []eventstore.Event) ([]Event, error) {
	out := make([]Event, len(events))
	parts := decodeParts(events)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := k*len(events)/parts, (k+1)*len(events)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = decodeInto(reg, p, events[lo:hi], out[lo:hi])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// unmarshalV1 is encoding/json's Unmarshal (its options: names matched
// without regard to case, duplicate names and invalid UTF-8 allowed, ...)
// as go-json-experiment implements it, three times as fast on a chunk of
// a load's rows.
func unmarshalV1(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, jsonv1.DefaultOptionsV1())
}

// parallelDecodeBytes is the payload bytes from which a batch is decoded
// on every core: a batch of a bulk load's row chunks (tens of megabytes
// of JSON) decodes in a fraction of the time, while the database, which
// waits for it, is idle anyway.
const parallelDecodeBytes = 1 << 20

// decodeParts is how many parts, decoded side by side, events make.
func decodeParts(events []eventstore.Event) int {
	n := 0
	for _, e := range events {
		n += len(e.Data)
	}
	if n < parallelDecodeBytes {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), len(events)))
}

// decodeInto decodes events into out (as long) in order, failing at the
// first event that does not decode.
func decodeInto(reg *domain.Registry, p *compiled, events []eventstore.Event, out []Event) error {
	for i, e := range events {
		out[i].Event = e
		if !p.filtered || !slices.Contains(p.types, e.Type) {
			continue
		}
		if p.asJSON {
			cur, v, err := reg.CurrentJSON(e.Type, e.SchemaVersion, e.Data)
			if err != nil {
				return fmt.Errorf("event %d: %w", e.Position, err)
			}
			out[i].Current, out[i].CurrentVersion = cur, v
			continue
		}
		payload, err := reg.Decode(e.Type, e.SchemaVersion, e.Data)
		if err != nil {
			return fmt.Errorf("event %d: %w", e.Position, err)
		}
		out[i].Payload = payload
	}
	return nil
}

// apply decodes events for p and applies them in tx.
func apply(ctx context.Context, tx pgx.Tx, reg *domain.Registry, p *compiled, events []eventstore.Event) error {
	evs, err := decode(reg, p, events)
	if err != nil {
		return err
	}
	return p.apply(ctx, tx, evs)
}

func (r *Runner) txPool(p *compiled) Beginner {
	if p.TxPool != nil {
		return p.TxPool
	}
	return r.pool
}

// Schema is the PostgreSQL schema that holds a projection's live tables.
func Schema(name string) string { return "rm_" + name }

func shadowSchema(name string) string { return "rm_" + name + "__shadow" }

func retiredSchema(name string) string { return "rm_" + name + "__retired" }

func ddlHash(p *compiled) string {
	sum := sha256.Sum256([]byte(p.DDL + "\n" + p.DeferredDDL))
	return hex.EncodeToString(sum[:8])
}

func checkName(n string) error {
	ok := len(n) > 0 && len(n) <= 40 && n[0] >= 'a' && n[0] <= 'z'
	for _, c := range n {
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')
	}
	if !ok {
		return fmt.Errorf("projection name %q: use lowercase letters, digits and _", n)
	}
	return nil
}

// setSearchPath points unqualified table names at schema for the rest of
// the transaction.
func setSearchPath(ctx context.Context, tx pgx.Tx, schema string) error {
	_, err := tx.Exec(ctx, "SELECT set_config('search_path', $1, true)", pgx.Identifier{schema}.Sanitize()+", public")
	return err
}

func cut(p *compiled, events []eventstore.Event) []eventstore.Event {
	if p.Cut != nil && len(events) > 1 {
		n := p.Cut(events)
		return events[:max(1, min(n, len(events)))]
	}
	return events
}

// Beginner begins transactions: a *pgxpool.Pool does, and so does a Spec's
// TxPool. BeginTx honours opts.BeginQuery, which a batch uses to set its
// session's bounds in the round trip that opens it (beginBatch).
type Beginner interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
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
