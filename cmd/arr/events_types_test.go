package main_test

import (
	"strings"
	"testing"
)

// TestEventsTypes: `arr events types` lists every registered type with its
// versions, the version handlers receive, its payload's JSON Schema and
// its count and first and last position in the log; with a type it
// prints that type's fields and their meanings.
func TestEventsTypes(t *testing.T) {
	e := newEnv(t)
	for _, email := range []string{"a@example.com", "b@example.com"} {
		e.createAccount(email, "starter")
		e.mint(email, "gateway")
	}
	// 4 events: AccountCreated, KeyIssued, AccountCreated, KeyIssued.
	var cat struct {
		Head  uint64 `json:"head"`
		Types []struct {
			Type           string         `json:"type"`
			SchemaVersion  int            `json:"schema_version"`
			UpcastFrom     []int          `json:"upcast_from"`
			HandlerVersion int            `json:"handler_version"`
			Registered     bool           `json:"registered"`
			Schema         map[string]any `json:"schema"`
			Fields         []struct {
				Path        string `json:"path"`
				Description string `json:"description"`
			} `json:"fields"`
			Events        int64  `json:"events"`
			FirstPosition uint64 `json:"first_position"`
			LastPosition  uint64 `json:"last_position"`
		} `json:"types"`
	}
	e.mustArr(&cat, "events", "types", "--json")
	if cat.Head != 4 || len(cat.Types) < 20 {
		t.Fatalf("head %d, %d types", cat.Head, len(cat.Types))
	}
	seen := map[string]bool{}
	for _, ty := range cat.Types {
		seen[ty.Type] = true
		if !ty.Registered || ty.HandlerVersion != ty.SchemaVersion || len(ty.UpcastFrom) != ty.SchemaVersion-1 || ty.Schema["type"] != "object" || len(ty.Fields) == 0 {
			t.Errorf("%s: %+v", ty.Type, ty)
		}
		want := map[string][3]uint64{"AccountCreated": {2, 1, 3}, "KeyIssued": {2, 2, 4}}[ty.Type]
		if got := [3]uint64{uint64(ty.Events), ty.FirstPosition, ty.LastPosition}; got != want {
			t.Errorf("%s: events, first, last = %v, want %v", ty.Type, got, want)
		}
		if ty.Type == "CompletionRecorded" && (ty.SchemaVersion != 2 || ty.UpcastFrom[0] != 1 || ty.HandlerVersion != 2) {
			t.Errorf("CompletionRecorded: version %d, upcast from %v, handlers get %d", ty.SchemaVersion, ty.UpcastFrom, ty.HandlerVersion)
		}
	}
	if !seen["CompletionRecorded"] || !seen["FeedbackSubmitted"] {
		t.Fatalf("types: %v", seen)
	}

	out, _, code := e.arr("events", "types")
	if code != 0 || !strings.Contains(out, "HANDLERS GET") || !strings.Contains(out, "CompletionRecorded") {
		t.Fatalf("arr events types: exit %d\n%s", code, out)
	}
	out, _, code = e.arr("events", "types", "KeyIssued")
	if code != 0 || !strings.Contains(out, "handlers receive version 1") || !strings.Contains(out, "secret_hash") ||
		!strings.Contains(out, "in the log: 2 events, positions 2 to 4") {
		t.Fatalf("arr events types KeyIssued: exit %d\n%s", code, out)
	}
	if _, errs, code := e.arr("events", "types", "NoSuchThingHappened"); code == 0 || !strings.Contains(errs, "not in the catalog") {
		t.Fatalf("an unknown type: exit %d: %s", code, errs)
	}
}
