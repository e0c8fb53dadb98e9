package complete

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/arr-dev/arr/domain/routing"
)

// Keys' limits: Handle admits every routed request through Config.Limits
// before the cache or any upstream, reserving the most the request can
// cost and the most tokens it can use (routing.Reservation over every
// candidate it may fail over to), and settles once it has ended: a reply
// or a failure when Handle returns, a stream when it ends or is closed
// (a client that goes away mid-stream settles what was relayed), a
// flight's leader that goes away when the flight lands.

// spending is a call's reservation and what the call spent. Safe for
// concurrent use (a flight records its leader's cost from its own
// goroutine).
type spending struct {
	mu     sync.Mutex
	fn     func(ctx context.Context, costUSD float64, tokens int64)
	cost   int64 // micro-dollars
	tokens int64
	done   bool
	// deferred: the flight settles the call when it lands (flight.go).
	deferred bool
}

// spent notes what the call's upstream call cost.
func (s *spending) spent(cost, tokens int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cost, s.tokens = cost, tokens
}

// settle settles the reservation once, with what the call spent.
func (s *spending) settle(ctx context.Context) {
	s.mu.Lock()
	if s.done || s.fn == nil {
		s.mu.Unlock()
		return
	}
	s.done = true
	fn, cost, tokens := s.fn, s.cost, s.tokens
	s.mu.Unlock()
	fn(ctx, float64(cost)/1e6, tokens)
}

func (k *call) settle(ctx context.Context) { k.spend.settle(ctx) }

// allow is the models the caller's key may use, for routing; nil when it
// may use all.
func allow(c Caller) func(id, tier string) bool {
	if len(c.Limits.Models) == 0 {
		return nil
	}
	return c.Limits.Allows
}

// admit reserves the routed call's maximum cost and tokens under the
// caller's limits, or refuses it.
func (h *Handler) admit(ctx context.Context, k *call) error {
	if h.cfg.Limits == nil {
		return nil
	}
	prompt := routing.PromptBound(len(k.req.Body), images(k.req.Body))
	cost, tokens := routing.Reservation(k.dec.Candidates, k.req.MaxTokens, prompt)
	if searches, bounded := k.req.serverToolMicro(); bounded {
		cost += routing.MicroUSD(searches)
	} else {
		cost += routing.MicroUSD(unboundedSearchesMicro)
	}
	models := make([]string, len(k.dec.Candidates))
	for i, c := range k.dec.Candidates {
		models[i] = c.Model.ID
	}
	settle, err := h.cfg.Limits.Admit(ctx, k.caller, models, float64(cost)/1e6, tokens)
	if err != nil {
		return err
	}
	k.spend.fn = settle
	return nil
}

// unboundedSearchesMicro is what a key's budget reserves for the web
// searches of a web_search tool without max_uses (which has no bound):
// 100 searches (routing.WebSearchMicroUSD each), a documented guess.
const unboundedSearchesMicro = 100 * routing.WebSearchMicroUSD

// imageMarks are how the APIs arr speaks mark an image part.
var imageMarks = [][]byte{[]byte(`"image_url"`), []byte(`"input_image"`), []byte(`"type":"image"`)}

// PDFPageBound is the most pages of a PDF document block: Anthropic's
// limit, each page billed as an image besides its text. A document
// block not of text (a PDF by URL, file or base64) counts as that many
// images.
const PDFPageBound = 100

// images counts the image parts of a request body by its parsed blocks:
// each object whose type is image, image_url or input_image, and
// PDFPageBound for each document block whose source is not text or
// content blocks; at least the byte marks of imageMarks (a text that
// quotes a mark counts too, which only reserves more).
func images(body []byte) int {
	n := 0
	for _, m := range imageMarks {
		n += bytes.Count(body, m)
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return n
	}
	return max(n, parsedImages(v))
}

func parsedImages(v any) int {
	n := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			n += parsedImages(e)
		}
	case map[string]any:
		switch typ, _ := x["type"].(string); typ {
		case "image", "image_url", "input_image":
			n++
		case "document":
			if src, _ := x["source"].(map[string]any); src == nil || (src["type"] != "text" && src["type"] != "content") {
				n += PDFPageBound
			}
		}
		for _, e := range x {
			n += parsedImages(e)
		}
	}
	return n
}

// capEstimate bounds an estimated completion count by what candidate c
// could have produced (routing.MaxOutput): an estimate from the relayed
// text can run over it, the model cannot, and a key's budget reserved no
// more. Reported usage is kept as reported.
func (k *call) capEstimate(u Usage, c routing.Candidate) Usage {
	if !u.Estimated {
		return u
	}
	u.Completion = min(u.Completion, routing.MaxOutput(c, k.req.MaxTokens, routing.PromptBound(len(k.req.Body), images(k.req.Body))))
	return u
}

// Allow is the caller's key's models limit as a routing filter (for the
// embeddings use case too); nil when the key names no models.
func (c Caller) Allow() func(id, tier string) bool { return allow(c) }
