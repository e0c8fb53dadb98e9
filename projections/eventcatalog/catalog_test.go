package eventcatalog_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections/eventcatalog"
)

func build(t *testing.T) []eventcatalog.Type {
	t.Helper()
	docs, err := eventcatalog.EmbeddedDocs()
	if err != nil {
		t.Fatal(err)
	}
	types, err := eventcatalog.Build(catalog.Registry(), docs)
	if err != nil {
		t.Fatal(err)
	}
	return types
}

func find(t *testing.T, types []eventcatalog.Type, name string) eventcatalog.Type {
	t.Helper()
	for _, ty := range types {
		if ty.Type == name {
			return ty
		}
	}
	t.Fatalf("%s is not in the catalog", name)
	return eventcatalog.Type{}
}

// TestVersions: every registered type is listed with its current version,
// the older versions upcast from, and handlers receiving the current one.
func TestVersions(t *testing.T) {
	types := build(t)
	if n := len(catalog.Registry().Types()); len(types) != n {
		t.Fatalf("%d types in the catalog, %d registered", len(types), n)
	}
	for _, tc := range []struct {
		name       string
		version    int
		upcastFrom []int
	}{
		{name: "CompletionRecorded", version: 2, upcastFrom: []int{1}},
		{name: "AnswerSynthesized", version: 4, upcastFrom: []int{1, 2, 3}},
		{name: "DocumentIndexed", version: 2, upcastFrom: []int{1}},
		{name: "AnswerServed", version: 2, upcastFrom: []int{1}},
		{name: "KeyIssued", version: 1, upcastFrom: []int{}},
	} {
		ty := find(t, types, tc.name)
		if ty.SchemaVersion != tc.version || !slices.Equal(ty.UpcastFrom, tc.upcastFrom) || ty.HandlerVersion != tc.version || !ty.Registered {
			t.Errorf("%s: version %d, upcast from %v, handlers get %d, registered %v", tc.name, ty.SchemaVersion, ty.UpcastFrom, ty.HandlerVersion, ty.Registered)
		}
	}
}

// TestSchemaDescribesPayloads: the keys of real payloads are the schema's
// fields (nested ones and the audit entry's embedded completion too),
// with the Go doc comments as meanings.
func TestSchemaDescribesPayloads(t *testing.T) {
	types := build(t)
	lon := 1.5
	cases := []struct {
		name  string
		event any
	}{
		{name: "LayerRowsLoaded", event: records.LayerRowsLoaded{LoadID: uuid.New(), Layer: records.Vacant, Rows: []records.Row{{Line: 1, APN: "1", Lon: &lon, Detail: map[string]string{"a": "b"}}}}},
		{name: "CompletionRecorded", event: func() any {
			p, _ := audit.Canonical(audit.Completion{Model: "m", StartedAt: time.Now()})
			return audit.CompletionRecorded{Hash: "h", Payload: p, Link: audit.LinkV2}
		}()},
	}
	for _, tc := range cases {
		ty := find(t, types, tc.name)
		fields := map[string]eventcatalog.Field{}
		for _, f := range ty.Fields {
			fields[f.Path] = f
		}
		b, _ := json.Marshal(tc.event)
		var doc map[string]any
		_ = json.Unmarshal(b, &doc)
		for _, p := range paths("", doc) {
			f, ok := fields[p]
			if !ok {
				t.Errorf("%s: payload key %s is not in the catalog's fields", tc.name, p)
			} else if f.Description == "" {
				t.Errorf("%s: %s has no meaning", tc.name, p)
			}
		}
	}
	f := find(t, types, "CompletionRecorded")
	if !slices.ContainsFunc(f.Fields, func(f eventcatalog.Field) bool {
		return f.Path == "payload.cost_micro_usd" && f.Type == "integer" && f.Required
	}) {
		t.Errorf("CompletionRecorded's fields lack payload.cost_micro_usd: %+v", f.Fields)
	}
}

// paths lists the keys of a decoded JSON document as the catalog names
// them: "a.b" for objects, "a[].b" for arrays of objects; maps of
// strings stop at the map.
func paths(prefix string, doc map[string]any) []string {
	var out []string
	for k, v := range doc {
		p := prefix + k
		out = append(out, p)
		switch v := v.(type) {
		case map[string]any:
			if k != "detail" {
				out = append(out, paths(p+".", v)...)
			}
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					out = append(out, paths(p+"[].", m)...)
				}
			}
		}
	}
	return out
}

// TestWithLog: counts and positions join their types; a type in the log
// that the registry does not know is listed, unregistered.
func TestWithLog(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	types := eventcatalog.WithLog(build(t), []eventcatalog.LogStat{
		{Type: "KeyIssued", Events: 3, FirstPosition: 2, LastPosition: 9, FirstAt: at, LastAt: at.Add(time.Hour)},
		{Type: "SomethingRetired", Events: 1, FirstPosition: 1, LastPosition: 1, FirstAt: at, LastAt: at},
	})
	k := find(t, types, "KeyIssued")
	if k.Events != 3 || k.FirstPosition != 2 || k.LastPosition != 9 || !k.LastAt.Equal(at.Add(time.Hour)) {
		t.Fatalf("KeyIssued: %+v", k)
	}
	if r := find(t, types, "SomethingRetired"); r.Registered || r.Events != 1 || r.Schema != nil {
		t.Fatalf("unregistered type: %+v", r)
	}
	if a := find(t, types, "AccountCreated"); a.Events != 0 || a.FirstAt != nil {
		t.Fatalf("a type with no events: %+v", a)
	}
}
