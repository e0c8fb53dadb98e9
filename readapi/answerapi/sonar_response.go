package answerapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/readapi/httpx"
)

// sonarSearchResult is one entry of search_results: a source as
// Perplexity describes it.
type sonarSearchResult struct {
	Title   string  `json:"title"`
	URL     string  `json:"url"`
	Date    *string `json:"date"`
	Snippet string  `json:"snippet"`
}

// sonarUsage is the usage object. arr does not bill answers by token: the
// counts are 0; search_context_size says how many sources were read.
type sonarUsage struct {
	PromptTokens      int    `json:"prompt_tokens"`
	CompletionTokens  int    `json:"completion_tokens"`
	TotalTokens       int    `json:"total_tokens"`
	SearchContextSize string `json:"search_context_size"`
}

// sonarArr is what arr adds to the Sonar shape (clients ignore it).
type sonarArr struct {
	AnswerID      string      `json:"answer_id"`
	Cached        bool        `json:"cached"`
	Query         string      `json:"query"`
	ResolvedQuery string      `json:"resolved_query"`
	Synthesis     string      `json:"synthesis"`
	Tier          answer.Tier `json:"tier"`
	Mode          answer.Mode `json:"mode"`
	ExpiresAt     time.Time   `json:"expires_at"`
}

type sonarMessageOut struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type sonarChoice struct {
	Index        int              `json:"index"`
	FinishReason *string          `json:"finish_reason"`
	Message      *sonarMessageOut `json:"message,omitempty"`
	Delta        *sonarDeltaOut   `json:"delta,omitempty"`
}

type sonarDeltaOut struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// sonarResponse is a chat.completion, or one chat.completion.chunk of a
// stream.
type sonarResponse struct {
	ID            string              `json:"id"`
	Model         string              `json:"model"`
	Object        string              `json:"object"`
	Created       int64               `json:"created"`
	Choices       []sonarChoice       `json:"choices"`
	Citations     []string            `json:"citations"`
	SearchResults []sonarSearchResult `json:"search_results"`
	Usage         *sonarUsage         `json:"usage,omitempty"`
	Arr           *sonarArr           `json:"arr,omitempty"`
}

// sonarSources is citations (the URLs) and search_results of sources, in
// the same order: citations[n-1] is what [n] in the text cites.
func sonarSources(srcs []answer.Source) ([]string, []sonarSearchResult) {
	urls := make([]string, len(srcs))
	results := make([]sonarSearchResult, len(srcs))
	for i, s := range srcs {
		urls[i] = s.URL
		snip := s.Snippet
		if snip == "" {
			snip = answer.Snippet(s.Content, nil)
		}
		results[i] = sonarSearchResult{Title: s.Title, URL: s.URL, Date: s.PublishedDate, Snippet: snip}
	}
	return urls, results
}

// chat is POST /v1/chat/completions: the Sonar-compatible route. It reads
// the request (parseSonar), answers it on the same command path as
// /api/v1/answer (serve: plan, follow-ups, cache, synthesis, recorded as
// served) and writes the answer as a chat completion, or as its chunks.
func (h *handler) chat(c *gin.Context) error {
	sr, err := parseSonar(c.Request.Body, h.app.Now())
	if err != nil {
		return err
	}
	p, _ := httpx.PrincipalOf(c)
	if err := sr.req.Authorize(p.Plan); err != nil && sr.req.Tier == answer.Free && sr.req.Mode == answer.Quick {
		return err // what the plan refuses is not the model (search_context_size)
	} else if err != nil {
		return domain.Forbidden("pro_plan_required", "model %s needs the Pro plan (or Scale or Enterprise); this key's account is on %s. Upgrade on the account page, /account, or use model sonar", sr.model, p.Plan.Offer().Title)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("a completion id: %w", err)
	}
	head := sonarResponse{ID: id.String(), Model: sr.model, Created: h.app.Now().Unix()}
	var st *sonarStream
	var s streamer
	if sr.stream {
		st = &sonarStream{sse: sse{c: c}, head: head}
		s = st
	}
	r, ok, err := h.serve(c, sr.req, s)
	if err != nil || !ok {
		return err
	}
	srcs := withSnippets(r.a.Answer, r.a.Sources)
	usage := &sonarUsage{SearchContextSize: string(answer.ContextMedium)}
	if cs := sr.req.ContextSize; cs != "" {
		usage.SearchContextSize = string(cs)
	}
	extra := &sonarArr{AnswerID: r.a.AnswerID.String(), Cached: r.cached, Query: r.req.Query, ResolvedQuery: r.req.Question(),
		Synthesis: string(r.a.Synthesis), Tier: r.req.Tier, Mode: r.req.Mode, ExpiresAt: r.a.ExpiresAt}
	if st != nil {
		st.finish(srcs, r.a.Answer, usage, extra)
		return nil
	}
	stop := "stop"
	resp := head
	resp.Object = "chat.completion"
	resp.Choices = []sonarChoice{{FinishReason: &stop, Message: &sonarMessageOut{Role: "assistant", Content: r.a.Answer}}}
	resp.Citations, resp.SearchResults = sonarSources(srcs)
	resp.Usage, resp.Arr = usage, extra
	c.JSON(http.StatusOK, resp)
	return nil
}

