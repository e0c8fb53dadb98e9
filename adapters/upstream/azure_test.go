package upstream_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/routing"
)

// TestAzureOpenAI: an azure_openai model is called at
// {base_url}/openai/deployments/{deployment}/chat/completions with its
// api-version and the api-key header (an Entra ID bearer token instead
// when its credentials_env is set), the chat body as it is; the
// stand-in reads it with openai-go's types, and refuses a field they do
// not have (a 400 passed on, not retried).
func TestAzureOpenAI(t *testing.T) {
	srv := upstreamtest.Start(t)
	keys := map[string]string{"AZ_KEY": "sk-az", "AZ_TOKEN": "entra-token"}
	c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, StreamIdleTimeout: 5 * time.Second,
		APIKey: func(env string) string { return keys[env] }})
	if err != nil {
		t.Fatal(err)
	}
	root := strings.TrimSuffix(srv.URL, "/v1") // https://{resource}.openai.azure.com
	m := routing.Model{ID: "az", UpstreamModel: "gpt-4o", BaseURL: root, APIKeyEnv: "AZ_KEY",
		API: routing.APIAzureOpenAI, APIVersion: "2024-10-21", Deployment: "gpt4o-prod"}
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi <there> & all"}],"temperature":0.2}`
	ctx := context.Background()

	resp, err := c.Do(ctx, m, upstream.Request{API: upstream.APIAzureOpenAI, Body: []byte(body)})
	if err != nil || !strings.Contains(string(resp.Data), `Hello from gpt-4o: hi \u003cthere\u003e \u0026 all`) {
		t.Fatalf("reply: %v %s", err, respData(resp))
	}
	call, ok := srv.LastAzure("gpt4o-prod")
	if !ok || call.APIVersion != "2024-10-21" || call.APIKey != "sk-az" || call.Authorization != "" || string(call.Body) != body {
		t.Fatalf("the stand-in saw %+v", call)
	}

	stream := `{"model":"gpt-4o","messages":[{"role":"user","content":"stream"}],"stream":true,"stream_options":{"include_usage":true}}`
	resp, err = c.Do(ctx, m, upstream.Request{API: upstream.APIAzureOpenAI, Body: []byte(stream), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for {
		data, err := resp.Stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		text.Write(data)
	}
	resp.Stream.Close()
	if !strings.Contains(text.String(), `"content":"gpt-4o: "`) || !strings.Contains(text.String(), `"finish_reason":"stop"`) {
		t.Fatalf("streamed %s", text.String())
	}

	entra := m
	entra.CredentialsEnv = "AZ_TOKEN"
	if _, err := c.Do(ctx, entra, upstream.Request{API: upstream.APIAzureOpenAI, Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	if call, _ := srv.LastAzure("gpt4o-prod"); call.Authorization != "Bearer entra-token" || call.APIKey != "" {
		t.Fatalf("with an Entra token the stand-in saw %+v", call)
	}

	_, err = c.Do(ctx, m, upstream.Request{API: upstream.APIAzureOpenAI, Body: []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"quality_floor":1}`)})
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Status != http.StatusBadRequest || ue.Retryable || !strings.Contains(string(ue.Body), "quality_floor") {
		t.Fatalf("an unknown field: %v", err)
	}
	if st := c.BreakerStates()["az"]; st != "closed" {
		t.Fatalf("breaker %q after a refusal", st)
	}

	// A 404 (no such deployment or api-version) is the operator's: retried
	// elsewhere, counted by the breaker, never shown to the client.
	bad := m
	bad.APIVersion = ""
	_, err = c.Do(ctx, bad, upstream.Request{API: upstream.APIAzureOpenAI, Body: []byte(body)})
	if !errors.As(err, &ue) || ue.Status != http.StatusNotFound || !ue.Retryable {
		t.Fatalf("a 404: %v", err)
	}
}

func respData(r *upstream.Response) []byte {
	if r == nil {
		return nil
	}
	return r.Data
}
