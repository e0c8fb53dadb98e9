package bedrock_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/bedrock"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with the file, or writes it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the golden file (go test -update writes it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func indent(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func inputs(t *testing.T, dir, suffix string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*"+suffix))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test inputs in testdata/%s: %v", dir, err)
	}
	return files
}

func TestFromChatGolden(t *testing.T) {
	for _, in := range inputs(t, "request", ".chat.json") {
		name := strings.TrimSuffix(filepath.Base(in), ".chat.json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var r chat.Request
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			req, plan, err := bedrock.FromChat(&r, bedrock.Options{CachePoints: strings.HasPrefix(name, "cache_")})
			if err != nil {
				t.Fatalf("FromChat: %v", err)
			}
			golden(t, strings.TrimSuffix(in, ".chat.json")+".converse.json", indent(t, map[string]any{"request": req, "plan": plan}))
		})
	}
}

func TestFromChatRefuses(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"image URL", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://127.0.0.1/a.png"}}]}]}`, "data: URL"},
		{"image type", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/tiff;base64,AAAA"}}]}]}`, "image/tiff"},
		{"image not base64", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,***"}}]}]}`, "not base64"},
		{"file part", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:application/pdf;base64,AAAA"}}]}]}`, `"file"`},
		{"json mode and tools", `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"response_format":{"type":"json_object"}}`, "cannot be combined"},
		{"arguments not an object", `{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "not a JSON object"},
		{"unknown role", `{"messages":[{"role":"wizard","content":"x"}]}`, "unknown role"},
		{"tool name", `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"a b"}}]}`, "valid tool name"},
		{"only system", `{"messages":[{"role":"system","content":"x"}]}`, "at least one"},
		{"tool without id", `{"messages":[{"role":"user","content":"x"},{"role":"tool","content":"y"}]}`, "tool_call_id"},
		{"tool_choice", `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"sometimes"}`, "tool_choice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r chat.Request
			if err := json.Unmarshal([]byte(tc.body), &r); err != nil {
				t.Fatal(err)
			}
			_, _, err := bedrock.FromChat(&r, bedrock.Options{})
			if !errors.Is(err, bedrock.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalid naming %q", err, tc.want)
			}
		})
	}
}

var meta = bedrock.Meta{ID: "chatcmpl-bedrock-1", Model: "claude", Created: 1765000000}

func planFor(name string) bedrock.Plan {
	if strings.HasPrefix(name, "json_") {
		return bedrock.Plan{JSONTool: "city"}
	}
	return bedrock.Plan{}
}

func TestToChatGolden(t *testing.T) {
	for _, in := range inputs(t, "reply", ".converse.json") {
		name := strings.TrimSuffix(filepath.Base(in), ".converse.json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			res, err := bedrock.ToChat(b, planFor(name), meta)
			if err != nil {
				t.Fatalf("ToChat: %v", err)
			}
			var usage any
			if res.Usage != nil {
				usage = res.Usage.Tokens()
			}
			golden(t, strings.TrimSuffix(in, ".converse.json")+".chat.json", indent(t, map[string]any{"chat": json.RawMessage(res.Body), "tokens": usage}))
		})
	}
}

func TestToChatRefusesMalformed(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"not JSON", `{"output":`},
		{"no message", `{"stopReason":"end_turn"}`},
		{"no stop reason", `{"output":{"message":{"role":"assistant","content":[]}}}`},
		{"negative usage", `{"output":{"message":{"role":"assistant","content":[]}},"stopReason":"end_turn","usage":{"inputTokens":-5}}`},
		{"huge usage", `{"output":{"message":{"role":"assistant","content":[]}},"stopReason":"end_turn","usage":{"outputTokens":2000000000000}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := bedrock.ToChat([]byte(tc.body), bedrock.Plan{}, meta); !errors.Is(err, bedrock.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestStreamerGolden(t *testing.T) {
	for _, in := range inputs(t, "stream", ".events.json") {
		name := strings.TrimSuffix(filepath.Base(in), ".events.json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var events []struct {
				Event   string          `json:"event"`
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(b, &events); err != nil {
				t.Fatal(err)
			}
			s := bedrock.NewStreamer(planFor(name), meta)
			var out bytes.Buffer
			for _, ev := range events {
				chunks, err := s.Event(ev.Event, ev.Payload)
				if err != nil {
					t.Fatalf("%s: %v", ev.Event, err)
				}
				for _, c := range chunks {
					out.Write(c)
					out.WriteByte('\n')
				}
			}
			if !s.Stopped() || s.Usage() == nil {
				t.Fatalf("stopped %v, usage %v", s.Stopped(), s.Usage())
			}
			golden(t, strings.TrimSuffix(in, ".events.json")+".chunks.jsonl", out.Bytes())
		})
	}
}

func TestStreamerRefusesOutOfOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events [][2]string
	}{
		{"delta before start", [][2]string{{"contentBlockDelta", `{"delta":{"text":"x"}}`}}},
		{"two starts", [][2]string{{"messageStart", `{"role":"assistant"}`}, {"messageStart", `{"role":"assistant"}`}}},
		{"after stop", [][2]string{{"messageStart", `{}`}, {"messageStop", `{"stopReason":"end_turn"}`}, {"contentBlockDelta", `{"delta":{"text":"x"}}`}}},
		{"tool delta never started", [][2]string{{"messageStart", `{}`}, {"contentBlockDelta", `{"contentBlockIndex":3,"delta":{"toolUse":{"input":"{"}}}`}}},
		{"not JSON", [][2]string{{"messageStart", `{`}}},
		{"negative usage", [][2]string{{"messageStart", `{}`}, {"messageStop", `{}`}, {"metadata", `{"usage":{"outputTokens":-1}}`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := bedrock.NewStreamer(bedrock.Plan{}, meta)
			var err error
			for _, ev := range tc.events {
				if _, err = s.Event(ev[0], []byte(ev[1])); err != nil {
					break
				}
			}
			if !errors.Is(err, bedrock.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		header    string
		body      string
		typ       string
		retryable bool
	}{
		{"validation", 400, "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/", `{"message":"Malformed input request"}`, "ValidationException", false},
		{"throttling", 429, "ThrottlingException", `{"message":"Too many requests"}`, "ThrottlingException", true},
		{"quota at 400", 400, "ServiceQuotaExceededException", `{"message":"quota"}`, "ServiceQuotaExceededException", true},
		{"internal", 500, "", `{"message":"boom"}`, "Internal Server Error", true},
		{"unavailable", 503, "ServiceUnavailableException", `{}`, "ServiceUnavailableException", true},
		{"model error", 424, "ModelErrorException", `{"message":"the model failed"}`, "ModelErrorException", true},
		{"timeout", 408, "ModelTimeoutException", `{}`, "ModelTimeoutException", true},
		{"access denied", 403, "AccessDeniedException", `{"message":"no access"}`, "AccessDeniedException", true},
		{"signature", 403, "", `{"__type":"com.amazon.coral.service#InvalidSignatureException","message":"sig"}`, "InvalidSignatureException", true},
		{"model not found", 404, "ResourceNotFoundException", `{"Message":"no such model"}`, "ResourceNotFoundException", true},
		{"body not JSON", 413, "", `<html>`, "Request Entity Too Large", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := bedrock.Classify(tc.status, tc.header, []byte(tc.body))
			if f.Type != tc.typ || f.Retryable != tc.retryable {
				t.Fatalf("got %+v, want type %q retryable %v", f, tc.typ, tc.retryable)
			}
			if !f.Retryable {
				var e struct {
					Error struct{ Message, Type, Code string }
				}
				if f.Status != tc.status || json.Unmarshal(f.Body, &e) != nil || e.Error.Type != "invalid_request_error" || e.Error.Code != tc.typ {
					t.Fatalf("client error %d %s", f.Status, f.Body)
				}
			}
		})
	}
	if f := bedrock.StreamException("validationException", []byte(`{"message":"bad"}`)); f.Retryable || f.Status != 400 || f.Message != "bad" {
		t.Fatalf("stream validation: %+v", f)
	}
	if f := bedrock.StreamException("throttlingException", []byte(`{"message":"slow down"}`)); !f.Retryable {
		t.Fatalf("stream throttling: %+v", f)
	}
}

func TestUsageTokens(t *testing.T) {
	u := bedrock.Usage{InputTokens: 10, OutputTokens: 3, CacheReadInputTokens: 100, CacheWriteInputTokens: 50}
	if got, want := u.Tokens(), (routing.Tokens{Prompt: 160, Completion: 3, CacheRead: 100, CacheWrite: 50}); got != want {
		t.Fatalf("Tokens() = %+v, want %+v", got, want)
	}
	c := u.Chat()
	if c.PromptTokens != 160 || c.TotalTokens != 163 || c.PromptTokensDetails.CachedTokens != 100 {
		t.Fatalf("Chat() = %+v", c)
	}
}

func TestReadChat(t *testing.T) {
	r, err := bedrock.ReadChat([]byte(`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":"END","max_tokens":7}`))
	if err != nil || len(r.Stop) != 1 || r.Stop[0] != "END" || r.MaxCompletionTokens == nil || *r.MaxCompletionTokens != 7 {
		t.Fatalf("%+v, %v", r, err)
	}
	r, err = bedrock.ReadChat([]byte(`{"messages":[],"stop":["a","b"],"max_tokens":7,"max_completion_tokens":9}`))
	if err != nil || len(r.Stop) != 2 || *r.MaxCompletionTokens != 9 {
		t.Fatalf("%+v, %v", r, err)
	}
	for _, bad := range []string{`[1]`, `{"messages":"x"}`, `{"stop":5}`} {
		if _, err := bedrock.ReadChat([]byte(bad)); !errors.Is(err, bedrock.ErrInvalid) {
			t.Fatalf("%s: %v", bad, err)
		}
	}
}
