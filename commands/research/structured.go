package research

// Structured output: an answer written as one JSON document valid
// against the request's JSON Schema (response_format json_schema).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/text"
)

// schemaField is the field a schema's errors name.
const schemaField = "response_format.json_schema.schema"

// schemaLocation is where a request's schema is compiled as: a URL of no
// scheme anything serves, against which a relative $ref ("other.json")
// resolves to a document refusedLoader refuses.
const schemaLocation = "mem:///response_format.json"

// ParseResponseFormat reads a request's response_format
// (answer.ParseResponseFormat) and checks and compiles its JSON Schema,
// carrying the compiled schema in the format's Compiled. The schema's
// JSON is decoded strictly (decodeStrict: no member twice, every number
// a finite float64 of sane magnitude) and checked against the closed
// subset of JSON Schema arr takes (checkSubset: known keywords only,
// local acyclic $refs, a bounded expansion) before the library sees it,
// so that a schema costly to compile or to validate against is refused
// with a validation error naming the field, as is one that does not
// compile. It is what every route that takes response_format calls.
func ParseResponseFormat(raw json.RawMessage) (answer.ResponseFormat, error) {
	f, err := answer.ParseResponseFormat(raw)
	if err != nil || !f.Structured() {
		return f, err
	}
	sch, err := compileSchema(f)
	if err != nil {
		return answer.ResponseFormat{}, err
	}
	f.Compiled = sch
	return f, nil
}

// refusedLoader loads no schema: a $ref or $schema outside the request's
// schema (but JSON Schema's own meta-schemas, which the library holds) is
// refused, so compiling never reads a file or the network.
type refusedLoader struct{}

func (refusedLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not loaded: a response_format schema may refer only to itself (\"$ref\": \"#/$defs/…\")", text.Bound(url, 200))
}

// compileSchema checks f's schema against the closed subset and compiles
// it (draft 2020-12; formats are annotations, as the draft says).
func compileSchema(f answer.ResponseFormat) (*jsonschema.Schema, error) {
	doc, err := decodeStrict(f.Schema)
	if err != nil {
		return nil, domain.Invalid("schema_invalid", schemaField, "%s: %v", schemaField, err)
	}
	if err := checkSubset(doc.value); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusedLoader{})
	if err := c.AddResource(schemaLocation, doc.value); err != nil {
		return nil, domain.Invalid("schema_invalid", schemaField, "%s: %s", schemaField, text.Bound(err.Error(), 500))
	}
	sch, err := c.Compile(schemaLocation)
	if err != nil {
		return nil, domain.Invalid("schema_invalid", schemaField, "%s is not a JSON Schema arr can use: %s", schemaField, text.Bound(err.Error(), 500))
	}
	return sch, nil
}

// CheckFormat refuses a structured response format when no language
// model is configured (extractive answers cannot follow a schema): a
// validation error model_required.
func (r *Researcher) CheckFormat(f answer.ResponseFormat) error {
	if f.Structured() && r.cfg.Model == nil {
		return domain.Invalid("model_required", "response_format",
			"response_format json_schema needs a language model, and this answer service has none configured (its answers are extractive); ask without response_format, or configure ARR_ANSWER_LLM_BASE_URL and ARR_ANSWER_LLM_API_KEY")
	}
	return nil
}

const structuredPrompt = `You answer questions using only the numbered sources given.
Reply with one JSON document and nothing else: no prose around it, no code fence.
The JSON must be valid against this JSON Schema (named %q%s):
%s
Where a string states a fact from a source, cite it with the source's number in square brackets, like [1]; use only numbers of the sources listed.
If the sources do not answer the question, still reply with JSON valid against the schema, saying so where the schema allows.`

// writeStructured asks the model for the answer as JSON against the
// request's schema, with the sources numbered; a reply that is not valid
// is sent back once with its validation error, and a second invalid reply
// fails with *answer.StructuredOutputInvalid. A model that does not
// answer fails with model_unavailable (there is no extractive JSON).
func (r *Researcher) writeStructured(ctx context.Context, req answer.Request, docs []document, res *Result) error {
	if err := r.CheckFormat(req.Format); err != nil {
		return err
	}
	sch, err := formatSchema(req.Format)
	if err != nil {
		return err
	}
	rk := r.rank(req, docs, res)
	defer rk.record(r, res)
	all := r.numberedSources(rk.srcs)
	progressOf(ctx).sources(all)
	t := time.Now()
	lr := r.structuredRequest(req, all)
	var reply string
	for try := 0; ; try++ {
		content, err := r.complete(ctx, lr, res)
		if err != nil {
			return err
		}
		reply, err = checkReply(sch, content)
		if err == nil {
			break
		}
		reason := text.Bound(err.Error(), 2000)
		if try == 1 {
			return &answer.StructuredOutputInvalid{Reason: reason}
		}
		lr.Messages = append(lr.Messages, llm.Message{Role: "assistant", Content: content},
			llm.Message{Role: "user", Content: "That reply is not valid against the JSON Schema: " + reason + "\nReply again with only the corrected JSON document."})
	}
	res.Costs.SynthesisUS = time.Since(t).Microseconds()
	res.Answer, res.Synthesis, res.Sources = reply, answer.LLM, all
	snippets(res, rk.srcs, all)
	progressOf(ctx).delta(reply)
	return nil
}

