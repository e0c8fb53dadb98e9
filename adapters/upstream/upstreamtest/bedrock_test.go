package upstreamtest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// sdkClient is the AWS SDK's own Bedrock client pointed at the stand-in,
// with the given secret, without retries.
func sdkClient(s *upstreamtest.Server, secret string) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(s.BedrockURL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(upstreamtest.BedrockAccessKey, secret, ""),
	})
}

func userText(s string) []types.Message {
	return []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: s}}}}
}

// TestBedrockStandInSpeaksTheSDK: the SDK's client, signing as it does,
// is accepted, and reads the stand-in's reply and its event stream.
func TestBedrockStandInSpeaksTheSDK(t *testing.T) {
	s := upstreamtest.Start(t)
	c := sdkClient(s, upstreamtest.BedrockSecretKey)
	ctx := context.Background()
	model := "anthropic.claude-3-haiku-20240307-v1:0"
	out, err := c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: userText("hi there"),
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(100), Temperature: aws.Float32(0.2)}})
	if err != nil {
		t.Fatalf("Converse: %v", err)
	}
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	if got := msg.Content[0].(*types.ContentBlockMemberText).Value; got != "Hello from "+model+": hi there" || out.StopReason != types.StopReasonEndTurn {
		t.Fatalf("reply %q, stop %q", got, out.StopReason)
	}
	if out.Usage == nil || aws.ToInt32(out.Usage.OutputTokens) != 5 {
		t.Fatalf("usage %+v", out.Usage)
	}
	if got := s.LastConverse(model); got == nil || aws.ToFloat32(got.InferenceConfig.Temperature) != 0.2 {
		t.Fatalf("the stand-in's decoded request: %+v", got)
	}

	st, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(model), Messages: userText("stream me")})
	if err != nil {
		t.Fatalf("ConverseStream: %v", err)
	}
	var text strings.Builder
	var stop types.StopReason
	var usage *types.TokenUsage
	for ev := range st.GetStream().Events() {
		switch v := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			text.WriteString(v.Value.Delta.(*types.ContentBlockDeltaMemberText).Value)
		case *types.ConverseStreamOutputMemberMessageStop:
			stop = v.Value.StopReason
		case *types.ConverseStreamOutputMemberMetadata:
			usage = v.Value.Usage
		}
	}
	if err := st.GetStream().Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if text.String() != "Hello from "+model+": stream me" || stop != types.StopReasonEndTurn || usage == nil {
		t.Fatalf("streamed %q, stop %q, usage %+v", text.String(), stop, usage)
	}
}

// TestBedrockStandInRefuses: a wrong secret is a 403, a request the API
// refuses a 400 ValidationException, as the SDK reads them.
func TestBedrockStandInRefuses(t *testing.T) {
	s := upstreamtest.Start(t)
	ctx := context.Background()
	_, err := sdkClient(s, "not-the-secret").Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("m"), Messages: userText("x")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidSignatureException" {
		t.Fatalf("wrong secret: %v", err)
	}
	twoUsers := append(userText("a"), userText("b")...)
	_, err = sdkClient(s, upstreamtest.BedrockSecretKey).Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("m"), Messages: twoUsers})
	var ve *types.ValidationException
	if !errors.As(err, &ve) || !strings.Contains(ve.ErrorMessage(), "alternate") {
		t.Fatalf("two user turns: %v", err)
	}
}

// TestBedrockStandInRefusesUnknownFields: a body with a field the SDK's
// types do not hold, or shaped otherwise, is a 400 ValidationException.
func TestBedrockStandInRefusesUnknownFields(t *testing.T) {
	s := upstreamtest.Start(t)
	for _, tc := range []struct{ name, body string }{
		{"top-level field", `{"messages":[{"role":"user","content":[{"text":"x"}]}],"temperature":0.5}`},
		{"block field", `{"messages":[{"role":"user","content":[{"text":"x","cache_control":{"type":"ephemeral"}}]}]}`},
		{"inference field", `{"messages":[{"role":"user","content":[{"text":"x"}]}],"inferenceConfig":{"max_tokens":5}}`},
		{"not JSON", `{"messages":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := signedPost(t, s, []byte(tc.body))
			if resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("X-Amzn-Errortype"), "ValidationException") {
				t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"), b)
			}
		})
	}
}

// signedPost posts body to the stand-in's Converse route, signed.
func signedPost(t *testing.T, s *upstreamtest.Server, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.BedrockURL+"/model/m/converse", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: upstreamtest.BedrockAccessKey, SecretAccessKey: upstreamtest.BedrockSecretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "bedrock", "us-east-1", time.Now()); err != nil {
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

// TestBedrockStandInTakesTheTranslations: every Converse request of the
// chat translation's golden files is one the SDK's types hold as written.
func TestBedrockStandInTakesTheTranslations(t *testing.T) {
	s := upstreamtest.Start(t)
	files, err := filepath.Glob("../translate/bedrock/testdata/request/*.converse.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden requests: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var g struct {
				Request json.RawMessage `json:"request"`
			}
			if err := json.Unmarshal(b, &g); err != nil {
				t.Fatal(err)
			}
			if resp, body := signedPost(t, s, g.Request); resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
		})
	}
}
