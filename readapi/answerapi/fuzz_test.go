package answerapi_test

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/readapi/answerapi"
	"github.com/arr-dev/arr/readapi/httpx"
)

// requireOutcome is the oracle of the answer parsers' fuzz targets: the
// input is refused with a 4xx, or it yields a question that passes the
// text rule and whose AnswerSynthesized event the store accepts (so every
// projection can store it).
func requireOutcome(t *testing.T, req answer.Request, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, domain.ErrInvalid) {
			t.Fatalf("refused with %v, not a validation error", err)
		}
		if st := httpx.ProblemOf(err).Status; st < 400 || st > 499 {
			t.Fatalf("refused with status %d: %v", st, err)
		}
		return
	}
	e := &answer.AnswerSynthesized{AnswerID: uuid.New(), Question: req.Query, Normalized: req.Normalized, CacheKey: req.CacheKey(),
		Tier: req.Tier, Mode: req.Mode, SynthesizedAt: time.Unix(0, 0).UTC()}
	if req.Filters.Any() {
		e.Filters = &req.Filters
	}
	if req.ContextSize != answer.ContextMedium && req.ContextSize != "" {
		e.ContextSize = req.ContextSize
	}
	if len(req.Messages) > 0 {
		// The turns accepted resolve (by the extractive rule) into a
		// question the event can record too.
		resolved, _ := answer.ResolveFollowUp(req.Query, req.Messages)
		req.Resolve(resolved, "extractive")
		e.ResolvedQuery, e.Normalized, e.CacheKey = req.Question(), req.Normalized, req.CacheKey()
		e.Conversation = &answer.Conversation{Turns: len(req.Messages), ResolvedBy: req.ResolvedBy}
	}
	ne, err := eventstore.Encode(e, eventstore.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if err := (eventstore.Append{StreamID: answer.StreamID(e.CacheKey), Events: []eventstore.NewEvent{ne}}).Validate(true); err != nil {
		t.Fatalf("accepted %q, but its event cannot be stored: %v", req.Query, err)
	}
}

func FuzzParseBody(f *testing.F) {
	for _, s := range []string{`{"q":"what is arr"}`, `{"q":"what\u0000is arr"}`, `{"q":"hi","tier":"pro","mode":"deep"}`,
		`{"q":null}`, `[]`, `{"q":"\ud800"}`, `{"q":"a\u001bb c"}`, "{\"q\":\"\xff\xfe what\"}", `{"q":1}`,
		`{"q":"what is arr","include_domains":["Example.COM","bücher.de"],"time_range":"week"}`, `{"q":"what is arr","exclude_domains":"x"}`,
		`{"q":"what is arr","start_date":"2024-01-01","end_date":"2023-01-01"}`,
		`{"q":"how long does it take","messages":[{"role":"user","content":"When does the island ferry leave?"}]}`,
		`{"q":"its size?","messages":[{"role":"assistant","content":"x"},{"role":"user","content":"what is the \u0000 cache"}]}`,
		`{"q":"and it?","messages":"x"}`, `{"q":"and it?","messages":[{"role":"tool","content":"x"}]}`, `{"q":"and it?","messages":[null]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := answerapi.ParseBody(strings.NewReader(string(body)), time.Unix(1.7e9, 0))
		requireOutcome(t, req, err)
	})
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"q=what+is+arr", "q=what%00is+arr", "q=%ff%fe&tier=pro", "q=a&q=b", "tier=free", "q=%E2%80%A8line", "q=x%0d%0ay",
		"q=what+is+arr&include_domains=a.com,b.com&include_domains=c.org", "q=what+is+arr&exclude_domains=http://x", "q=what+is+arr&time_range=year&start_date=2024-01-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// What the handler reads: net/url's parse, which drops malformed pairs.
		req, err := answerapi.ParseQuery((&url.URL{RawQuery: raw}).Query(), time.Unix(1.7e9, 0))
		requireOutcome(t, req, err)
	})
}

func FuzzParseSonar(f *testing.F) {
	const user = `"messages":[{"role":"user","content":"What powers the lamp?"}]`
	for _, s := range []string{`{"model":"sonar",` + user + `}`, `{"model":"sonar-pro","stream":true,` + user + `}`, `{"model":"x",` + user + `}`,
		`{"model":"sonar","messages":[]}`, `{"model":"sonar","messages":[{"role":"assistant","content":"x"}]}`, `[]`, `{}`, `null`,
		`{"model":"sonar","messages":[{"role":"user","content":[{"type":"text","text":"what\u0000 is it"}]}]}`,
		`{"model":"sonar","messages":[{"role":"system","content":"x"},{"role":"user","content":"When does the ferry leave?"},{"role":"assistant","content":"At nine."},{"role":"user","content":"how long does it take"}]}`,
		`{"model":"sonar",` + user + `,"search_domain_filter":["a.com","-b.org","bücher.de"],"search_recency_filter":"hour"}`,
		`{"model":"sonar",` + user + `,"search_after_date_filter":"3/1/2025","search_before_date_filter":"12/31/2025","web_search_options":{"search_context_size":"high"}}`,
		`{"model":"sonar",` + user + `,"search_domain_filter":["-"],"temperature":1e400}`, "{\"model\":\"sonar\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe what\"}]}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, model, _, err := answerapi.ParseSonar(strings.NewReader(string(body)), time.Unix(1.7e9, 0))
		if err == nil && !slices.Contains(answerapi.SonarModels(), model) {
			t.Fatalf("accepted model %q", model)
		}
		requireOutcome(t, req, err)
	})
}
