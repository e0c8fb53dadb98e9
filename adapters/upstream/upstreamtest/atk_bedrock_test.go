package upstreamtest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// atkPost posts body to the stand-in's Converse route signed with its
// key as of at.
func atkPost(t *testing.T, s *upstreamtest.Server, body []byte, at time.Time) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.BedrockURL+"/model/m/converse", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: upstreamtest.BedrockAccessKey, SecretAccessKey: upstreamtest.BedrockSecretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "bedrock", "us-east-1", at); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

// AWS refuses a signature dated more than 5 minutes from its clock
// (403 InvalidSignatureException, "Signature expired"); the stand-in
// takes one two hours old or ahead, so a signer that signed once and
// reused the signature, or signed with a wrong clock, passes every test.
func TestAtkBedrockStandInRefusesStaleSignatures(t *testing.T) {
	s := upstreamtest.Start(t)
	body := []byte(`{"messages":[{"role":"user","content":[{"text":"x"}]}]}`)
	for _, d := range []time.Duration{-2 * time.Hour, 2 * time.Hour} {
		resp, b := atkPost(t, s, body, time.Now().Add(d))
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("signed %v from now: %d %s", d, resp.StatusCode, b)
		}
	}
}

// Bodies the Converse API refuses with a 400 ValidationException that the
// stand-in answers with 200, so the translation's tests cannot see that
// arr sends them: an empty stop sequence (what "stop": null becomes), a
// toolUseId outside [a-zA-Z0-9_-]{1,64} (another provider's tool call id
// passed on), a temperature over 1, an input schema that is not an
// object.
func TestAtkBedrockStandInRefusesWhatConverseRefuses(t *testing.T) {
	s := upstreamtest.Start(t)
	const msg = `"messages":[{"role":"user","content":[{"text":"x"}]}]`
	tools := `"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]}`
	for name, body := range map[string]string{
		"empty stop sequence": `{` + msg + `,"inferenceConfig":{"stopSequences":[""]}}`,
		"tool use id":         `{"messages":[{"role":"user","content":[{"text":"x"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"functions.f:0","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"functions.f:0","content":[{"text":"r"}]}}]}],` + tools + `}`,
		"temperature 5":       `{` + msg + `,"inferenceConfig":{"temperature":5}}`,
		"schema a string":     `{` + msg + `,"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":"nope"}}}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			resp, b := atkPost(t, s, []byte(body), time.Now())
			if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("X-Amzn-Errortype"), "ValidationException") {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
		})
	}
}
