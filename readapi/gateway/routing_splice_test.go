package gateway

import (
	"encoding/json"
	"testing"

	"github.com/arr-dev/arr/commands/complete"
)

func TestWithRouting(t *testing.T) {
	ri := complete.Routing{Tier: "nano", Model: "m", AuditHash: "h"}
	cases := []struct {
		name       string
		body       string
		hasRouting bool
	}{
		{"completion", `{"id":"x","choices":[{"index":0}],"usage":{"prompt_tokens":1}}`, false},
		{"trailing newline", "{\"id\":\"x\"}\n", false},
		{"empty object", `{ }`, false},
		{"upstream routing replaced", `{"id":"x","routing":{"tier":"other"}}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := withRouting([]byte(tc.body), tc.hasRouting, ri)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatalf("%s is not JSON: %v", out, err)
			}
			var got complete.Routing
			if err := json.Unmarshal(doc["routing"], &got); err != nil || got.Tier != "nano" || got.AuditHash != "h" {
				t.Fatalf("routing in %s: %+v %v", out, got, err)
			}
			var orig map[string]json.RawMessage
			_ = json.Unmarshal([]byte(tc.body), &orig)
			for k, v := range orig {
				if k != "routing" && string(doc[k]) != string(v) {
					t.Fatalf("field %s changed: %s -> %s", k, v, doc[k])
				}
			}
		})
	}
}
