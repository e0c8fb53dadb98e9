package gemini_test

// Attacks on the chat ⇄ Gemini translation (issue 40). Each test fails
// while the weakness it names is there.

import (
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/chat"
)

// A hostile or broken upstream's usageMetadata whose counts are each
// in int64 but whose sum is not (promptTokenCount near MaxInt64 and a
// toolUsePromptTokenCount; candidates and thoughts likewise) wraps the
// prompt, completion and total counts negative: a reply that bills
// negative tokens, crediting the account. Negatives are clamped to 0;
// sums must saturate as well, in the reply and in the stream.
func TestAttackUsageOverflowWrapsNegative(t *testing.T) {
	usage := `"usageMetadata":{"promptTokenCount":9223372036854775807,"toolUsePromptTokenCount":2,` +
		`"candidatesTokenCount":9223372036854775807,"thoughtsTokenCount":9223372036854775807}`
	check := func(where string, u *chat.Usage) {
		t.Helper()
		if u == nil {
			t.Fatalf("%s: no usage", where)
		}
		if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens < 0 || u.TotalTokens < u.PromptTokens || u.TotalTokens < u.CompletionTokens {
			t.Fatalf("%s: usage wrapped: prompt %d, completion %d, total %d", where, u.PromptTokens, u.CompletionTokens, u.TotalTokens)
		}
		if u.CompletionTokensDetails != nil && u.CompletionTokensDetails.ReasoningTokens > u.CompletionTokens {
			t.Fatalf("%s: reasoning %d over completion %d", where, u.CompletionTokensDetails.ReasoningTokens, u.CompletionTokens)
		}
	}
	c, err := gemini.Completion([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]},"finishReason":"STOP"}],`+usage+`}`), "m", 1)
	if err != nil {
		t.Fatal(err)
	}
	check("reply", c.Usage)
	s := gemini.NewStream("m", 1)
	if _, err := s.Event([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]},"finishReason":"STOP"}],` + usage + `}`)); err != nil {
		t.Fatal(err)
	}
	check("stream", s.Usage())
}

// An image URL the client names is handed to Google to fetch with the
// operator's credentials: a gs:// URI on Vertex AI is read with the
// operator's service account, so any client of the gateway can have the
// model read (and describe) objects in the operator's buckets
// ("gs://operator-private/customers/passport.png"). OpenAI's image_url
// is an http(s) or data: URL; anything else is the client's 400.
func TestAttackImageURLReadsOperatorBucket(t *testing.T) {
	for _, u := range []string{"gs://operator-private/customers/passport.png", "GS://operator-private/x.jpg", "file:///etc/shadow.png"} {
		t.Run(u, func(t *testing.T) {
			r := &chat.Request{Messages: []chat.Message{{Role: "user", Content: []chat.Part{chat.TextPart("describe"), {Type: "image_url", ImageURL: &chat.ImageURL{URL: u}}}}}}
			out, err := gemini.Request(r)
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("image_url %q sent as %s (%v); want the client's 400", u, out, err)
			}
		})
	}
}

// Events after the one that finished a choice (a hostile or broken
// upstream; the stream reader reads on to the body's end for trailing
// usage) still yield content and tool-call deltas after that choice's
// finish_reason and after the usage chunk: OpenAI clients take the
// finish_reason as the end of the choice, and the gateway has already
// counted the reply.
func TestAttackStreamContentAfterFinish(t *testing.T) {
	s := gemini.NewStream("m", 1)
	if _, err := s.Event([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"done"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}`)); err != nil {
		t.Fatal(err)
	}
	out, err := s.Event([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":" and more, unbilled"},{"functionCall":{"name":"rm","args":{"path":"/"}}}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range out {
		var ch chat.Chunk
		if err := json.Unmarshal(b, &ch); err != nil {
			t.Fatal(err)
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil && *c.Delta.Content != "" || len(c.Delta.ToolCalls) > 0 {
				t.Fatalf("a delta after the choice finished: %s", b)
			}
		}
	}
}

// A reply's tool call id carries the call's thoughtSignature as Gemini
// sent it, standard base64 ('+', '/', '='): the gateway hands that id
// on as the tool_use id of a /v1/messages reply, and Anthropic's
// Messages API refuses a tool_use id outside ^[a-zA-Z0-9_-]+$, so a
// Claude Code conversation that used a tool on Gemini cannot go on on a
// Claude model (failover, or the next turn routed elsewhere). The id
// must keep to that alphabet and still give the signature back as it
// came.
func TestAttackSignatureIDAlphabet(t *testing.T) {
	const sig = "CiQB+/x9zQ==" // what Gemini 3 sends: base64 of opaque bytes
	c, err := gemini.Completion([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"`+sig+`"}]},"finishReason":"STOP"}],"responseId":"r1"}`), "m", 1)
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := c.First()
	if len(ch.Message.ToolCalls) != 1 {
		t.Fatalf("reply %+v", c)
	}
	id := ch.Message.ToolCalls[0].ID
	if !regexp.MustCompile(`^[a-zA-Z0-9_-]+$`).MatchString(id) {
		t.Errorf("tool call id %q is outside Anthropic's tool_use id alphabet", id)
	}
	r := &chat.Request{Messages: []chat.Message{{Role: "user", Content: "weather?"},
		{Role: "assistant", ToolCalls: []chat.ToolCall{{ID: id, Type: "function", Function: chat.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
		{Role: "tool", ToolCallID: id, Content: `{"temp_c":18}`}}}
	out, err := gemini.Request(r)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Contents []struct {
			Parts []struct {
				ThoughtSignature string `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(out, &body); err != nil || len(body.Contents) < 2 || body.Contents[1].Parts[0].ThoughtSignature != sig {
		t.Fatalf("the signature sent back is not Gemini's %q: %s (%v)", sig, out, err)
	}
}