// formatSchema is f's compiled schema: the one ParseResponseFormat
// carried, or compiled now for a format that was not parsed by it.
func formatSchema(f answer.ResponseFormat) (*jsonschema.Schema, error) {
	if sch, ok := f.Compiled.(*jsonschema.Schema); ok && sch != nil {
		return sch, nil
	}
	return compileSchema(f)
}

// structuredRequest is the completion that asks for req's answer as JSON.
func (r *Researcher) structuredRequest(req answer.Request, srcs []answer.Source) llm.Request {
	f := req.Format
	desc := ""
	if f.Description != "" {
		desc = ": " + f.Description
	}
	maxTokens := 1500
	if req.Tier == answer.Pro || req.Mode == answer.Deep {
		maxTokens = 3000
	}
	lr := llm.Request{Model: r.cfg.ModelName, MaxTokens: maxTokens, Temperature: 0.2, Messages: []llm.Message{
		{Role: "system", Content: fmt.Sprintf(structuredPrompt, f.Name, desc, f.Schema)},
		{Role: "user", Content: sourcesPrompt(req.Query, srcs)},
	}, ResponseFormat: &llm.ResponseFormat{Type: string(answer.FormatJSONSchema), JSONSchema: llm.JSONSchema{
		Name: f.Name, Description: f.Description, Schema: json.RawMessage(f.Schema), Strict: f.Strict}}}
	if req.Tier == answer.Pro && r.cfg.ModelName == "auto" {
		lr.QualityFloor = r.cfg.ProQualityFloor
	}
	return lr
}

// complete is one completion, counted in res; a model that fails is
// model_unavailable (503).
func (r *Researcher) complete(ctx context.Context, lr llm.Request, res *Result) (string, error) {
	out, err := r.cfg.Model.Complete(ctx, lr)
	res.Costs.LLMCalls++
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("writing the structured answer: %w", context.Cause(ctx))
		}
		r.cfg.Logger.Warn("language model unavailable for a structured answer", "err", err)
		return "", &domain.Error{Kind: domain.ErrUnavailable, Code: "model_unavailable",
			Message: "the language model that writes structured answers is unavailable; retry shortly"}
	}
	res.Costs.PromptTokens += out.PromptTokens
	res.Costs.CompletionTokens += out.CompletionTokens
	res.Costs.CostMicroUSD += out.CostMicroUSD
	res.Model = out.Model
	return out.Content, nil
}

// checkReply takes the model's reply as one JSON document (a Markdown
// code fence around it is taken off), decoded strictly (decodeStrict: a
// member given twice, or a number beyond a finite float64 of sane
// magnitude, is refused), validates that value against sch and returns
// it re-encoded (compact, members in the order written): what is served
// is the value validated, never the model's raw text. The validation's
// error text is bounded (maxReplyErrorChars); its cost is bounded by the
// schema's (checkSubset) and the reply's size.
func checkReply(sch *jsonschema.Schema, reply string) (string, error) {
	s := strings.TrimSpace(reply)
	if body, ok := strings.CutPrefix(s, "```"); ok && strings.HasSuffix(body, "```") {
		body = strings.TrimSuffix(body, "```")
		body = strings.TrimPrefix(body, "json")
		s = strings.TrimSpace(body)
	}
	if s == "" {
		return "", errors.New("the reply is empty, not a JSON document")
	}
	doc, err := decodeStrict(s)
	if err != nil {
		return "", fmt.Errorf("the reply is not one JSON document arr takes: %w", err)
	}
	if err := sch.Validate(doc.value); err != nil {
		return "", errors.New(firstError(err))
	}
	return doc.text, nil
}

// maxReplyErrorChars bounds a reply's validation error text.
const maxReplyErrorChars = 2000

// firstError is err's text, led by its first leaf cause and bounded.
func firstError(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return text.Bound(err.Error(), maxReplyErrorChars)
	}
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	msg := leaf.Error()
	if leaf != ve && len(ve.Causes) > 1 {
		msg += " (and other errors)"
	}
	return text.Bound(msg, maxReplyErrorChars)
}
