package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/chat"
)

// The secrets a credential source hands out in these tests: none may
// appear in any error the client returns.
const (
	atkSecret = "atkSECRETaccessKEY0000000000000000000000"
	atkToken  = "atkSESSIONtoken11111111111111111111111111"
)

// atkChainEnv is awsEnv without the environment's keys, every AWS
// endpoint the SDK could dial pointed at a closed loopback port, and a
// shared config file holding profile (the default one).
func atkChainEnv(t *testing.T, profile string) {
	t.Helper()
	awsEnv(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := os.WriteFile(cfg, []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_CONFIG_FILE": cfg, "HOME": dir,
		"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_STS": "http://127.0.0.1:1",
		"AWS_ENDPOINT_URL_SSO": "http://127.0.0.1:1", "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:1",
	} {
		t.Setenv(k, v)
	}
}

// noSecret fails t when err's text holds a secret.
func noSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var ue *upstream.Error
	if errors.As(err, &ue) && (bytes.Contains(ue.Body, []byte(atkSecret)) || bytes.Contains(ue.Body, []byte(atkToken))) {
		t.Fatalf("Error.Body holds a secret: %s", ue.Body)
	}
	if s := err.Error(); strings.Contains(s, atkSecret) || strings.Contains(s, atkToken) {
		t.Fatalf("the error holds the secret key or session token: %s", s)
	}
}

// A credential_process whose output is not quite the JSON the SDK wants
// (a helper that prints a warning after it, an expiry in another format)
// fails the chain; the SDK's error quotes the whole output, secret key
// and session token included, and arr wraps it into the call's error,
// which the gateway logs and puts in its 502 body (UpstreamFailure).
func TestAtkBedrockCredentialProcessOutputNotInError(t *testing.T) {
	good := `{"Version":1,"AccessKeyId":"AKIDATKPROCESS000001","SecretAccessKey":"` + atkSecret + `","SessionToken":"` + atkToken + `"`
	for name, out := range map[string]string{
		"a warning line after the JSON": good + "}\nwarning: cached credentials refreshed",
		"an expiry not in RFC 3339":     good + `,"Expiration":"tomorrow"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "creds.sh")
			if err := os.WriteFile(script, []byte("#!/bin/sh\ncat <<'EOF'\n"+out+"\nEOF\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			atkChainEnv(t, "[default]\ncredential_process = /bin/sh "+script+"\n")
			c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			m := hostile(t, "application/json", []byte(`{}`))
			_, err = doBedrock(t, c, m, false, chatBody(t, m, false, user("x"), nil))
			if !errors.Is(err, upstream.ErrNotConfigured) {
				t.Fatalf("err = %v, want not configured", err)
			}
			noSecret(t, err)
		})
	}
}

// Credentials from a container endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI,
// here a loopback server) that never answers: Config.Timeout bounds the
// wait for an upstream's headers, yet the Bedrock call waits on the
// credential chain for as long as its caller's context lets it (the SDK's
// credential cache retrieves under a context whose cancellation it
// suppresses, and arr gives it none of its own), so every Bedrock call
// hangs behind one stuck credential source.
func TestAtkBedrockCredentialWaitBoundedByTimeout(t *testing.T) {
	release := make(chan struct{})
	creds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(creds.Close)
	t.Cleanup(func() { close(release) })
	atkChainEnv(t, "[default]\n")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", creds.URL+"/creds")
	c, err := upstream.New(upstream.Config{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m := hostile(t, "application/json", []byte(`{}`))
	// The caller's own deadline is fifty times Config.Timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.Do(ctx, m, upstream.Request{API: upstream.APIBedrock, Body: chatBody(t, m, false, user("x"), nil)})
	if ctx.Err() != nil {
		t.Fatalf("the call waited for the credentials until its caller's deadline (Config.Timeout 100ms): %v", err)
	}
	if !errors.Is(err, upstream.ErrNotConfigured) {
		t.Fatalf("err = %v", err)
	}
}

// Bedrock ends a ConverseStream with its metadata event (the usage),
// after messageStop. A stream cut between the two is taken as a clean
// end (io.EOF) with no usage at all: the gateway records a finished
// completion and bills its zero tokens. It must be ErrCut, so the
// caller estimates, as for any other cut.
func TestAtkBedrockStreamWithoutMetadataIsCut(t *testing.T) {
	c := bedrockClient(t, 5)
	body := bytes.Join([][]byte{
		frame(t, "event", "messageStart", `{"role":"assistant"}`),
		frame(t, "event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"`+strings.Repeat("word ", 200)+`"}}`),
		frame(t, "event", "contentBlockStop", `{"contentBlockIndex":0}`),
		frame(t, "event", "messageStop", `{"stopReason":"end_turn"}`),
	}, nil)
	m := hostile(t, "application/vnd.amazon.eventstream", body)
	resp, err := doBedrock(t, c, m, true, chatBody(t, m, true, user("x"), nil))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readStream(t, resp.Stream)
	if errors.Is(err, io.EOF) {
		t.Fatalf("a stream without its metadata ended cleanly: usage chunk %v, Stream.Usage %+v, after %d bytes of text",
			got.usage, resp.Stream.Usage(), len(got.text))
	}
	if !errors.Is(err, upstream.ErrCut) {
		t.Fatalf("ended with %v", err)
	}
}

