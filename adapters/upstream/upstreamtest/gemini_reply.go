package upstreamtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/arr-dev/arr/domain/wait"
)

// check refuses what the Gemini API refuses of a decoded request: no
// contents, an empty turn, function responses that do not answer the
// calls of the turn before (as many, the same names), a function-call
// turn whose first call lacks its thought signature (Gemini 3), a
// declaration with both parameter forms, a JSON schema for a reply
// that is not JSON.
func (q *geminiRequest) check() error {
	if len(q.Contents) == 0 {
		return errors.New("* GenerateContentRequest.contents: contents is not specified")
	}
	var calls []string // the names called by the turn before
	for i, c := range q.Contents {
		if c == nil || len(c.Parts) == 0 || (c.Role != "user" && c.Role != "model") {
			return fmt.Errorf("* GenerateContentRequest.contents[%d]: a turn has a role user or model and parts", i)
		}
		var called, answered []string
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				if len(called) == 0 && len(p.ThoughtSignature) == 0 {
					return fmt.Errorf("Function call is missing a thought_signature in functionCall parts. contents[%d]", i)
				}
				called = append(called, p.FunctionCall.Name)
			}
			if p.FunctionResponse != nil {
				answered = append(answered, p.FunctionResponse.Name)
			}
		}
		slices.Sort(calls)
		slices.Sort(answered)
		if (len(answered) > 0 || len(calls) > 0) && !slices.Equal(calls, answered) {
			return fmt.Errorf("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn. contents[%d]", i)
		}
		calls = called
	}
	for _, t := range q.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name == "" || (d.Parameters != nil && d.ParametersJsonSchema != nil) {
				return errors.New("* GenerateContentRequest.tools: a function declaration has a name and at most one of parameters and parametersJsonSchema")
			}
		}
	}
	if g := q.GenerationConfig; g != nil && g.ResponseJsonSchema != nil && g.ResponseMIMEType != "application/json" {
		return errors.New("* GenerateContentRequest.generation_config.response_mime_type: responseJsonSchema needs application/json")
	}
	return nil
}

// geminiAnswer is the stand-in's deterministic answer to a request.
type geminiAnswer struct {
	model            string
	text             string
	calls            []*genai.FunctionCall
	finish           genai.FinishReason
	prompt, complete int
}

// userText is a user turn's text, an inline blob told as [type, n bytes].
func userText(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		b.WriteString(p.Text)
		if p.InlineData != nil {
			fmt.Fprintf(&b, " [%s, %d bytes]", p.InlineData.MIMEType, len(p.InlineData.Data))
		}
		if p.FileData != nil {
			fmt.Fprintf(&b, " [%s at %s]", p.FileData.MIMEType, p.FileData.FileURI)
		}
	}
	return b.String()
}

// answer is: the tool results echoed after function responses, function
// calls when functions are offered (mode not NONE; two when two are
// offered and none is named), a JSON object for a JSON reply, else
// "Hello from <model>: <last user text>"; cut to maxOutputTokens words.
func (q *geminiRequest) answer(model string) geminiAnswer {
	a := geminiAnswer{model: model, finish: genai.FinishReasonStop}
	var lastUser string
	promptBytes := 0
	for _, c := range append([]*genai.Content{q.SystemInstruction}, q.Contents...) {
		if c == nil {
			continue
		}
		t := userText(c)
		promptBytes += len(t) + 16
		if c.Role == "user" {
			lastUser = t
		}
	}
	a.prompt = promptBytes/4 + 1
	last := q.Contents[len(q.Contents)-1]
	var results []string
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			r, _ := json.Marshal(p.FunctionResponse.Response)
			results = append(results, p.FunctionResponse.Name+"="+string(r))
		}
	}
	names := q.callable()
	switch {
	case len(results) > 0:
		a.text = "Tool results: " + strings.Join(results, "; ")
	case len(names) > 0:
		for _, n := range names {
			a.calls = append(a.calls, &genai.FunctionCall{Name: n, Args: map[string]any{"input": lastUser}})
		}
		a.complete = 10 * len(names)
		return a
	case q.GenerationConfig != nil && q.GenerationConfig.ResponseMIMEType == "application/json":
		b, _ := json.Marshal(map[string]string{"model": model, "echo": lastUser})
		a.text = string(b)
	default:
		a.text = "Hello from " + model + ": " + lastUser
	}
	words := strings.SplitAfter(a.text, " ")
	if g := q.GenerationConfig; g != nil && g.MaxOutputTokens > 0 && len(words) > int(g.MaxOutputTokens) {
		words = words[:g.MaxOutputTokens]
		a.text, a.finish = strings.Join(words, ""), genai.FinishReasonMaxTokens
	}
	a.complete = len(words)
	return a
}

