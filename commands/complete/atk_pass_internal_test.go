package complete

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/routing"
)

// TestAtkPassPromptBoundMissesImagesAndURLDocuments: the reservation
// bounds a request's prompt by its body's bytes plus ImageTokenBound per
// image mark, the marks matched byte for byte ("type":"image" with no
// space). A pass-through body goes upstream as the client wrote it:
// twenty image blocks written with a space after the colon (as Python's
// json.dumps writes them), or by URL, and a PDF by URL (each page billed
// by Anthropic as an image plus its text) reserve a couple of thousand
// tokens for what the upstream bills tens of thousands for, so a key's
// budget is passed by a request it was admitted for.
func TestAtkPassPromptBoundMissesImagesAndURLDocuments(t *testing.T) {
	img := `{"type": "image", "source": {"type": "url", "url": "http://127.0.0.1/p.png"}}`
	body := `{"model": "mid", "max_tokens": 1, "messages": [{"role": "user", "content": [` +
		strings.TrimSuffix(strings.Repeat(img+",", 20), ",") + `]}]}`
	if got, least := routing.PromptBound(len(body), images([]byte(body))), int64(20*routing.ImageTokenBound); got < least {
		t.Errorf("20 image blocks bound at %d prompt tokens, under the %d the bound's own rule counts for them", got, least)
	}
	pdf := `{"model":"mid","max_tokens":1,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"http://127.0.0.1/100-pages.pdf"}}]}]}`
	if got := routing.PromptBound(len(pdf), images([]byte(pdf))); got < routing.ImageTokenBound {
		t.Errorf("a PDF by URL bound at %d prompt tokens, under one image's %d (Anthropic bills each of its pages as one)", got, routing.ImageTokenBound)
	}
}
