package fanout_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/fanout"
)

func TestNewForwarderRefuses(t *testing.T) {
	t.Parallel()
	pool, store := newStore(t)
	pub, closePub, err := fanout.NewPublisher(fanout.BusGoChannel, "", nil)
	if err != nil {
		t.Fatalf("gochannel publisher: %v", err)
	}
	t.Cleanup(func() { _ = closePub() })
	ok := fanout.Config{Name: "x"}
	for _, tc := range []struct {
		name  string
		pool  *pgxpool.Pool
		store eventstore.Store
		pub   message.Publisher
		cfg   fanout.Config
		want  string
	}{
		{name: "nil pool", store: store, pub: pub, cfg: ok, want: "nil pool"},
		{name: "nil store", pool: pool, pub: pub, cfg: ok, want: "nil store"},
		{name: "nil publisher", pool: pool, store: store, cfg: ok, want: "nil publisher"},
		{name: "no name", pool: pool, store: store, pub: pub, want: "empty Name"},
		{name: "negative batch", pool: pool, store: store, pub: pub, cfg: fanout.Config{Name: "x", BatchSize: -1}, want: "BatchSize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := fanout.NewForwarder(tc.pool, tc.store, tc.pub, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewForwarder = %v, %v; want an error containing %q", f, err, tc.want)
			}
		})
	}
}

func TestNewPublisherKinds(t *testing.T) {
	t.Parallel()
	closed := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t)) // nothing listens there
	for _, tc := range []struct {
		name, kind, url string
		wantPub         bool
		wantErr         string
	}{
		{name: "none disables fan-out", kind: fanout.BusNone},
		{name: "gochannel", kind: fanout.BusGoChannel, wantPub: true},
		{name: "nats unreachable", kind: fanout.BusNATS, url: closed, wantErr: "connecting to NATS"},
		{name: "unknown kind", kind: "kafka", wantErr: "unknown bus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pub, closePub, err := fanout.NewPublisher(tc.kind, tc.url, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewPublisher: %v", err)
			}
			defer closePub()
			if (pub != nil) != tc.wantPub {
				t.Fatalf("publisher = %v, want non-nil %v", pub, tc.wantPub)
			}
		})
	}
}

// TestCheckpointStartsAtZero checks that a new forwarder creates its row.
func TestCheckpointStartsAtZero(t *testing.T) {
	t.Parallel()
	pool, store := newStore(t)
	bus, err := fanout.NewPubSub(fanout.BusGoChannel, "", nil)
	if err != nil {
		t.Fatalf("bus: %v", err)
	}
	pub, closeBus := bus.Publisher, bus.Close
	t.Cleanup(func() { _ = closeBus() })
	f, err := fanout.NewForwarder(pool, store, pub, fanout.Config{Name: "empty"})
	if err != nil {
		t.Fatalf("new forwarder: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := start(t, ctx, cancel, f)
	waitCheckpoint(t, pool, "empty", 0)
	if err := run.stop(t); err != nil {
		t.Fatalf("Run returned %v", err)
	}
	if cp := checkpointOf(t, pool, "empty"); cp != 0 {
		t.Fatalf("checkpoint %d on an empty log, want 0", cp)
	}
}
