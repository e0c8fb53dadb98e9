package upstreamtest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// A signature scoped to another region than the stand-in serves is a
// 403, as is a session token with the long-term BedrockAccessKey or
// another than the one a key was set with.
func TestBedrockStandInRegionAndToken(t *testing.T) {
	s := upstreamtest.Start(t)
	body := []byte(`{"messages":[{"role":"user","content":[{"text":"x"}]}]}`)
	s.SetBedrockRegion("eu-west-1")
	if resp, b := atkPost(t, s, body, time.Now()); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("signed for us-east-1 on a eu-west-1 stand-in: %d %s", resp.StatusCode, b)
	}
	s.SetBedrockRegion(upstreamtest.BedrockRegion)
	s.SetBedrockCredentials("AKIDPINNEDTOKEN00001", "pinned-secret", "the-token")
	for _, tc := range []struct {
		key, secret, token string
		want               int
	}{
		{upstreamtest.BedrockAccessKey, upstreamtest.BedrockSecretKey, "", http.StatusOK},
		{upstreamtest.BedrockAccessKey, upstreamtest.BedrockSecretKey, "some-token", http.StatusForbidden},
		{"AKIDPINNEDTOKEN00001", "pinned-secret", "the-token", http.StatusOK},
		{"AKIDPINNEDTOKEN00001", "pinned-secret", "another-token", http.StatusForbidden},
	} {
		req, err := http.NewRequest(http.MethodPost, s.BedrockURL+"/model/m/converse", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		sum := sha256.Sum256(body)
		creds := aws.Credentials{AccessKeyID: tc.key, SecretAccessKey: tc.secret, SessionToken: tc.token}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "bedrock", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Fatalf("%s with token %q: %d, want %d", tc.key, tc.token, resp.StatusCode, tc.want)
		}
	}
}
