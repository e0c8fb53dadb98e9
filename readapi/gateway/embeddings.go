package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/embed"
	"github.com/arr-dev/arr/readapi/httpx"
)

// embeddingsPath is the route of embeddings.
const embeddingsPath = "/v1/embeddings"

// maxEmbeddingInputs is how many inputs one request may carry (OpenAI's
// limit).
const maxEmbeddingInputs = 2048

// embeddings serves POST /v1/embeddings: it parses the request, runs the
// embeddings use case (commands/embed) and writes OpenAI's list with the
// routing object and the X-Arr-* headers.
func (s *completer) embeddings(c *gin.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	req, err := parseEmbeddingRequest(body)
	if err != nil {
		return err
	}
	p, _ := httpx.PrincipalOf(c)
	caller := callerOf(p)
	res, err := s.app.Embeddings.Handle(c.Request.Context(), embed.Command{
		Caller: caller, Allow: caller.Allow(), Request: req, RequestID: c.GetString("request_id"),
	})
	if err != nil {
		return err
	}
	r, err := json.Marshal(res.Routing)
	if err != nil {
		return err
	}
	// The list is the use case's own compact JSON object: the routing
	// object goes in before its closing brace.
	out := make([]byte, 0, len(res.Body)+len(r)+12)
	out = append(out, res.Body[:len(res.Body)-1]...)
	out = append(append(append(out, `,"routing":`...), r...), '}')
	h := c.Writer.Header()
	h.Set("X-Arr-Tier", res.Routing.Tier)
	h.Set("X-Arr-Model", res.Routing.Model)
	h.Set("X-Arr-Cost-Per-1k", strconv.FormatFloat(res.Routing.CostPer1K, 'f', -1, 64))
	h.Set("X-Arr-Audit-Hash", res.Routing.AuditHash)
	h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(res.Routing.ElapsedSec, 'f', -1, 64))
	c.Data(http.StatusOK, "application/json", out)
	return nil
}

// parseEmbeddingRequest validates an OpenAI embeddings body: model,
// input, encoding_format, dimensions and user are checked; other fields
// are passed upstream as sent.
func parseEmbeddingRequest(body []byte) (*embed.Request, error) {
	r := &embed.Request{Body: body}
	if !json.Valid(body) {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (an embeddings request): it is not valid JSON")
	}
	if err := httpx.UniqueKeys(body); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, &r.Fields); err != nil || r.Fields == nil {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (an embeddings request): %v", errText(err))
	}
	if v, ok := r.Fields["model"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &r.Model); err != nil {
			return nil, invalid("invalid_type", "model", "model must be a string: auto, an embedding tier (embed-small, embed-large) or an embedding model id")
		}
	}
	var err error
	if r.Inputs, err = parseEmbeddingInput(r.Fields["input"]); err != nil {
		return nil, err
	}
	if v, ok := r.Fields["encoding_format"]; ok && !isNull(v) {
		var f string
		if json.Unmarshal(v, &f) != nil || (f != "float" && f != "base64") {
			return nil, invalid("invalid_value", "encoding_format", "encoding_format must be float or base64")
		}
		r.Base64 = f == "base64"
	}
	if v, ok := r.Fields["dimensions"]; ok && !isNull(v) {
		if json.Unmarshal(v, &r.Dimensions) != nil || r.Dimensions < 1 || r.Dimensions > 65536 {
			return nil, invalid("invalid_value", "dimensions", "dimensions must be an integer from 1 to 65536")
		}
	}
	if v, ok := r.Fields["user"]; ok && !isNull(v) {
		var u string
		if json.Unmarshal(v, &u) != nil {
			return nil, invalid("invalid_type", "user", "user must be a string")
		}
	}
	return r, nil
}

// parseEmbeddingInput reads input: a string, an array of strings, an
// array of tokens (one input) or an array of token arrays; nothing empty,
// at most 2048 inputs.
func parseEmbeddingInput(v json.RawMessage) ([]embed.Input, error) {
	const shape = "input must be a string, an array of strings, an array of token ids or an array of token-id arrays"
	if isNull(v) {
		return nil, invalid("missing_input", "input", "input is required: %s", shape)
	}
	var text string
	if json.Unmarshal(v, &text) == nil {
		if text == "" {
			return nil, invalid("empty_input", "input", "input must not be an empty string")
		}
		return []embed.Input{{Text: text}}, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		return nil, invalid("invalid_type", "input", "%s", shape)
	}
	if len(items) == 0 {
		return nil, invalid("empty_input", "input", "input must not be an empty array")
	}
	if len(items) > maxEmbeddingInputs {
		return nil, invalid("too_many_inputs", "input", "input has %d items; at most %d per request", len(items), maxEmbeddingInputs)
	}
	if t := bytes.TrimSpace(items[0]); len(t) > 0 && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		toks, err := tokenArray(v, "input")
		if err != nil {
			return nil, err
		}
		return []embed.Input{{Tokens: toks}}, nil
	}
	out := make([]embed.Input, len(items))
	texts := bytes.HasPrefix(bytes.TrimSpace(items[0]), []byte(`"`))
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		if texts {
			if json.Unmarshal(it, &out[i].Text) != nil {
				return nil, invalid("invalid_type", param, "%s must be a string like input[0]: an array of inputs holds strings only or token arrays only", param)
			}
			if out[i].Text == "" {
				return nil, invalid("empty_input", param, "%s must not be an empty string", param)
			}
			continue
		}
		toks, err := tokenArray(it, param)
		if err != nil {
			return nil, err
		}
		out[i].Tokens = toks
	}
	return out, nil
}

// tokenArray reads a non-empty array of token ids (integers of at least
// 0).
func tokenArray(v json.RawMessage, param string) ([]int64, error) {
	var toks []int64
	if json.Unmarshal(v, &toks) != nil {
		return nil, invalid("invalid_type", param, "%s must be an array of token ids (integers of at least 0); an array of inputs holds strings only or token arrays only", param)
	}
	if len(toks) == 0 {
		return nil, invalid("empty_input", param, "%s must not be an empty array of tokens", param)
	}
	for _, t := range toks {
		if t < 0 {
			return nil, invalid("invalid_value", param, "%s has the token id %d: token ids are integers of at least 0", param, t)
		}
	}
	return toks, nil
}
