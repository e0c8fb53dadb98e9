package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arr-dev/arr/domain/answer"
)

// structuredModel is a loopback language model for structured output: it
// decodes every request with openai-go's own request type and answers
// by the response_format's json_schema name: "valid" with JSON valid
// against structuredSchema built from the first source; "retry" with a
// wrong type unless the request is the retry that carries the
// validation error, then valid; "invalid" with a wrong type every time.
type structuredModel struct {
	*httptest.Server
	mu sync.Mutex
	// calls counts completions by json_schema name.
	calls map[string]int
	// last is the last request's response_format.json_schema.
	last   map[string]any
	retry  string // the retry prompt the service sent, if any
	errors atomic.Int64
}

func newStructuredModel(t testing.TB) *structuredModel {
	m := &structuredModel{calls: map[string]int{}}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *structuredModel) count(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[name]
}

var firstSource = regexp.MustCompile(`(?m)^\[1\] .*\n(.*)$`)

func (m *structuredModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	// openai-go decodes the request but for its response_format union
	// (it does not pick a variant when decoding), whose json_schema
	// variant is decoded on its own.
	var p openai.ChatCompletionNewParams
	var rf struct {
		ResponseFormat json.RawMessage `json:"response_format"`
	}
	var format shared.ResponseFormatJSONSchemaParam
	var kind struct{ Type string }
	if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &p) != nil || json.Unmarshal(body, &rf) != nil ||
		json.Unmarshal(rf.ResponseFormat, &kind) != nil || kind.Type != "json_schema" || json.Unmarshal(rf.ResponseFormat, &format) != nil || len(p.Messages) < 2 {
		m.errors.Add(1)
		http.Error(w, `{"error":{"message":"want a chat completion with response_format json_schema"}}`, http.StatusBadRequest)
		return
	}
	js := format.JSONSchema
	user := p.Messages[1].OfUser
	if user == nil || !user.Content.OfString.Valid() {
		m.errors.Add(1)
		http.Error(w, `{"error":{"message":"want the sources as the user's message"}}`, http.StatusBadRequest)
		return
	}
	retried := len(p.Messages) == 4 && p.Messages[2].OfAssistant != nil && p.Messages[3].OfUser != nil
	m.mu.Lock()
	m.calls[js.Name]++
	raw, _ := json.Marshal(js)
	m.last = nil
	_ = json.Unmarshal(raw, &m.last)
	if retried {
		m.retry = p.Messages[3].OfUser.Content.OfString.Value
	}
	m.mu.Unlock()
	fact := "no source"
	if s := firstSource.FindStringSubmatch(user.Content.OfString.Value); s != nil {
		fact, _, _ = strings.Cut(s[1], ". ")
	}
	valid, _ := json.Marshal(map[string]any{"answer": fact + " [1].", "sources_used": []int{1}})
	content := string(valid)
	switch {
	case js.Name == "invalid", js.Name == "retry" && !retried:
		content = `{"answer": 42, "sources_used": "one"}`
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-structured", "object": "chat.completion", "model": "structured-standin",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

const structuredSchema = `{"type":"object","properties":{"answer":{"type":"string","minLength":1},` +
	`"sources_used":{"type":"array","items":{"type":"integer","minimum":1},"minItems":1}},"required":["answer","sources_used"],"additionalProperties":false}`

func structuredBody(q, name, schema string) map[string]any {
	return map[string]any{"q": q, "response_format": map[string]any{"type": "json_schema",
		"json_schema": map[string]any{"name": name, "schema": json.RawMessage(schema), "strict": true}}}
}

// TestAnswerStructuredOutput: response_format json_schema on POST
// /api/v1/answer through a loopback model that reads the request as the
// openai-go SDK does. A valid reply is the answer, valid against the
// schema, with its sources and citations; it is cached under the schema
// (another schema is another answer) and recorded in AnswerSynthesized
// version 4. An invalid reply is retried once with the validation error
// and then answered; invalid twice is 502 structured_output_invalid.
// Hostile formats are 400s naming the field, and a remote $ref is never
// fetched.
func TestAnswerStructuredOutput(t *testing.T) {
	site, _ := citeSite(t)
	model := newStructuredModel(t)
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off", "ARR_ANSWER_LLM_BASE_URL="+model.URL+"/v1", "ARR_ANSWER_LLM_API_KEY=standin")
	e.up()
	e.createAccount("structured@example.com", "free")
	key := e.mint("structured@example.com", "answer").Secret
	if o, errs, code := indexAdd(t, e, site.srv.URL+"/ferry", site.srv.URL+"/tour", site.srv.URL+"/lens"); code != 0 || o.Added != 3 {
		t.Fatalf("index add: exit %d %+v %s", code, o, errs)
	}
	c := jsonschema.NewCompiler()
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(structuredSchema))
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem:///schema.json")
	if err != nil {
		t.Fatal(err)
	}
	assertValid := func(t *testing.T, a answerBody) {
		t.Helper()
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(a.Answer))
		if err != nil {
			t.Fatalf("the answer is not JSON: %v: %q", err, a.Answer)
		}
		if err := sch.Validate(v); err != nil {
			t.Fatalf("the answer is not valid against the schema: %v: %q", err, a.Answer)
		}
		var got struct {
			Answer      string `json:"answer"`
			SourcesUsed []int  `json:"sources_used"`
		}
		_ = json.Unmarshal([]byte(a.Answer), &got)
		if a.Synthesis != "llm" || len(a.Sources) == 0 || got.SourcesUsed[0] > len(a.Sources) || len(a.Citations) != 1 ||
			!strings.Contains(a.Sources[0].Content, strings.TrimSuffix(got.Answer, " [1].")) {
			t.Fatalf("want the first source's fact cited beside its sources: %+v", a)
		}
	}
	const q = "When does the island ferry leave the north pier?"

	t.Run("valid", func(t *testing.T) {
		status, a := postAnswer(t, e.answer, key, structuredBody(q, "valid", structuredSchema))
		if status != 200 {
			t.Fatalf("%d %+v", status, a)
		}
		assertValid(t, a)
		if a.Cached || model.count("valid") != 1 {
			t.Fatalf("cached %v, %d calls", a.Cached, model.count("valid"))
		}
		// The schema went upstream in OpenAI's json_schema form, as sent.
		model.mu.Lock()
		last := model.last
		model.mu.Unlock()
		up, _ := json.Marshal(last["schema"])
		var want, got any
		_ = json.Unmarshal([]byte(structuredSchema), &want)
		_ = json.Unmarshal(up, &got)
		if last["name"] != "valid" || last["strict"] != true || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("upstream json_schema %v", last)
		}
		status, b := postAnswer(t, e.answer, key, structuredBody(q, "valid", structuredSchema))
		if status != 200 || !b.Cached || b.Answer != a.Answer || model.count("valid") != 1 {
			t.Fatalf("the same schema again: %d cached=%v, %d calls", status, b.Cached, model.count("valid"))
		}
		// The same question as prose, or with another schema, is another answer.
		other := strings.Replace(structuredSchema, `"minLength":1`, `"minLength":2`, 1)
		status, b = postAnswer(t, e.answer, key, structuredBody(q, "valid", other))
		if status != 200 || b.Cached || model.count("valid") != 2 {
			t.Fatalf("another schema: %d cached=%v, %d calls", status, b.Cached, model.count("valid"))
		}
		pool, _ := openStore(t, e.dbURL)
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE event_type = 'AnswerSynthesized' AND schema_version = 4
			AND data::jsonb->'format'->>'type' = 'json_schema' AND data::jsonb->'format'->>'name' = 'valid'`).Scan(&n); err != nil || n != 2 {
			t.Fatalf("AnswerSynthesized with the format: %d, %v", n, err)
		}
	})

	t.Run("Sonar route with the openai-go client", func(t *testing.T) {
		// The official OpenAI Go client, changing only the base URL and
		// the key: the JSON answer is message.content, citations beside.
		client := openai.NewClient(option.WithBaseURL(e.answer+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
		var schema map[string]any
		_ = json.Unmarshal([]byte(structuredSchema), &schema)
		resp, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model:    "sonar",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("When does the island ferry leave the pier?")},
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "valid", Schema: schema, Strict: openai.Bool(true)}}},
		})
		if err != nil {
			t.Fatalf("openai-go against the Sonar route: %v", err)
		}
		content := resp.Choices[0].Message.Content
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(content))
		if err != nil || sch.Validate(v) != nil {
			t.Fatalf("message.content is not valid against the schema: %v %q", err, content)
		}
		var extra struct {
			Citations []string `json:"citations"`
		}
		if err := json.Unmarshal([]byte(resp.RawJSON()), &extra); err != nil || len(extra.Citations) == 0 {
			t.Fatalf("no citations beside the JSON: %v %s", err, resp.RawJSON())
		}
		// A malformed format is the route's 400 naming the field.
		_, err = client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model:    "sonar",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("When does the island ferry leave the pier?")},
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "h", Schema: map[string]any{"$ref": "http://127.0.0.1:1/x.json"}}}},
		})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "response_format.json_schema.schema") {
			t.Fatalf("a remote $ref on the Sonar route: %v", err)
		}
	})

	t.Run("invalid then valid is retried once", func(t *testing.T) {
		status, a := postAnswer(t, e.answer, key, structuredBody(q, "retry", structuredSchema))
		if status != 200 {
			t.Fatalf("%d %+v", status, a)
		}
		assertValid(t, a)
		model.mu.Lock()
		retry := model.retry
		model.mu.Unlock()
		if model.count("retry") != 2 || !strings.Contains(retry, "not valid against the JSON Schema") || !strings.Contains(retry, "want string") {
			t.Fatalf("%d calls, retry prompt %q", model.count("retry"), retry)
		}
	})

	t.Run("streamed", func(t *testing.T) {
		// A fresh schema (another cache key): sources, the validated JSON
		// as one delta, done with the same answer.
		body, _ := json.Marshal(map[string]any{"stream": true, "q": q, "response_format": map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "valid", "description": "streamed", "schema": json.RawMessage(structuredSchema)}}})
		resp := postAnswerStream(context.Background(), t, e.answer, key, string(body), nil)
		st := parseStreamed(t, readEvents(t, resp))
		st.wellFormed(t)
		var done answerBody
		if err := json.Unmarshal(st.done, &done); err != nil || len(st.deltas) != 1 || st.deltas[0] != done.Answer {
			t.Fatalf("deltas %q, done %s: %v", st.deltas, st.done, err)
		}
		assertValid(t, done)
	})

	t.Run("invalid twice is 502", func(t *testing.T) {
		status, a := postAnswer(t, e.answer, key, structuredBody(q, "invalid", structuredSchema))
		if status != http.StatusBadGateway || a.Error == nil || a.Error.Code != "structured_output_invalid" || !strings.Contains(a.Error.Message, "want string") {
			t.Fatalf("%d %+v", status, a.Error)
		}
		if model.count("invalid") != 2 {
			t.Fatalf("%d calls, want 2", model.count("invalid"))
		}
	})

	t.Run("hostile formats", func(t *testing.T) {
		var refHits atomic.Int64
		ref := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			refHits.Add(1)
			_, _ = w.Write([]byte(`{"type":"string"}`))
		}))
		defer ref.Close()
		deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"array","items":`, 200) + `{}` + strings.Repeat(`}`, 200) + `}}`
		huge := `{"type":"object","description":"` + strings.Repeat("x", answer.MaxSchemaBytes) + `"}`
		wide := `{"type":"object","properties":{` + strings.Repeat(`"p":{"type":"string"},`, 10) + `"q":{}}}`
		calls := model.count("h")
		for _, tc := range []struct {
			name  string
			body  any
			code  string
			field string
		}{
			{"a remote $ref", structuredBody(q, "h", `{"type":"object","properties":{"a":{"$ref":"`+ref.URL+`/schema.json"}}}`), "schema_invalid", "response_format.json_schema.schema"},
			{"a remote $schema", structuredBody(q, "h", `{"$schema":"`+ref.URL+`/meta","type":"object"}`), "schema_invalid", "response_format.json_schema.schema"},
			{"a deeply nested schema", structuredBody(q, "h", deep), "schema_too_deep", "response_format.json_schema.schema"},
			{"a huge schema", structuredBody(q, "h", huge), "schema_too_large", "response_format.json_schema.schema"},
			{"duplicate keys in the schema", structuredBody(q, "h", wide), "duplicate_key", "-"},
			{"not a JSON Schema", structuredBody(q, "h", `{"type":"strin"}`), "schema_invalid", "response_format.json_schema.schema"},
			{"a schema that is a string", map[string]any{"q": q, "response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "h", "schema": "{}"}}}, "schema_invalid", "response_format.json_schema.schema"},
			{"response_format a string", map[string]any{"q": q, "response_format": "json_schema"}, "response_format_invalid", "response_format"},
			{"strict a string", map[string]any{"q": q, "response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "h", "schema": map[string]any{}, "strict": "yes"}}}, "response_format_invalid", "response_format.json_schema"},
			{"no name", map[string]any{"q": q, "response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"schema": map[string]any{}}}}, "response_format_invalid", "response_format.json_schema.name"},
			{"json_object", map[string]any{"q": q, "response_format": map[string]any{"type": "json_object"}}, "response_format_unsupported", "response_format.type"},
			{"an unknown member", map[string]any{"q": q, "response_format": map[string]any{"type": "json_schema", "jsonschema": map[string]any{}}}, "unknown_field", "response_format.jsonschema"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, b := postAnswer(t, e.answer, key, tc.body)
				if status != 400 || b.Error == nil || !strings.HasPrefix(b.Error.Code, tc.code) || (tc.field != "-" && b.Error.Field != tc.field) {
					t.Fatalf("got %d %+v, want 400 %s on %q", status, b.Error, tc.code, tc.field)
				}
			})
		}
		if refHits.Load() != 0 || model.count("h") != calls {
			t.Fatalf("the schema server was asked %d times, the model %d", refHits.Load(), model.count("h")-calls)
		}
		// GET takes no response_format.
		status, _, b := askAnswer(t, http.MethodGet, e.answer, key, map[string]string{"q": q, "response_format": "json_schema"})
		if status != 400 || b.Error == nil {
			t.Fatalf("GET with response_format: %d %+v", status, b.Error)
		}
		// type text is prose: the model above takes no prose requests, so
		// the answer is extractive.
		status, b = postAnswer(t, e.answer, key, map[string]any{"q": q, "response_format": map[string]any{"type": "text"}})
		if status != 200 || b.Synthesis != "extractive" {
			t.Fatalf("type text: %d %+v", status, b)
		}
	})
	if n := model.errors.Load(); n != 1 {
		t.Fatalf("the model refused %d requests, want 1 (the prose one)", n)
	}
}

// TestAnswerStructuredNeedsModel: with no language model configured (no
// ARR_ANSWER_LLM_BASE_URL, no key), response_format json_schema is 400
// model_required, before any search; type text is still prose.
func TestAnswerStructuredNeedsModel(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_SEED=off", "ARR_ANSWER_LLM_BASE_URL=", "ARR_ANSWER_LLM_API_KEY=")
	e.up()
	e.createAccount("nomodel@example.com", "free")
	key := e.mint("nomodel@example.com", "answer").Secret
	status, b := postAnswer(t, e.answer, key, structuredBody("When does the ferry leave?", "valid", structuredSchema))
	if status != 400 || b.Error == nil || b.Error.Code != "model_required" || b.Error.Field != "response_format" || !strings.Contains(b.Error.Message, "language model") {
		t.Fatalf("%d %+v", status, b.Error)
	}
	status, b = postAnswer(t, e.answer, key, map[string]any{"q": "When does the ferry leave?", "response_format": map[string]any{"type": "text"}})
	if status != 200 || b.Synthesis == "llm" {
		t.Fatalf("type text: %d %+v", status, b)
	}
}