// bedrockStart's doc bounds one frame's payload at 16 MiB ("the
// decoder's bound"); the SDK's decoder (eventstream v1.7.27) checks only
// that a frame's length is not zero, so one frame may be as large as the
// whole stream's bound (32 MiB), read into one buffer and relayed as one
// chunk.
func TestAtkBedrockFramePayloadBounded(t *testing.T) {
	c := bedrockClient(t, 5)
	text := strings.Repeat("a", 17<<20)
	body := bytes.Join([][]byte{
		frame(t, "event", "messageStart", `{"role":"assistant"}`),
		frame(t, "event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"`+text+`"}}`),
		frame(t, "event", "messageStop", `{"stopReason":"end_turn"}`),
		frame(t, "event", "metadata", `{"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`),
	}, nil)
	m := hostile(t, "application/vnd.amazon.eventstream", body)
	resp, err := doBedrock(t, c, m, true, chatBody(t, m, true, user("x"), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	for range 10 {
		data, err := resp.Stream.Next()
		if err != nil {
			if !errors.Is(err, upstream.ErrTooLarge) {
				t.Fatalf("ended with %v, want ErrTooLarge", err)
			}
			return
		}
		if len(data) > 16<<20 {
			t.Fatalf("a %d MiB chunk from one frame, over the 16 MiB frame bound", len(data)>>20)
		}
	}
}

// jsonModeReply is a Converse reply in JSON mode where the model says a
// few words before it calls the forced tool (models do).
const jsonModeReply = `{"output":{"message":{"role":"assistant","content":[{"text":"Here is the JSON you asked for:"},` +
	`{"toolUse":{"toolUseId":"tooluse_1","name":"json_response","input":{"city":"Paris"}}}]}},` +
	`"stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}}`

// JSON mode (response_format json_object) promises the client a JSON
// object as the content; the translation appends the forced tool's
// input to whatever text the model wrote first, so the content is not
// JSON at all.
func TestAtkBedrockJSONModeContentIsJSON(t *testing.T) {
	jsonMode := func(r *chat.Request) { r.ResponseFormat = map[string]any{"type": "json_object"} }
	t.Run("reply", func(t *testing.T) {
		c := bedrockClient(t, 5)
		m := hostile(t, "application/json", []byte(jsonModeReply))
		resp, err := doBedrock(t, c, m, false, chatBody(t, m, false, user("a city"), jsonMode))
		if err != nil {
			t.Fatal(err)
		}
		_, ch := completion(t, resp)
		if !json.Valid([]byte(*ch.Message.Content)) {
			t.Fatalf("JSON mode's content is not JSON: %q", *ch.Message.Content)
		}
	})
	t.Run("stream", func(t *testing.T) {
		c := bedrockClient(t, 5)
		body := bytes.Join([][]byte{
			frame(t, "event", "messageStart", `{"role":"assistant"}`),
			frame(t, "event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Here is the JSON you asked for:"}}`),
			frame(t, "event", "contentBlockStop", `{"contentBlockIndex":0}`),
			frame(t, "event", "contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"json_response"}}}`),
			frame(t, "event", "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"city\":\"Paris\"}"}}}`),
			frame(t, "event", "contentBlockStop", `{"contentBlockIndex":1}`),
			frame(t, "event", "messageStop", `{"stopReason":"tool_use"}`),
			frame(t, "event", "metadata", `{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}}`),
		}, nil)
		m := hostile(t, "application/vnd.amazon.eventstream", body)
		resp, err := doBedrock(t, c, m, true, chatBody(t, m, true, user("a city"), jsonMode))
		if err != nil {
			t.Fatal(err)
		}
		got, err := readStream(t, resp.Stream)
		if !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if !json.Valid([]byte(got.text)) {
			t.Fatalf("JSON mode's streamed content is not JSON: %q", got.text)
		}
	})
}

// Temporary credentials a refresher writes to the shared credentials
// file (saml2aws, gimme-aws-creds, a sidecar) are replaced before they
// expire. arr loads the chain once, the file's keys with it, and keeps
// signing with the old ones after Bedrock refuses them: every later call
// fails until a restart, though the doc says the chain is loaded "again
// after a failure" (Vertex forgets its token on a 401; Bedrock forgets
// nothing on a 403).
func TestAtkBedrockRotatedSharedCredentialsPickedUp(t *testing.T) {
	srv := upstreamtest.Start(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "credentials")
	write := func(key, secret string) {
		t.Helper()
		body := "[default]\naws_access_key_id = " + key + "\naws_secret_access_key = " + secret + "\naws_session_token = tok-" + key + "\n"
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	atkChainEnv(t, "[default]\n")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	srv.SetBedrockCredentials("AKIDATKROTATE0000001", "first-secret")
	write("AKIDATKROTATE0000001", "first-secret")
	c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, BreakerFailures: 10})
	if err != nil {
		t.Fatal(err)
	}
	m := bedrockModel(srv, "claude-rot")
	if _, err := doBedrock(t, c, m, false, chatBody(t, m, false, user("x"), nil)); err != nil {
		t.Fatal(err)
	}
	// The first key is rotated away; the file holds its successor.
	srv.SetBedrockCredentials("AKIDATKROTATE0000001", "revoked")
	srv.SetBedrockCredentials("AKIDATKROTATE0000002", "second-secret")
	write("AKIDATKROTATE0000002", "second-secret")
	var last error
	for range 3 {
		if _, last = doBedrock(t, c, m, false, chatBody(t, m, false, user("x"), nil)); last == nil {
			return
		}
	}
	t.Fatalf("three calls after the rotation all failed: %v", last)
}
