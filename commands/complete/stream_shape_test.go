package complete_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/routing"
)

// TestStreamOfAnotherShapeIsCounted (attack38): the streamed twin of
// TestReplyOfAnotherShapeIsRelayed. Before issue 38 the use case read a
// stream chunk through its own chunkShape (id, created, model, the delta's
// content and tool calls, finish_reason, prompt/completion tokens); it now
// reads chat.Chunk, which also decodes usage.total_tokens, the usage
// details, delta.refusal and routing. A chunk whose extra fields are
// shaped otherwise (total_tokens as a string, as the reply test's
// compatible server sends) no longer decodes at all, so Next relays it
// without reading it: the upstream's usage is lost (the stream is billed
// and recorded at an estimate) and its content is missing from the
// assembled reply the cache keeps.
func TestStreamOfAnotherShapeIsCounted(t *testing.T) {
	chunks := []string{
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":"16"}}`,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			_, _ = w.Write([]byte("data: " + c + "\n\n"))
		}
		_, _ = w.Write([]byte("data: [DONE]\n\n"))
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
	res, err := hs.complete(t, request(t, "Stream f.", map[string]any{"stream": true}), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, res.Stream); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	end := res.Stream.End()
	if end.Usage.Prompt != 11 || end.Usage.Completion != 5 || end.Usage.Estimated {
		t.Errorf("the upstream's usage chunk with total_tokens \"16\" was not counted: usage %+v (before issue 38: 11 and 5, not estimated)", end.Usage)
	}
	es := hs.entries(t)
	if len(es) != 1 || es[0].Completion.UsageEstimated {
		t.Errorf("recorded with an estimated usage (%d entries)", len(es))
	}
}
