package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// TestReadFiltered: the query's filter keeps exactly the events
// Filter.Match keeps, in position order, in pages of any size, within the
// position range.
func TestReadFiltered(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	s, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	streams := []string{"a-" + uuid.NewString(), "b-" + uuid.NewString(), "c-" + uuid.NewString()}
	types := []string{"Alpha", "Beta", "Gamma"}
	for i := range 30 {
		data, _ := json.Marshal(map[string]int{"n": i})
		if _, err := s.Append(ctx, streams[i%3], eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: types[(i/3)%3], SchemaVersion: 1, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.ReadAll(ctx, 0, 100)
	if err != nil || len(all) != 30 {
		t.Fatalf("read all: %d events, %v", len(all), err)
	}
	mid, late := all[10].RecordedAt, all[20].RecordedAt
	cases := []struct {
		name        string
		f           eventstore.Filter
		after, upTo uint64
	}{
		{name: "everything", upTo: 30},
		{name: "range", after: 4, upTo: 17},
		{name: "one type", f: eventstore.Filter{Types: []string{"Beta"}}, upTo: 30},
		{name: "two types, a range", f: eventstore.Filter{Types: []string{"Alpha", "Gamma"}}, after: 3, upTo: 25},
		{name: "a stream", f: eventstore.Filter{Stream: streams[1]}, upTo: 30},
		{name: "a stream and a type", f: eventstore.Filter{Stream: streams[2], Types: []string{"Gamma"}}, upTo: 30},
		{name: "since", f: eventstore.Filter{Since: mid}, upTo: 30},
		{name: "until", f: eventstore.Filter{Until: late}, upTo: 30},
		{name: "since and until", f: eventstore.Filter{Since: mid, Until: late, Types: []string{"Alpha", "Beta"}}, upTo: 30},
		{name: "no type matches", f: eventstore.Filter{Types: []string{"Omega"}}, upTo: 30},
	}
	for _, tc := range cases {
		var want []uint64
		for _, e := range all {
			if e.Position > tc.after && e.Position <= tc.upTo && tc.f.Match(e) {
				want = append(want, e.Position)
			}
		}
		for _, limit := range []int{1, 4, 100} {
			t.Run(fmt.Sprintf("%s/limit %d", tc.name, limit), func(t *testing.T) {
				var got []uint64
				for after, n := tc.after, 0; n < 100; n++ {
					evs, err := s.ReadFiltered(ctx, after, tc.upTo, limit, tc.f)
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range evs {
						got = append(got, e.Position)
					}
					if len(evs) < limit {
						break
					}
					after = evs[len(evs)-1].Position
				}
				if !slices.Equal(got, want) {
					t.Fatalf("positions %v, want %v", got, want)
				}
			})
		}
	}
}
