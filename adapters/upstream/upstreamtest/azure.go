package upstreamtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"

	"github.com/openai/openai-go"
)

// AzureCall is what the Azure OpenAI stand-in saw of a request: the
// deployment of its path, its api-version, its credential headers and
// its body as it came.
type AzureCall struct {
	Deployment    string
	APIVersion    string
	APIKey        string
	Authorization string
	Body          []byte
}

// LastAzure returns the last Azure OpenAI request for deployment (ok
// false: none).
func (s *Server) LastAzure(deployment string) (AzureCall, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.azure[deployment]
	return c, ok
}

// azureChat answers POST /openai/deployments/{deployment}/chat/completions
// as Azure OpenAI does: a request without api-version is a 404 (no such
// resource), without api-key or an Entra ID bearer token a 401, a body
// openai-go's ChatCompletionNewParams cannot read or with a field it does
// not have a 400; the rest as the chat route answers (behaviors by the
// body's model).
func (s *Server) azureChat(w http.ResponseWriter, r *http.Request) {
	call := AzureCall{Deployment: r.PathValue("deployment"), APIVersion: r.URL.Query().Get("api-version"),
		APIKey: r.Header.Get("Api-Key"), Authorization: r.Header.Get("Authorization")}
	switch {
	case call.APIVersion == "":
		writeError(w, http.StatusNotFound, "Resource not found: api-version is required")
		return
	case call.APIKey == "" && call.Authorization == "":
		writeError(w, http.StatusUnauthorized, "Access denied due to missing subscription key or bearer token")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	call.Body = body
	s.mu.Lock()
	s.azure[call.Deployment] = call
	s.mu.Unlock()
	if err := decodeChatParams(body); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.complete(w, r)
}

// decodeChatParams reads body with openai-go's ChatCompletionNewParams,
// refusing a top-level field it does not have (stream aside, which the
// SDK sets itself).
func decodeChatParams(body []byte) error {
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return fmt.Errorf("body is not JSON: %v", err)
	}
	known := jsonFields(reflect.TypeFor[openai.ChatCompletionNewParams]())
	var extra []string
	for k := range raw {
		if !known[k] && k != "stream" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("unrecognized request arguments supplied: %v", extra)
	}
	var p openai.ChatCompletionNewParams
	if err := p.UnmarshalJSON(body); err != nil {
		return fmt.Errorf("not a chat completion request: %v", err)
	}
	if len(p.Messages) == 0 {
		return fmt.Errorf("messages: field required")
	}
	return nil
}
