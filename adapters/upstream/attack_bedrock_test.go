package upstream_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/domain/routing"
)

// frame is one event-stream frame of the given message type and name.
func frame(t *testing.T, kind, name, payload string) []byte {
	t.Helper()
	var hs eventstream.Headers
	hs.Set(":message-type", eventstream.StringValue(kind))
	switch kind {
	case "event":
		hs.Set(":event-type", eventstream.StringValue(name))
	case "exception":
		hs.Set(":exception-type", eventstream.StringValue(name))
	default:
		hs.Set(":error-code", eventstream.StringValue(name))
	}
	var b bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&b, eventstream.Message{Headers: hs, Payload: []byte(payload)}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hostile is a Bedrock model on a loopback server that answers every
// call with the content type and body given, whatever the signature.
func hostile(t *testing.T, contentType string, body []byte) routing.Model {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return routing.Model{ID: "hostile", UpstreamModel: "m", BaseURL: srv.URL, API: "bedrock", Region: "us-east-1"}
}

// Malformed non-streamed replies are the upstream's failure: retryable,
// nothing kept for the client.
func TestBedrockMalformedReplies(t *testing.T) {
	for _, tc := range []struct{ name, contentType, body string }{
		{"not JSON", "application/json", `{"output":`},
		{"not a reply", "application/json", `{"hello":"world"}`},
		{"negative usage", "application/json", `{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"end_turn","usage":{"inputTokens":-100}}`},
		{"an event stream", "application/vnd.amazon.eventstream", ``},
		{"HTML", "text/html", `<html></html>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := bedrockClient(t, 5)
			m := hostile(t, tc.contentType, []byte(tc.body))
			_, err := doBedrock(t, c, m, false, chatBody(t, m, false, user("x"), nil))
			var ue *upstream.Error
			if !errors.As(err, &ue) || !ue.Retryable || ue.Body != nil {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// Broken streams: one that fails before its first chunk is a failed call
// (retryable); one that breaks after it ends with ErrCut.
func TestBedrockHostileStreams(t *testing.T) {
	start := frame(t, "event", "messageStart", `{"role":"assistant"}`)
	delta := frame(t, "event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"hi"}}`)
	// A prelude claiming a 20 MiB frame, its checksum right.
	huge := make([]byte, 12)
	binary.BigEndian.PutUint32(huge[0:], 20<<20)
	binary.BigEndian.PutUint32(huge[4:], 0)
	binary.BigEndian.PutUint32(huge[8:], crc32.ChecksumIEEE(huge[:8]))
	corrupt := bytes.Clone(delta)
	corrupt[len(corrupt)-6] ^= 0xff
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name        string
		contentType string
		body        []byte
		atOnce      bool
	}{
		{"JSON for a stream", "application/json", []byte(`{}`), true},
		{"garbage", "application/vnd.amazon.eventstream", []byte("not an event stream at all"), true},
		{"empty", "application/vnd.amazon.eventstream", nil, true},
		{"delta first", "application/vnd.amazon.eventstream", delta, true},
		{"a bad payload", "application/vnd.amazon.eventstream", frame(t, "event", "messageStart", `{`), true},
		{"an error frame", "application/vnd.amazon.eventstream", frame(t, "error", "InternalFailure", ``), true},
		{"truncated frame", "application/vnd.amazon.eventstream", cat(start, delta[:len(delta)/2]), false},
		{"checksum wrong", "application/vnd.amazon.eventstream", cat(start, corrupt), false},
		{"huge frame", "application/vnd.amazon.eventstream", cat(start, huge), false},
		{"unknown exception", "application/vnd.amazon.eventstream", cat(start, delta, frame(t, "exception", "weirdException", `{}`)), false},
		{"ends without stop", "application/vnd.amazon.eventstream", cat(start, delta), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := bedrockClient(t, 5)
			m := hostile(t, tc.contentType, tc.body)
			resp, err := doBedrock(t, c, m, true, chatBody(t, m, true, user("x"), nil))
			var ue *upstream.Error
			if tc.atOnce {
				if !errors.As(err, &ue) || !ue.Retryable || ue.Body != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = readStream(t, resp.Stream)
			if !errors.Is(err, upstream.ErrCut) || errors.Is(err, io.EOF) {
				t.Fatalf("the stream ended with %v", err)
			}
		})
	}
}
