package upstream_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/chat"
)

// openAIError reads an OpenAI-shaped error body.
func openAIError(t *testing.T, b []byte) (typ, code, msg string) {
	t.Helper()
	var e struct {
		Error struct {
			Type, Code, Message string
		}
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("error body %s: %v", b, err)
	}
	return e.Error.Type, e.Error.Code, e.Error.Message
}

// A 400 ValidationException, the stand-in's own refusal (a tool result
// answering no tool call) or an injected one, is the request's: not
// retryable, kept for the client as an OpenAI error naming the exception,
// and however many there are the breaker stays closed.
func TestBedrockValidationKept(t *testing.T) {
	srv := upstreamtest.Start(t)
	const failures = 2
	c := bedrockClient(t, failures)
	m := bedrockModel(srv, "claude-v")
	orphan := append(user("x"), chat.Message{Role: "tool", ToolCallID: "call_nowhere", Content: "y"})
	body := chatBody(t, m, false, orphan, func(r *chat.Request) { r.Tools = []chat.Tool{weatherTool} })
	for i := range failures + 2 {
		_, err := doBedrock(t, c, m, false, body)
		var ue *upstream.Error
		if !errors.As(err, &ue) || ue.Status != 400 || ue.Retryable || ue.Type != "ValidationException" {
			t.Fatalf("call %d: %v (%+v)", i, err, ue)
		}
		if typ, code, msg := openAIError(t, ue.Body); typ != "invalid_request_error" || code != "ValidationException" || msg == "" {
			t.Fatalf("client body %s", ue.Body)
		}
	}
	streamBody := chatBody(t, m, true, user("x"), nil)
	srv.Set(m.UpstreamModel, upstreamtest.Behavior{Status: 400})
	for i := range failures + 2 {
		if _, err := doBedrock(t, c, m, true, streamBody); err == nil || err.(*upstream.Error).Retryable {
			t.Fatalf("injected call %d: %v", i, err)
		}
	}
	if st := c.BreakerStates()[m.ID]; st != "closed" {
		t.Fatalf("breaker %s after validation errors", st)
	}
	// A chat request Converse cannot carry is refused before any call.
	calls := srv.Calls(m.UpstreamModel)
	bad := chatBody(t, m, false, []chat.Message{{Role: "user", Content: []chat.Part{{Type: "image_url", ImageURL: &chat.ImageURL{URL: "http://127.0.0.1/x.png"}}}}}, nil)
	_, err := doBedrock(t, c, m, false, bad)
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Status != 400 || ue.Retryable || srv.Calls(m.UpstreamModel) != calls {
		t.Fatalf("an image URL: %v", err)
	}
}

// A 429 ThrottlingException (and a 5xx) is retryable: another upstream
// is tried, the breaker counts it and opens, then refuses without a call.
func TestBedrockThrottlingRetried(t *testing.T) {
	srv := upstreamtest.Start(t)
	const failures = 3
	for _, status := range []int{429, 503} {
		c := bedrockClient(t, failures)
		m := bedrockModel(srv, "claude-r"+string(rune('0'+status%10)))
		srv.Set(m.UpstreamModel, upstreamtest.Behavior{Status: status})
		for i := range failures {
			_, err := doBedrock(t, c, m, false, chatBody(t, m, false, user("x"), nil))
			var ue *upstream.Error
			if !errors.As(err, &ue) || !ue.Retryable || ue.Status != status || ue.Body != nil {
				t.Fatalf("%d, call %d: %v (%+v)", status, i, err, ue)
			}
			if status == 429 && ue.Type != "ThrottlingException" {
				t.Fatalf("type %q", ue.Type)
			}
		}
		calls := srv.Calls(m.UpstreamModel)
		if _, err := doBedrock(t, c, m, false, chatBody(t, m, false, user("x"), nil)); !errors.Is(err, upstream.ErrBreakerOpen) || srv.Calls(m.UpstreamModel) != calls {
			t.Fatalf("%d: after %d failures: %v", status, failures, err)
		}
	}
}

// A request signed with the wrong secret is the stand-in's 403
// InvalidSignatureException; an unknown key its
// UnrecognizedClientException: the operator's credentials, retryable
// (another upstream is tried) and never shown to the client.
func TestBedrockBadSignature(t *testing.T) {
	srv := upstreamtest.Start(t)
	awsEnv(t)
	for _, tc := range []struct{ key, secret, typ string }{
		{upstreamtest.BedrockAccessKey, "not-the-secret", "InvalidSignatureException"},
		{"AKIDUNKNOWN000000000", upstreamtest.BedrockSecretKey, "UnrecognizedClientException"},
	} {
		c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, AWSCredentials: credentials.NewStaticCredentialsProvider(tc.key, tc.secret, "")})
		if err != nil {
			t.Fatal(err)
		}
		m := bedrockModel(srv, "claude-sig")
		_, err = doBedrock(t, c, m, false, chatBody(t, m, false, user("x"), nil))
		var ue *upstream.Error
		if !errors.As(err, &ue) || ue.Status != 403 || !ue.Retryable || ue.Type != tc.typ || ue.Body != nil {
			t.Fatalf("%s: %v (%+v)", tc.typ, err, ue)
		}
	}
}

