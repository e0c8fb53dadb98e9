package complete_test

import (
	"bytes"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/routing"
)

// TestReplyOfAnotherShapeIsRelayed: the gateway reads of an upstream's
// reply only what it counts, caches and routes by, so a reply whose other
// fields are shaped otherwise than OpenAI's (tool call arguments as an
// object, a numeric id, as some compatible servers send) is relayed byte
// for byte, counted by its usage.
func TestReplyOfAnotherShapeIsRelayed(t *testing.T) {
	body := []byte(`{"id":12,"object":"chat.completion","created":"now","model":7,"choices":[{"index":"0","finish_reason":"tool_calls",` +
		`"message":{"role":"assistant","content":null,"tool_calls":[{"id":1,"type":"function","function":{"name":"f","arguments":{"x":1}}}]}}],` +
		`"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":"16"}}`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	cat, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	hs := newHarness(t, options{startChain: true, complete: func(c *complete.Config) {
		c.Catalog = cat.WithBaseURL("http://"+ln.Addr().String()+"/v1", "", "")
	}})
	res, err := hs.complete(t, request(t, "Call f.", nil), complete.CacheAuto)
	if err != nil {
		t.Fatalf("a reply of another shape: %v", err)
	}
	if !bytes.Equal(res.Reply.Body, body) || res.Reply.Usage.Prompt != 11 || res.Reply.Usage.Completion != 5 {
		t.Fatalf("relayed %s with usage %+v", res.Reply.Body, res.Reply.Usage)
	}
}
