package recordsapi

import (
	"sync"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/projections/identity"
)

// Concurrency of exports: one per account (all of its keys together),
// exportSlots per process. An export holds a database connection and a
// snapshot for as long as it is sent, so a process never runs more than a
// few, and one account, however many keys it mints, never takes more than
// one of them.
const (
	exportSlots = 2
	// exportRetryAfter is the Retry-After of an export refused for
	// concurrency, in seconds.
	exportRetryAfter = 30
)

// exportGate admits at most one export per account and a fixed number per
// process at once. Safe for concurrent use.
type exportGate struct {
	mu    sync.Mutex
	slots int
	// running is the key of the export each account runs, by account.
	running map[uuid.UUID]uuid.UUID
}

func newExportGate(slots int) *exportGate {
	return &exportGate{slots: slots, running: map[uuid.UUID]uuid.UUID{}}
}

// enter admits an export of p's account, or refuses it with a 429 that
// says why; leave gives its place back.
func (g *exportGate) enter(p identity.Principal) (leave func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if key, ok := g.running[p.AccountID]; ok {
		which := "another of its keys"
		if key == p.KeyID {
			which = "this key"
		}
		return nil, exportBusy{domain.RateLimited("export_in_progress",
			"this account already has an export running (started with %s); an account runs one export at a time, whichever key asks: wait for it to end, then retry (Retry-After: %d s)", which, exportRetryAfter)}
	}
	if len(g.running) >= g.slots {
		return nil, exportBusy{domain.RateLimited("exports_busy",
			"this server is running %d exports, as many as it runs at once; retry later (Retry-After: %d s)", g.slots, exportRetryAfter)}
	}
	g.running[p.AccountID] = p.KeyID
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			delete(g.running, p.AccountID)
		})
	}, nil
}

// exportBusy is an export refused for concurrency: a 429 whose
// Retry-After is exportRetryAfter.
type exportBusy struct{ err *domain.Error }

func (b exportBusy) Error() string          { return b.err.Error() }
func (b exportBusy) Unwrap() error          { return b.err }
func (b exportBusy) RetryAfterSeconds() int { return exportRetryAfter }