// sonarStream writes a streamed answer as chat.completion.chunk events
// (data: lines, no event names), as Perplexity does: every chunk carries
// citations and search_results (the sources as the streamed text numbers
// them); the last has finish_reason stop and usage; then data: [DONE].
type sonarStream struct {
	sse
	head    sonarResponse
	srcs    []answer.Source
	text    string // the content sent so far
	nsource int
}

// send translates one of arr's stream events into a chunk: sources are
// kept (the first are sent at once, on a chunk that opens the assistant's
// message), a delta is sent as content.
func (s *sonarStream) send(name string, data []byte) {
	switch name {
	case eventSources:
		var srcs []answer.Source
		if json.Unmarshal(data, &srcs) != nil {
			return
		}
		s.srcs = srcs
		s.nsource++
		s.sources++
		if s.nsource == 1 {
			empty := ""
			s.chunk(sonarDeltaOut{Role: "assistant", Content: &empty}, nil, nil, nil)
		}
	case eventDelta:
		var d delta
		if json.Unmarshal(data, &d) != nil {
			return
		}
		s.deltas++
		s.text += d.Text
		s.chunk(sonarDeltaOut{Content: &d.Text}, nil, nil, nil)
	}
}

// chunk writes one chunk with the current sources.
func (s *sonarStream) chunk(d sonarDeltaOut, finish *string, usage *sonarUsage, extra *sonarArr) {
	out := s.head
	out.Object = "chat.completion.chunk"
	out.Choices = []sonarChoice{{FinishReason: finish, Delta: &d}}
	out.Citations, out.SearchResults = sonarSources(s.srcs)
	out.Usage, out.Arr = usage, extra
	b, err := json.Marshal(out)
	if err != nil {
		return
	}
	s.data(b)
}

// data writes one data: line and flushes it.
func (s *sonarStream) data(b []byte) {
	s.start()
	_, _ = fmt.Fprintf(s.c.Writer, "data: %s\n\n", b)
	s.c.Writer.Flush()
}

// finish sends what the stream lacks of the answer (a cached one's
// sources and sentences), then the last chunk and [DONE]. When the text
// sent is the answer (extractive or cached) the last chunk's citations
// are the answer's sources; a model's streamed text keeps the numbering
// it was written with (the non-streamed response has the checked,
// renumbered answer).
func (s *sonarStream) finish(srcs []answer.Source, text string, usage *sonarUsage, extra *sonarArr) {
	if s.nsource == 0 {
		b, _ := json.Marshal(srcs)
		s.send(eventSources, b)
	}
	if s.deltas == 0 {
		for _, d := range answer.Deltas(text) {
			b, _ := json.Marshal(delta{Text: d})
			s.send(eventDelta, b)
		}
	}
	if s.text == text {
		s.srcs = srcs
	}
	stop := "stop"
	s.chunk(sonarDeltaOut{}, &stop, usage, extra)
	s.data([]byte("[DONE]"))
}

// fail ends a begun stream with the error, as OpenAI streams do: one data:
// line holding the error object, and no [DONE].
func (s *sonarStream) fail(err error) {
	status, body := problem(s.c, err)
	if status < 500 && status != http.StatusTooManyRequests {
		markNotServed(s.c)
	}
	b, jerr := json.Marshal(body)
	if jerr != nil {
		b = []byte(`{"error":{"message":"encoding the error failed","type":"internal","code":500}}`)
	}
	s.data(b)
}
