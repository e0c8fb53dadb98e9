package docs_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/catalog"
	"github.com/arr-dev/arr/projections/eventcatalog"
)

const regenerate = "run `go generate ./docs` (scripts/eventsdoc) and commit the result"

// TestEventCatalogInStep: events.md and the field docs the binary embeds
// (projections/eventcatalog/fielddocs.json) are what the registry and the doc
// comments in domain/ make of them today.
func TestEventCatalogInStep(t *testing.T) {
	reg := catalog.Registry()
	docs, err := eventcatalog.Extract("../domain", module+"/domain")
	if err != nil {
		t.Fatal(err)
	}
	docs = docs.For(reg)
	embedded, err := os.ReadFile("../projections/eventcatalog/fielddocs.json")
	if err != nil {
		t.Fatal(err)
	}
	if d := firstDiff(embedded, docs.JSON()); d != "" {
		t.Errorf("projections/eventcatalog/fielddocs.json differs from the doc comments in domain/ (%s): %s", d, regenerate)
	}
	types, err := eventcatalog.Build(reg, docs)
	if err != nil {
		t.Fatal(err)
	}
	md, err := eventcatalog.Markdown(types)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("events.md")
	if err != nil {
		t.Fatalf("%v: %s", err, regenerate)
	}
	if d := firstDiff(have, md); d != "" {
		t.Errorf("docs/events.md differs from the event registry (%s): %s", d, regenerate)
	}
}

// TestEveryEventFieldHasAMeaning: each event type and each field of its
// payload, nested ones too, has a doc comment for the catalog to show.
func TestEveryEventFieldHasAMeaning(t *testing.T) {
	docs, err := eventcatalog.Extract("../domain", module+"/domain")
	if err != nil {
		t.Fatal(err)
	}
	types, err := eventcatalog.Build(catalog.Registry(), docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, ty := range types {
		if ty.Description == "" {
			t.Errorf("event type %s (%s) has no doc comment", ty.Type, ty.GoType)
		}
		for _, f := range ty.Fields {
			if strings.TrimSpace(f.Description) == "" {
				t.Errorf("%s: field %s has no doc comment: write one above the field in %s", ty.Type, f.Path, ty.GoType)
			}
		}
	}
}

// firstDiff names the first line where have and want differ, or "".
func firstDiff(have, want []byte) string {
	if bytes.Equal(have, want) {
		return ""
	}
	h, w := strings.Split(string(have), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(h), len(w)) {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl {
			return fmt.Sprintf("first at line %d: have %q, want %q", i+1, hl, wl)
		}
	}
	return "they differ"
}
