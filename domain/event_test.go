package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/arr-dev/arr/domain"
)

type thingNamed struct {
	Name string `json:"name"`
}

func (thingNamed) EventType() string  { return "ThingNamed" }
func (thingNamed) SchemaVersion() int { return 1 }

// TestRegistryWithUnmarshal: a registry made WithUnmarshal decodes its
// payloads with that function; the one it was made from keeps
// encoding/json's.
func TestRegistryWithUnmarshal(t *testing.T) {
	reg := domain.NewRegistry([]func() domain.Event{func() domain.Event { return &thingNamed{} }})
	calls := 0
	counted := reg.WithUnmarshal(func(data []byte, v any) error {
		calls++
		return json.Unmarshal(data, v)
	})
	cases := []struct {
		name  string
		reg   *domain.Registry
		calls int
	}{
		{name: "own unmarshal", reg: counted, calls: 1},
		{name: "encoding/json", reg: reg, calls: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls = 0
			e, err := c.reg.Decode("ThingNamed", 1, []byte(`{"name":"x"}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := e.(*thingNamed).Name; got != "x" || calls != c.calls {
				t.Fatalf("decoded %q with %d calls of the registry's unmarshal, want \"x\" and %d", got, calls, c.calls)
			}
		})
	}
}
