package recordsapi

import (
	"sync"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// Concurrency of exports: one per key, exportSlots per process. An
// export holds a database connection and a snapshot for as long as it is
// sent, so a process never runs more than a few.
const (
	exportSlots = 2
	// exportRetryAfter is the Retry-After of an export refused for
	// concurrency, in seconds.
	exportRetryAfter = 30
)

// exportGate admits at most one export per key and a fixed number per
// process at once. Safe for concurrent use.
type exportGate struct {
	mu      sync.Mutex
	slots   int
	running map[uuid.UUID]bool
}

func newExportGate(slots int) *exportGate {
	return &exportGate{slots: slots, running: map[uuid.UUID]bool{}}
}

// enter admits an export of key, or refuses it with a 429 that says why;
// leave gives its place back.
func (g *exportGate) enter(key uuid.UUID) (leave func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running[key] {
		return nil, exportBusy{domain.RateLimited("export_in_progress",
			"this key already has an export running; a key runs one export at a time: wait for it to end, then retry (Retry-After: %d s)", exportRetryAfter)}
	}
	if len(g.running) >= g.slots {
		return nil, exportBusy{domain.RateLimited("exports_busy",
			"this server is running %d exports, as many as it runs at once; retry later (Retry-After: %d s)", g.slots, exportRetryAfter)}
	}
	g.running[key] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			delete(g.running, key)
		})
	}, nil
}

// exportBusy is an export refused for concurrency: a 429 whose
// Retry-After is exportRetryAfter.
type exportBusy struct{ err *domain.Error }

func (b exportBusy) Error() string          { return b.err.Error() }
func (b exportBusy) Unwrap() error          { return b.err }
func (b exportBusy) RetryAfterSeconds() int { return exportRetryAfter }
