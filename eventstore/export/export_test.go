package export_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"

	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/export"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// plainStore hides the PostgreSQL store's filtered reads, as a store
// without them (KurrentDB) is seen.
type plainStore struct{ eventstore.Store }

// TestWrite: both formats hold exactly the events the options select,
// whether the store filters in its query or the export filters what it
// reads; Parquet rows carry the envelope; --upcast writes a version 1
// audit entry as version 2.
func TestWrite(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// 2 version 1 audit entries, then 40 events of 2 types in 4 streams.
	for i := range 2 {
		data := fmt.Appendf(nil, `{"seq":%d,"prev_hash":"p","hash":"h%d","payload":{"cost_micro_usd":5}}`, i, i)
		if _, err := st.Append(ctx, audit.StreamID, eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: "CompletionRecorded", SchemaVersion: 1, Data: data,
			Metadata: eventstore.Metadata{Actor: "key:k", RequestID: "r<1>"}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		typ := []string{"KeyIssued", "KeyRevoked"}[i%2]
		if _, err := st.Append(ctx, fmt.Sprintf("s-%d", i%4), eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: typ, SchemaVersion: 1, Data: fmt.Appendf(nil, `{"n":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := st.ReadAll(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		o    export.Options
	}{
		{name: "everything", o: export.Options{}},
		{name: "a range", o: export.Options{After: 5, UpTo: 30}},
		{name: "a type in a stream", o: export.Options{Filter: eventstore.Filter{Types: []string{"KeyRevoked"}, Stream: "s-1"}}},
		{name: "since", o: export.Options{Filter: eventstore.Filter{Since: all[20].RecordedAt}}},
		{name: "small batches", o: export.Options{Batch: 3, RowGroup: 4, Filter: eventstore.Filter{Types: []string{"KeyIssued", "CompletionRecorded"}}}},
	}
	for _, tc := range cases {
		upTo := tc.o.UpTo
		if upTo == 0 {
			upTo = uint64(len(all))
		}
		var want []uint64
		for _, e := range all {
			if e.Position > tc.o.After && e.Position <= upTo && tc.o.Filter.Match(e) {
				want = append(want, e.Position)
			}
		}
		for _, s := range []struct {
			name  string
			store eventstore.Store
		}{{"filtered query", st}, {"read and match", plainStore{st}}} {
			t.Run(tc.name+"/"+s.name, func(t *testing.T) {
				o := tc.o
				o.Format = export.NDJSON
				var nd bytes.Buffer
				res, err := export.Write(ctx, s.store, &nd, o)
				if err != nil {
					t.Fatal(err)
				}
				var got []uint64
				sc := bufio.NewScanner(&nd)
				for sc.Scan() {
					var e eventstore.Event
					if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
						t.Fatal(err)
					}
					got = append(got, e.Position)
				}
				if !slices.Equal(got, want) || res.Events != uint64(len(want)) {
					t.Fatalf("ndjson: %v (result %+v), want %v", got, res, want)
				}
				o.Format = export.Parquet
				var pq bytes.Buffer
				if _, err := export.Write(ctx, s.store, &pq, o); err != nil {
					t.Fatal(err)
				}
				rows, err := parquet.Read[export.Row](bytes.NewReader(pq.Bytes()), int64(pq.Len()))
				if err != nil {
					t.Fatal(err)
				}
				got = got[:0]
				for _, r := range rows {
					e := all[r.Position-1]
					if r.EventID != e.ID || r.Stream != e.StreamID || r.Type != e.Type || r.StreamVersion != int64(e.StreamVersion) ||
						int(r.SchemaVersion) != e.SchemaVersion || !r.RecordedAt.Equal(e.RecordedAt) || !bytes.Equal(r.Data, e.Data) ||
						string(r.Metadata) != string(eventstore.AppendMetadataJSON(nil, e.Metadata)) {
						t.Fatalf("row %+v is not event %+v", r, e)
					}
					got = append(got, uint64(r.Position))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("parquet: %v, want %v", got, want)
				}
			})
		}
	}

	var up bytes.Buffer
	if _, err := export.Write(ctx, st, &up, export.Options{Format: export.NDJSON, UpTo: 1, Upcast: catalog.Registry()}); err != nil {
		t.Fatal(err)
	}
	var e struct {
		SchemaVersion int `json:"schema_version"`
		Data          struct {
			Link int `json:"link"`
		} `json:"data"`
	}
	if err := json.Unmarshal(up.Bytes(), &e); err != nil || e.SchemaVersion != 2 || e.Data.Link != audit.LinkV1 {
		t.Fatalf("upcast export %s: %+v %v", up.Bytes(), e, err)
	}
	if _, err := export.Write(ctx, st, &up, export.Options{Format: "csv"}); err == nil {
		t.Fatal("format csv was accepted")
	}
}
