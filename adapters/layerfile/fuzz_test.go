package layerfile_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore"
)

// FuzzReader: a layer file (CSV or GeoJSON) is refused, or the rows it
// accepts make LayerRowsLoaded events the store accepts; rows it rejects
// carry a reason.
func FuzzReader(f *testing.F) {
	for _, s := range []struct {
		name, data string
	}{
		{"x.csv", "Parcel,Street,Lat,Lon,Filed,Owed\n123456789012345,1 MAIN ST,39.3,-76.6,05/12/2026,\"$2,462.22\"\n"},
		{"x.csv", "Parcel,Street,Lat,Lon,Filed,Owed\n123456789012345,1 MA\x00IN ST,39.3,-76.6,05/12/2026,1\n"},
		{"x.csv", "Parcel,Street\n\xff\xfe,x\n"},
		{"x.geojson", `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"Parcel":"123456789012345","Street":"1 Main"},"geometry":{"type":"Point","coordinates":[-76.6,39.3]}}]}`},
		{"x.geojson", `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"Parcel":"123456789012345","Street":"a\u0000b"},"geometry":null}]}`},
	} {
		f.Add(s.name, []byte(s.data))
	}
	m := layerfile.Mapping{APN: []string{"Parcel"}, Address: []string{"Street"}, Lat: "Lat", Lon: "Lon", Date: "Filed", DateFormat: "01/02/2006", Amount: "Owed",
		Detail: map[string]string{"street": "Street"}}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if !strings.HasSuffix(name, ".csv") && !strings.HasSuffix(name, ".geojson") {
			name = "x.csv"
		}
		mm := m
		r, err := layerfile.NewReader(strings.NewReader(string(data)), layerfile.Options{Name: name, County: "12095", Mapping: &mm})
		if err != nil {
			return // the load is refused before it starts
		}
		load := uuid.New()
		for range 1000 {
			rows, rejects, err := r.Next(50)
			for _, rj := range rejects {
				if rj.Reason == "" {
					t.Fatalf("a rejected row carries no reason: %+v", rj)
				}
			}
			if len(rejects) > 0 {
				ne, encErr := eventstore.Encode(&records.LayerLoadCompleted{LoadID: load, Rejects: rejects}, eventstore.Metadata{})
				if encErr != nil {
					t.Fatal(encErr)
				}
				if verr := (eventstore.Append{StreamID: records.LoadStreamID(load), Events: []eventstore.NewEvent{ne}}).Validate(true); verr != nil {
					t.Fatalf("rejects whose reasons cannot be stored: %v", verr)
				}
			}
			if len(rows) > 0 {
				ne, encErr := eventstore.Encode(&records.LayerRowsLoaded{LoadID: load, Rows: rows}, eventstore.Metadata{})
				if encErr != nil {
					t.Fatal(encErr)
				}
				if verr := (eventstore.Append{StreamID: records.LoadStreamID(load), Events: []eventstore.NewEvent{ne}}).Validate(true); verr != nil {
					t.Fatalf("accepted rows whose event cannot be stored: %v", verr)
				}
			}
			if errors.Is(err, io.EOF) || err != nil {
				var de *domain.Error
				if err != nil && !errors.Is(err, io.EOF) && errors.As(err, &de) && !errors.Is(err, domain.ErrInvalid) {
					t.Fatalf("refused with a domain error that is not a validation error: %v", err)
				}
				return
			}
		}
	})
}
