package routing_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

// model is a catalog with one mid model whose fields beyond the required
// ones are extra (a JSON fragment, "" for none).
func oneModel(extra string) []byte {
	if extra != "" {
		extra = "," + extra
	}
	return []byte(`{"tiers":[{"name":"mid","models":[{"id":"m","vendor":"v","base_url":"http://127.0.0.1:9/v1",
	  "input_usd_per_1k":0.001,"output_usd_per_1k":0.002,"quality":0.9,"context_window":8192` + extra + `}]}]}`)
}

func TestCatalogAPI(t *testing.T) {
	cases := []struct {
		name    string
		extra   string
		api     string
		errWant string
	}{
		{name: "default openai", api: routing.APIOpenAI},
		{name: "anthropic", extra: `"api":"anthropic"`, api: routing.APIAnthropic},
		{name: "azure with version", extra: `"api":"azure_openai","api_version":"2024-10-21","deployment":"gpt4o-prod","credentials_env":"AZ_TOKEN"`, api: routing.APIAzureOpenAI},
		{name: "azure without version", extra: `"api":"azure_openai"`, errWant: "api_version is required"},
		{name: "deployment with a slash", extra: `"api":"azure_openai","api_version":"2024-10-21","deployment":"a/b"`, errWant: "must be a single name"},
		{name: "gemini", extra: `"api":"gemini","api_key_env":"GEMINI_API_KEY"`, api: routing.APIGemini},
		{name: "bedrock", extra: `"api":"bedrock","region":"us-east-1"`, api: routing.APIBedrock},
		{name: "bedrock without region", extra: `"api":"bedrock"`, api: routing.APIBedrock},
		{name: "bedrock bad region", extra: `"api":"bedrock","region":"US-EAST-1"`, errWant: "not an AWS region name"},
		{name: "bedrock region host", extra: `"api":"bedrock","region":"us-east-1.evil"`, errWant: "not an AWS region name"},
		{name: "vertex", extra: `"api":"vertex","project":"my-proj-1","location":"us-central1","credentials_env":"GOOGLE_SA"`, api: routing.APIVertex},
		{name: "vertex global", extra: `"api":"vertex","vendor":"anthropic","project":"my-proj-1","location":"global","credentials_env":"GOOGLE_SA"`, api: routing.APIVertex},
		{name: "vertex without project", extra: `"api":"vertex","location":"us-central1","credentials_env":"GOOGLE_SA"`, errWant: "must be a Google Cloud project id"},
		{name: "vertex project upper", extra: `"api":"vertex","project":"My-Proj","location":"us-central1","credentials_env":"GOOGLE_SA"`, errWant: "must be a Google Cloud project id"},
		{name: "vertex project short", extra: `"api":"vertex","project":"abc","location":"us-central1","credentials_env":"GOOGLE_SA"`, errWant: "must be a Google Cloud project id"},
		{name: "vertex location bad", extra: `"api":"vertex","project":"my-proj-1","location":"us_central1","credentials_env":"GOOGLE_SA"`, errWant: "must be a Vertex AI location"},
		{name: "vertex without credentials", extra: `"api":"vertex","project":"my-proj-1","location":"us-central1"`, errWant: "credentials_env"},
		{name: "vertex credentials not a name", extra: `"api":"vertex","project":"my-proj-1","location":"us-central1","credentials_env":"A-B"`, errWant: "credentials_env"},
		{name: "region on vertex", extra: `"api":"vertex","region":"us-central1","project":"my-proj-1","location":"us-central1","credentials_env":"G"`, errWant: "region is a setting of bedrock models, not of api vertex"},
		{name: "project on gemini", extra: `"api":"gemini","project":"my-proj-1"`, errWant: "project is a setting of vertex models"},
		{name: "unknown api", extra: `"api":"cohere"`, errWant: "api must be one of openai, anthropic, gemini"},
		{name: "region on openai", extra: `"region":"us-east-1"`, errWant: "region is a setting of bedrock models, not of api openai"},
		{name: "deployment on anthropic", extra: `"api":"anthropic","deployment":"d"`, errWant: "deployment is a setting of azure_openai models"},
		{name: "unknown field", extra: `"apis":"openai"`, errWant: `unknown field "apis"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := routing.ParseCatalog(oneModel(tc.extra))
			if tc.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errWant) {
					t.Fatalf("err %v, want one with %q", err, tc.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m, _ := c.Model("m"); m.API != tc.api {
				t.Fatalf("api %q, want %q", m.API, tc.api)
			}
		})
	}
}

func TestAzureDeploymentDefaultsToUpstreamModel(t *testing.T) {
	c, err := routing.ParseCatalog(oneModel(`"api":"azure_openai","api_version":"2024-10-21","upstream_model":"gpt-4o"`))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Model("m"); m.Deployment != "gpt-4o" || m.APIVersion != "2024-10-21" {
		t.Fatalf("%+v", m)
	}
}

// TestShippedClaudeModelsAreAnthropic: the shipped catalog reaches Claude
// through Anthropic's Messages API, every other model through OpenAI's;
// one base URL for every model (a local server) makes them all OpenAI's.
func TestShippedClaudeModelsAreAnthropic(t *testing.T) {
	c := shipped(t)
	for _, m := range c.Models() {
		want := routing.APIOpenAI
		if m.Vendor == "anthropic" {
			want = routing.APIAnthropic
		}
		if m.API != want {
			t.Errorf("%s: api %q, want %q", m.ID, m.API, want)
		}
	}
	for _, m := range c.WithBaseURL("http://127.0.0.1:9/v1", "K", "").Models() {
		if m.API != routing.APIOpenAI {
			t.Errorf("under one base URL %s is reached through %q", m.ID, m.API)
		}
	}
}

// TestRouteByAPI: a request names the APIs it can be sent to; models of
// others are never candidates, one named is model_api_unsupported, and
// within a tier the first API's models come first (a Messages request
// prefers Claude), after brand_pref's vendor.
func TestRouteByAPI(t *testing.T) {
	c := shipped(t)
	chat := []string{routing.APIOpenAI, routing.APIAzureOpenAI}
	messages := []string{routing.APIAnthropic, routing.APIOpenAI, routing.APIAzureOpenAI}
	base := routing.Request{QualityFloor: 0.75, InputTokens: 50, Difficulty: 0.5}
	cases := []struct {
		name    string
		model   string
		apis    []string
		brand   string
		ids     []string // the candidates of the first tier, in order
		code    string
		mention string
	}{
		{name: "chat mid skips Claude", model: "mid", apis: chat, ids: []string{"gpt-4.1"}},
		{name: "messages mid prefers Claude", model: "mid", apis: messages, ids: []string{"claude-sonnet-4", "gpt-4.1"}},
		{name: "messages alias reaches Claude", model: "claude-sonnet-4-5-20250929", apis: messages, ids: []string{"claude-sonnet-4", "gpt-4.1"}},
		{name: "messages brand_pref first", model: "mid", apis: messages, brand: "openai", ids: []string{"gpt-4.1", "claude-sonnet-4"}},
		{name: "no APIs named: catalog order", model: "mid", ids: []string{"gpt-4.1", "claude-sonnet-4"}},
		{name: "chat names Claude", model: "claude-opus-4", apis: chat, code: "model_api_unsupported", mention: "POST /v1/messages"},
		{name: "only anthropic names gpt", model: "gpt-4.1", apis: []string{routing.APIAnthropic}, code: "model_api_unsupported", mention: `"gpt-4.1" is reached through the openai API`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			r.Model, r.APIs, r.BrandPref, r.BrandPrefAllowed = tc.model, tc.apis, tc.brand, true
			d, err := routing.Route(c, routing.Feedback{}, r)
			if tc.code != "" {
				var de *domain.Error
				if !errors.As(err, &de) || de.Code != tc.code || !errors.Is(err, domain.ErrInvalid) || !strings.Contains(de.Message, tc.mention) {
					t.Fatalf("err %v, want %s mentioning %q", err, tc.code, tc.mention)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, cand := range d.Candidates {
				if cand.Model.Tier == d.Tier {
					ids = append(ids, cand.Model.ID)
				}
			}
			if strings.Join(ids, ",") != strings.Join(tc.ids, ",") {
				t.Fatalf("candidates %v, want %v", ids, tc.ids)
			}
		})
	}
}

// TestAutoSkipsTiersNoAPIServes: auto climbs past a tier with no model of
// the request's APIs; a catalog with none at all is model_api_unsupported.
func TestAutoSkipsTiersNoAPIServes(t *testing.T) {
	c, err := routing.ParseCatalog([]byte(`{"tiers":[
	 {"name":"nano","models":[{"id":"a","vendor":"anthropic","api":"anthropic","base_url":"http://127.0.0.1:9/v1","input_usd_per_1k":0.0001,"output_usd_per_1k":0.0004,"quality":0.9,"context_window":8192}]},
	 {"name":"mid","models":[{"id":"o","vendor":"openai","base_url":"http://127.0.0.1:9/v1","input_usd_per_1k":0.001,"output_usd_per_1k":0.004,"quality":0.9,"context_window":8192}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := routing.Route(c, routing.Feedback{}, routing.Request{QualityFloor: 0.75, InputTokens: 10, APIs: []string{routing.APIOpenAI}})
	if err != nil || d.Tier != "mid" || len(d.Candidates) != 1 {
		t.Fatalf("%+v %v", d, err)
	}
	_, err = routing.Route(c, routing.Feedback{}, routing.Request{QualityFloor: 0.75, InputTokens: 10, APIs: []string{routing.APIAzureOpenAI}})
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != "model_api_unsupported" {
		t.Fatalf("%v", err)
	}
	_, err = routing.Route(c, routing.Feedback{}, routing.Request{Model: "nano", QualityFloor: 0.75, InputTokens: 10, APIs: []string{routing.APIOpenAI}})
	if !errors.As(err, &de) || de.Code != "model_api_unsupported" {
		t.Fatalf("a tier with no model of the API: %v", err)
	}
}
