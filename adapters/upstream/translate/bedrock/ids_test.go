package bedrock_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/bedrock"
)

// A tool call id Converse does not take is sent as "t" and 16 hex digits
// of its SHA-256, one longer when a client's own id is already that; ids
// that fit are sent as they are; a reply naming a made-up id gives the
// client its own back.
func TestToolIDsMappedOneToOne(t *testing.T) {
	odd := "functions.get_weather:0"
	sum := sha256.Sum256([]byte(odd))
	h := hex.EncodeToString(sum[:])
	taken := "t" + h[:16] // a client id that is what odd would become
	ids := []string{odd, taken, "call_ok-1"}
	body := `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[`
	for i, id := range ids {
		if i > 0 {
			body += ","
		}
		body += `{"id":"` + id + `","type":"function","function":{"name":"f","arguments":"{}"}}`
	}
	body += `]}`
	for _, id := range ids {
		body += `,{"role":"tool","tool_call_id":"` + id + `","content":"r"}`
	}
	body += `],"tools":[{"type":"function","function":{"name":"f"}}]}`
	r, err := bedrock.ReadChat([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	conv, plan, err := bedrock.FromChat(&r, bedrock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var uses, results []string
	for _, m := range conv.Messages {
		for _, b := range m.Content {
			if b.ToolUse != nil {
				uses = append(uses, b.ToolUse.ToolUseID)
			}
			if b.ToolResult != nil {
				results = append(results, b.ToolResult.ToolUseID)
			}
		}
	}
	want := []string{"t" + h[:17], taken, "call_ok-1"}
	for i := range want {
		if uses[i] != want[i] || results[i] != want[i] {
			t.Fatalf("toolUseIds %q, results %q, want %q", uses, results, want)
		}
	}
	reply := `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"` + want[0] + `","name":"f","input":{}}},` +
		`{"toolUse":{"toolUseId":"tooluse_new","name":"f","input":{}}}]}},"stopReason":"tool_use"}`
	res, err := bedrock.ToChat([]byte(reply), plan, bedrock.Meta{ID: "x", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct{ ID string } `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(res.Body, &c); err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.ToolCalls; len(got) != 2 || got[0].ID != odd || got[1].ID != "tooluse_new" {
		t.Fatalf("reply tool calls %+v", got)
	}
}

// Empty stop strings are no stop sequence; the others are kept.
func TestStopEmptyStringsDropped(t *testing.T) {
	for body, want := range map[string]int{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":""}`:         0,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":["","END"]}`: 1,
	} {
		r, err := bedrock.ReadChat([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		conv, _, err := bedrock.FromChat(&r, bedrock.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		if conv.InferenceConfig != nil {
			got = len(conv.InferenceConfig.StopSequences)
		}
		if got != want {
			t.Fatalf("%s: %d stop sequences, want %d", body, got, want)
		}
	}
}
