package gateway_test

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/readapi/gateway/messages"
	"github.com/arr-dev/arr/readapi/gateway/responses"
)

// TestUnreadableReplyErrorText (attack38, low): a reply a dialect cannot
// read (content as an array of parts, as some compatible servers send) is
// a 502 whose message carries the decoding error. Before issue 38 the
// dialects decoded into anonymous structs and the message said
// "Go struct field .choices.message.content"; domain/chat's named types
// now leak into the client's message as "Go struct field
// ReplyMessage.choices.message.content". The text the client reads changed.
func TestUnreadableReplyErrorText(t *testing.T) {
	reply := []byte(`{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"arr"}]},"finish_reason":"stop"}]}`)
	const before = "reading the chat completion: json: cannot unmarshal array into Go struct field .choices.message.content of type string"
	_, err := messages.FromChat(reply, "msg_1", 1, 2)
	if err == nil || err.Error() != before {
		t.Errorf("messages: %v\nbefore issue 38: %s", err, before)
	}
	req, err := responses.ParseRequest([]byte(`{"model":"m","input":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = responses.FromChat(reply, req, "resp_1", 5)
	if err == nil || strings.Contains(err.Error(), "ReplyMessage") {
		t.Errorf("responses: %v\nbefore issue 38: %s", err, before)
	}
}
