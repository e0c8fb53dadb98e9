package postgres_test

import (
	"testing"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/eventstore/storetest"
	"github.com/arr-dev/arr/migrations/migratetest"
)

func TestContract(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	storetest.Run(t, func(t testing.TB) eventstore.Store {
		s, err := postgres.New(pool, postgres.Config{})
		if err != nil {
			t.Fatalf("new store: %v", err)
		}
		return s
	}, storetest.Capabilities{GlobalEventIDs: true, TypedReads: true, MerkleTree: true})
}
