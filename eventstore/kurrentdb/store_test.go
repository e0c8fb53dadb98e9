package kurrentdb_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/kurrentdb"
	"github.com/arr-dev/arr/eventstore/storetest"
)

// TestContract runs the event store contract against the KurrentDB server at
// KURRENTDB_URL.
func TestContract(t *testing.T) {
	url := os.Getenv("KURRENTDB_URL")
	if url == "" {
		t.Skip("KurrentDB contract run did not happen: KURRENTDB_URL is unset (no KurrentDB server here; set KURRENTDB_URL=esdb://host:2113?tls=false to run it)")
	}
	reachable(t, url)
	storetest.Run(t, func(t testing.TB) eventstore.Store {
		s, err := kurrentdb.New(kurrentdb.Config{URL: url})
		if err != nil {
			t.Fatalf("new store: %v", err)
		}
		return s
	}, storetest.Capabilities{GlobalEventIDs: false})
}

// reachable fails the test with what to start when the server does not answer.
func reachable(t testing.TB, url string) {
	t.Helper()
	s, err := kurrentdb.New(kurrentdb.Config{URL: url})
	if err != nil {
		t.Fatalf("new store for %s: %v", url, err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Head(ctx); err != nil {
		t.Fatalf("KurrentDB is not reachable at %s (%v): start KurrentDB (the kurrentdb service of docker-compose.yml, insecure, with port 2113 reachable) or fix KURRENTDB_URL", url, err)
	}
}