// callable is the functions the answer calls: none in mode NONE, the
// allowed names in mode ANY, else the first one or two declared.
func (q *geminiRequest) callable() []string {
	var decls []string
	for _, t := range q.Tools {
		for _, d := range t.FunctionDeclarations {
			decls = append(decls, d.Name)
		}
	}
	if len(decls) == 0 {
		return nil
	}
	if tc := q.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil {
		switch tc.FunctionCallingConfig.Mode {
		case genai.FunctionCallingConfigModeNone:
			return nil
		case genai.FunctionCallingConfigModeAny:
			if n := tc.FunctionCallingConfig.AllowedFunctionNames; len(n) > 0 {
				return n[:1]
			}
		}
	}
	return decls[:min(2, len(decls))]
}

// parts is the answer's parts: its text, or its calls (the first with a
// thought signature, as Gemini 3 signs a turn's first call).
func (a geminiAnswer) parts() []*genai.Part {
	if len(a.calls) == 0 {
		return []*genai.Part{{Text: a.text}}
	}
	var out []*genai.Part
	for i, c := range a.calls {
		p := &genai.Part{FunctionCall: c}
		if i == 0 {
			p.ThoughtSignature = []byte("sig-" + c.Name)
		}
		out = append(out, p)
	}
	return out
}

// response is one GenerateContentResponse of the answer: parts, with
// the finish reason and the usage when final.
func (a geminiAnswer) response(b Behavior, finish genai.FinishReason, parts []*genai.Part, final bool) *genai.GenerateContentResponse {
	c := &genai.Candidate{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}}
	r := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{c}, ModelVersion: a.model, ResponseID: "resp-" + a.model}
	if !final {
		return r
	}
	c.FinishReason = finish
	if !b.OmitUsage {
		r.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(a.prompt), CandidatesTokenCount: int32(a.complete),
			TotalTokenCount: int32(a.prompt + a.complete), CachedContentTokenCount: int32(min(b.CachedTokens, a.prompt))}
	}
	return r
}

// geminiStream writes the answer as streamGenerateContent?alt=sse does:
// an event per word (or one with the calls), the last with the finish
// reason and the usage, then the body ends (no [DONE]).
func (s *Server) geminiStream(w http.ResponseWriter, r *http.Request, a geminiAnswer, b Behavior, gb GeminiBehavior) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeGoogleError(w, 500, "no flusher")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	event := func(v any) {
		data, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "data: %s\r\n\r\n", data)
		fl.Flush()
	}
	var events [][]*genai.Part
	if len(a.calls) > 0 {
		events = append(events, a.parts())
	} else {
		for _, word := range strings.SplitAfter(a.text, " ") {
			events = append(events, []*genai.Part{{Text: word}})
		}
	}
	for i, parts := range events {
		if b.CutAfter > 0 && i >= b.CutAfter {
			panic(http.ErrAbortHandler) // breaks the connection off mid-stream
		}
		if gb.ErrorAfter > 0 && i >= gb.ErrorAfter {
			_, _ = fmt.Fprintf(w, "data: %s\r\n\r\n", googleError(503, "The model is overloaded. Please try again later.", "", ""))
			return
		}
		if i > 0 && b.ChunkDelay > 0 && !wait.Sleep(r.Context(), b.ChunkDelay) {
			return
		}
		event(a.response(b, a.finish, parts, i == len(events)-1 && !gb.NoFinish))
	}
}