// A model without a region (and none in the environment) is not
// configured: retryable, no call.
func TestBedrockNoRegion(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := bedrockClient(t, 1)
	m := bedrockModel(srv, "claude-nr")
	m.Region = ""
	_, err := doBedrock(t, c, m, false, chatBody(t, m, false, user("x"), nil))
	if !errors.Is(err, upstream.ErrNotConfigured) || !err.(*upstream.Error).Retryable || srv.Calls(m.UpstreamModel) != 0 {
		t.Fatalf("err = %v, calls %d", err, srv.Calls(m.UpstreamModel))
	}
	if st := c.BreakerStates()[m.ID]; st != "" {
		t.Fatalf("breaker %q, want none asked", st)
	}
}

// Stream failures: an exception before anything is a failed call
// (throttling retryable, validation the request's own); one after some
// chunks, a connection cut or a stream without messageStop is ErrCut.
func TestBedrockStreamFailures(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := bedrockClient(t, 10)
	for _, tc := range []struct {
		name      string
		b         upstreamtest.Behavior
		bb        upstreamtest.BedrockBehavior
		retryable bool
	}{
		{"throttled at once", upstreamtest.Behavior{}, upstreamtest.BedrockBehavior{Exception: "throttlingException"}, true},
		{"invalid at once", upstreamtest.Behavior{}, upstreamtest.BedrockBehavior{Exception: "validationException"}, false},
	} {
		m := bedrockModel(srv, "claude-sf-"+tc.bb.Exception)
		srv.SetBedrock(m.UpstreamModel, tc.bb)
		_, err := doBedrock(t, c, m, true, chatBody(t, m, true, user("x"), nil))
		var ue *upstream.Error
		if !errors.As(err, &ue) || ue.Retryable != tc.retryable {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !tc.retryable && (ue.Status != 400 || ue.Type != "ValidationException") {
			t.Fatalf("%s: %+v", tc.name, ue)
		}
	}
	for _, tc := range []struct {
		name string
		b    upstreamtest.Behavior
		bb   upstreamtest.BedrockBehavior
		typ  string
	}{
		{"exception mid-stream", upstreamtest.Behavior{}, upstreamtest.BedrockBehavior{Exception: "modelStreamErrorException", ExceptionAfter: 2}, "ModelStreamErrorException"},
		{"cut", upstreamtest.Behavior{CutAfter: 2}, upstreamtest.BedrockBehavior{}, ""},
		{"no messageStop", upstreamtest.Behavior{}, upstreamtest.BedrockBehavior{NoStop: true}, ""},
	} {
		m := bedrockModel(srv, "claude-mid-"+tc.name)
		srv.Set(m.UpstreamModel, tc.b)
		srv.SetBedrock(m.UpstreamModel, tc.bb)
		resp, err := doBedrock(t, c, m, true, chatBody(t, m, true, user("one two three four"), nil))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := readStream(t, resp.Stream)
		var ee *upstream.EventError
		if !errors.Is(err, upstream.ErrCut) || errors.Is(err, io.EOF) || got.text == "" {
			t.Fatalf("%s: ended with %v after %q", tc.name, err, got.text)
		}
		if tc.typ != "" && (!errors.As(err, &ee) || ee.Type != tc.typ) {
			t.Fatalf("%s: %v, want an EventError %s", tc.name, err, tc.typ)
		}
	}
}

// A model id that is an inference profile's ARN (colons and a slash) is
// one escaped path segment, signed as sent.
func TestBedrockARNModel(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := bedrockClient(t, 1)
	m := bedrockModel(srv, "claude-arn")
	m.UpstreamModel = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-v1:0"
	resp, err := doBedrock(t, c, m, false, chatBody(t, m, false, user("hi"), nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, ch := completion(t, resp); *ch.Message.Content != "Hello from "+m.UpstreamModel+": hi" {
		t.Fatalf("reply %s", resp.Data)
	}
}

// The standard chain never asks the EC2 instance metadata service unless
// Config.AWSUseIMDS says so, even where the environment does not disable
// it: with no other credentials the model is not configured, and a
// loopback stand-in for the service is not called; with AWSUseIMDS it is.
func TestBedrockNoIMDSUnlessAsked(t *testing.T) {
	srv := upstreamtest.Start(t)
	awsEnv(t)
	var hits atomic.Int32
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(imds.Close)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "")
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	for _, useIMDS := range []bool{false, true} {
		c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, AWSUseIMDS: useIMDS})
		if err != nil {
			t.Fatal(err)
		}
		m := bedrockModel(srv, "claude-imds")
		_, err = doBedrock(t, c, m, false, chatBody(t, m, false, user("x"), nil))
		if !errors.Is(err, upstream.ErrNotConfigured) || srv.Calls(m.UpstreamModel) != 0 {
			t.Fatalf("AWSUseIMDS %v: %v", useIMDS, err)
		}
		if got := hits.Load(); (got > 0) != useIMDS {
			t.Fatalf("AWSUseIMDS %v: the metadata service was asked %d times", useIMDS, got)
		}
	}
}
