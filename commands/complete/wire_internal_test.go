package complete

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

// TestChatCallRefusals: what a candidate's API cannot be told of a chat
// request is a domain.ErrInvalid before any call (so dispatch tries the
// next candidate), for each translated API; what it can is translated.
func TestChatCallRefusals(t *testing.T) {
	image := `{"model":"mid","messages":[{"role":"user","content":[{"type":"text","text":"what is it"},{"type":"image_url","image_url":{"url":"http://127.0.0.1:9/cat.png"}}]}]}`
	two := `{"model":"mid","n":2,"messages":[{"role":"user","content":"hi"}]}`
	plain := `{"model":"mid","messages":[{"role":"user","content":"hi"}]}`
	models := map[string]routing.Model{
		"bedrock":   {ID: "b", API: routing.APIBedrock, UpstreamModel: "anthropic.claude-v1:0"},
		"anthropic": {ID: "a", API: routing.APIAnthropic, Vendor: "anthropic", UpstreamModel: "claude-sonnet-4-0"},
		"vertex":    {ID: "v", API: routing.APIVertex, Vendor: "anthropic", UpstreamModel: "claude-opus-4-1"},
		"openai":    {ID: "o", API: routing.APIOpenAI, UpstreamModel: "gpt-4.1"},
	}
	cases := []struct {
		model, body string
		refused     bool
	}{
		{"bedrock", image, true}, {"bedrock", plain, false}, {"anthropic", two, true}, {"vertex", two, true},
		{"anthropic", plain, false}, {"openai", two, false}, {"openai", image, false},
	}
	for _, tc := range cases {
		r := &Request{Fields: map[string]json.RawMessage{}}
		if err := json.Unmarshal([]byte(tc.body), &r.Fields); err != nil {
			t.Fatal(err)
		}
		_, err := r.chatCall(routing.Candidate{Model: models[tc.model]})
		var de *domain.Error
		if got := err != nil && errors.As(err, &de) && errors.Is(err, domain.ErrInvalid); got != tc.refused || (!tc.refused && err != nil) {
			t.Errorf("%s %s: err %v, refused %v", tc.model, tc.body, err, tc.refused)
		}
	}
}
