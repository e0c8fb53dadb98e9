package upstream_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// The Gemini stand-in speaks what Google's own Go client speaks: the
// official genai client, its base URL the stand-in's, generates and
// streams a reply, and calls a function, with an explicit API key (no
// credentials looked up).
func TestGeminiStandInSpeaksTheSDK(t *testing.T) {
	srv := upstreamtest.Start(t)
	srv.SetGeminiKey("gk-sdk")
	root := strings.TrimSuffix(srv.GeminiURL(), "v1beta")
	ctx := context.Background()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "gk-sdk", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: root, APIVersion: "v1beta"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Models.GenerateContent(ctx, "gemini-sdk", genai.Text("hello sdk"), &genai.GenerateContentConfig{Temperature: genai.Ptr[float32](0.1)})
	if err != nil || r.Text() != "Hello from gemini-sdk: hello sdk" || r.UsageMetadata.CandidatesTokenCount != 5 {
		t.Fatalf("reply %+v (%v)", r, err)
	}
	var text strings.Builder
	for ev, err := range c.Models.GenerateContentStream(ctx, "gemini-sdk", genai.Text("stream sdk"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ev.Text())
	}
	if text.String() != "Hello from gemini-sdk: stream sdk" {
		t.Fatalf("stream %q", text.String())
	}
	tools := []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "lookup", ParametersJsonSchema: map[string]any{"type": "object"}}}}}
	r, err = c.Models.GenerateContent(ctx, "gemini-sdk", genai.Text("Oslo"), &genai.GenerateContentConfig{Tools: tools})
	if err != nil || len(r.FunctionCalls()) != 1 || r.FunctionCalls()[0].Name != "lookup" || len(r.Candidates[0].Content.Parts[0].ThoughtSignature) == 0 {
		t.Fatalf("calls %+v (%v)", r, err)
	}
}
