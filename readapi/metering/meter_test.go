package metering_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/readapi/metering"
)

func newStore(t testing.TB) eventstore.Store {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func newHandler(t testing.TB, st eventstore.Store) *commands.CountCallsHandler {
	t.Helper()
	h, err := commands.NewCountCallsHandler(st, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type slot struct {
	key uuid.UUID
	day string
}

// logged sums the CallsCounted events in the log per key and day, and
// counts the events.
func logged(t testing.TB, st eventstore.Store) (map[slot]int64, int) {
	t.Helper()
	evs, err := st.ReadAll(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[slot]int64{}
	n := 0
	for _, e := range evs {
		if e.Type != "CallsCounted" {
			continue
		}
		var v usage.CallsCounted
		if err := json.Unmarshal(e.Data, &v); err != nil {
			t.Fatal(err)
		}
		if e.StreamID != usage.StreamID(v.AccountID, v.Day) {
			t.Fatalf("event in stream %s, want %s", e.StreamID, usage.StreamID(v.AccountID, v.Day))
		}
		out[slot{v.KeyID, v.Day}] += v.Calls
		n++
	}
	return out, n
}

func run(t testing.TB, m *metering.Meter) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// TestCountsAddUp: counts from many goroutines end up in the log exactly,
// per key and UTC day, in fewer events than requests.
func TestCountsAddUp(t *testing.T) {
	st := newStore(t)
	m, err := metering.New(newHandler(t, st), metering.Config{})
	if err != nil {
		t.Fatal(err)
	}
	stop := run(t, m)
	acct := uuid.New()
	ps := []identity.Principal{
		{AccountID: acct, KeyID: uuid.New(), Service: account.Gateway},
		{AccountID: acct, KeyID: uuid.New(), Service: account.Records},
		{AccountID: uuid.New(), KeyID: uuid.New(), Service: account.Answer},
	}
	days := []time.Time{time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC), time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
	want := map[slot]int64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 50; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				p, at := ps[(g+i)%len(ps)], days[i%2]
				m.Count(p, at)
				mu.Lock()
				want[slot{p.KeyID, usage.Day(at)}]++
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	stop() // the last flush appends what is left
	got, events := logged(t, st)
	if len(got) != len(want) {
		t.Fatalf("log has %d key-days, want %d", len(got), len(want))
	}
	for s, n := range want {
		if got[s] != n {
			t.Fatalf("key %s on %s: %d calls in the log, want %d", s.key, s.day, got[s], n)
		}
	}
	if events >= 2000 {
		t.Fatalf("%d events for 2000 requests: counts are not batched", events)
	}
	t.Logf("2000 requests counted in %d events", events)
}

// flaky is the real recorder with faults injected: it fails before
// appending the first failBefore calls, and reports failure after a
// successful append for the next failAfter calls (an outcome the caller
// cannot know).
type flaky struct {
	rec                   metering.Recorder
	failBefore, failAfter atomic.Int64
	calls                 atomic.Int64
}

func (f *flaky) Handle(ctx context.Context, c commands.CountCalls) (uint64, error) {
	f.calls.Add(1)
	if f.failBefore.Add(-1) >= 0 {
		return 0, errors.New("injected: database unreachable")
	}
	pos, err := f.rec.Handle(ctx, c)
	if err == nil && f.failAfter.Add(-1) >= 0 {
		return 0, errors.New("injected: connection lost after commit")
	}
	return pos, err
}

// TestRetriesAppendOnce: failed appends are retried, and a retry of an
// append that did commit adds nothing.
func TestRetriesAppendOnce(t *testing.T) {
	tests := []struct {
		name                  string
		failBefore, failAfter int64
	}{
		{"failed before the append", 2, 0},
		{"failed after the append committed", 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t)
			f := &flaky{rec: newHandler(t, st)}
			f.failBefore.Store(tc.failBefore)
			f.failAfter.Store(tc.failAfter)
			m, err := metering.New(f, metering.Config{RetryDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			stop := run(t, m)
			p := identity.Principal{AccountID: uuid.New(), KeyID: uuid.New(), Service: account.Records}
			at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			for i := 0; i < 7; i++ {
				m.Count(p, at)
			}
			// Wait (bounded) until the retries are through: the counts are
			// in the log, once.
			deadline := time.Now().Add(20 * time.Second)
			for {
				got, _ := logged(t, st)
				if got[slot{p.KeyID, "2026-11-22"}] == 7 && f.calls.Load() > tc.failBefore+tc.failAfter {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after retries the log has %d calls (want 7), %d attempts", got[slot{p.KeyID, "2026-11-22"}], f.calls.Load())
				}
				time.Sleep(10 * time.Millisecond)
			}
			stop()
			if got, _ := logged(t, st); got[slot{p.KeyID, "2026-11-22"}] != 7 {
				t.Fatalf("log has %d calls after stop, want 7 (counted twice?)", got[slot{p.KeyID, "2026-11-22"}])
			}
		})
	}
}

// TestGivenUpIsLogged: counts that cannot be appended are logged at error
// level with the key id, and the meter goes on.
func TestGivenUpIsLogged(t *testing.T) {
	st := newStore(t)
	h := newHandler(t, st)
	_ = st.Close() // every append now fails
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	m, err := metering.New(h, metering.Config{MaxAttempts: 2, RetryDelay: time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	p := identity.Principal{AccountID: uuid.New(), KeyID: uuid.New(), Service: account.Answer}
	m.Count(p, time.Now())
	if err := m.Flush(context.Background()); err == nil {
		t.Fatalf("Flush reported success with a closed store")
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, `"level":"ERROR"`) || !strings.Contains(out, "usage count lost") || !strings.Contains(out, p.KeyID.String()) || !strings.Contains(out, `"calls":1`) {
		t.Fatalf("no error-level log naming the key:\n%s", out)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  metering.Config
		ok   bool
	}{
		{"defaults", metering.Config{}, true},
		{"negative workers", metering.Config{Workers: -1}, false},
		{"negative delay", metering.Config{RetryDelay: -time.Second}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); tc.ok != (err == nil) {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
	if _, err := metering.New(nil, metering.Config{}); err == nil {
		t.Fatalf("New(nil) succeeded")
	}
}
