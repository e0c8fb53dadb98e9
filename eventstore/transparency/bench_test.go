package transparency_test

import (
	"context"
	"sync"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency"
)

func BenchmarkAppend(b *testing.B) {
	leaves := testLeaves(1 << 16)
	tree := transparency.NewTree()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := tree.Append(leaves[i&(1<<16-1)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendAndStore(b *testing.B) {
	leaves := testLeaves(1 << 16)
	tree, store := transparency.NewTree(), transparency.NewMemStore()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		nodes, err := tree.Append(leaves[i&(1<<16-1)])
		if err != nil {
			b.Fatal(err)
		}
		if err := store.Put(nodes); err != nil {
			b.Fatal(err)
		}
	}
}

const benchSize = 1 << 20

// benchStore is the store of a tree of 2^20 leaves, built once.
var benchStore = sync.OnceValue(func() *transparency.MemStore {
	tree, store := transparency.NewTree(), transparency.NewMemStore()
	leaves := testLeaves(1 << 10)
	for i := range benchSize {
		nodes, err := tree.Append(leaves[i%len(leaves)])
		if err != nil {
			panic(err)
		}
		if err := store.Put(nodes); err != nil {
			panic(err)
		}
	}
	return store
})

func BenchmarkInclusionProof1M(b *testing.B) {
	store, ctx := benchStore(), context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		index := uint64(i*7919) % (benchSize - 1000)
		if _, err := transparency.InclusionProof(ctx, store, index, benchSize-1000+uint64(i%1000)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConsistencyProof1M(b *testing.B) {
	store, ctx := benchStore(), context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		size1 := 1 + uint64(i*7919)%(benchSize-1)
		if _, err := transparency.ConsistencyProof(ctx, store, size1, benchSize); err != nil {
			b.Fatal(err)
		}
	}
}
