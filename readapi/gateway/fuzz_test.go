package gateway

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/feedback"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/readapi/httpx"
)

// refusedWith4xx fails unless err is a domain error the gateway answers
// with a 4xx (400 for bad input, 404 for an unknown model, ...).
func refusedWith4xx(t *testing.T, err error) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Fatalf("refused with %v, not a domain error", err)
	}
	if st := httpx.ProblemOf(err).Status; st < 400 || st > 499 {
		t.Fatalf("refused with status %d: %v", st, err)
	}
}

// FuzzChatRequest: a chat-completion body is refused with a 4xx, or it is
// routed (or refused by routing with a 4xx) and its upstream body built,
// without a panic. No text of the body reaches an event.
func FuzzChatRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"auto","messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a\u0000b"}]}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"nano","messages":[{"role":"system","content":"x"},{"role":"user","content":"y"}],"max_tokens":5,"quality_floor":0.9,"max_cost_usd":0.0001}`,
		`{"model":"gpt-4.1-nano","messages":[{"role":"tool","content":"r","tool_call_id":"1"}],"tools":[{"type":"function","function":{"name":"f"}}],"brand_pref":"openai"}`,
		`{"messages":[]}`, `{"messages":null}`, `[]`, `{"messages":[{"role":"wizard","content":"x"}]}`, `{"model":1}`,
	} {
		f.Add([]byte(s))
	}
	cat, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseChatRequest(body)
		if err != nil {
			refusedWith4xx(t, err)
			return
		}
		dec, err := r.Route(cat, routing.Feedback{}, true)
		if err != nil {
			refusedWith4xx(t, err)
			return
		}
		for _, c := range dec.Candidates {
			if _, err := r.UpstreamBody(c); err != nil {
				t.Fatalf("building the upstream body of an accepted request: %v", err)
			}
		}
		_ = r.CacheKey("acct")
	})
}

// FuzzFeedback: a feedback body is refused with a 4xx, or its
// FeedbackSubmitted event (for the caller's own completion) can be stored.
func FuzzFeedback(f *testing.F) {
	h := strings.Repeat("ab", 32)
	for _, s := range []string{
		`{"audit_hash":"` + h + `","rating":5,"notes":"great"}`,
		`{"audit_hash":"` + h + `","rating":3,"notes":"bad\u0000note"}`,
		`{"audit_hash":"` + h + `","rating":9}`, `{"audit_hash":"XYZ","rating":1}`, `{"rating":1}`, `{"audit_hash":"` + h + `"}`,
		`{"audit_hash":"` + h + `","rating":1e400}`, `{"audit_hash":"` + h + `","rating":2,"notes":"\ud800"}`, `null`,
	} {
		f.Add([]byte(s))
	}
	account := uuid.New()
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseFeedback(strings.NewReader(string(body)))
		if err != nil {
			refusedWith4xx(t, err)
			return
		}
		ev, err := feedback.Submit(req.AuditHash, audit.Completion{AccountID: account, Tier: "nano", Model: "m"}, account, uuid.New(), req.Rating, req.Notes, time.Unix(0, 0))
		if err != nil {
			refusedWith4xx(t, err)
			return
		}
		ne, err := eventstore.Encode(ev, eventstore.Metadata{})
		if err != nil {
			t.Fatal(err)
		}
		if err := (eventstore.Append{StreamID: feedback.StreamID(ev.AuditHash), Events: []eventstore.NewEvent{ne}}).Validate(true); err != nil {
			t.Fatalf("accepted feedback whose event cannot be stored: %v", err)
		}
	})
}
