package gemini

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/arr-dev/arr/domain/chat"
)

// Stream translates the events of one streamGenerateContent?alt=sse
// reply, in order, into chat.completion.chunk bodies: a first chunk per
// choice with its role, a chunk of each event's text, one of its
// function calls (Gemini sends each call whole: one delta with the id,
// name and all the arguments), a chunk with the finish_reason, and after
// the event that finishes every choice a usage chunk (choices empty)
// from its usageMetadata. What an event brings for a choice after that
// choice's finish_reason (text, function calls, another finishReason),
// and for any choice after the usage chunk, is dropped, not an error:
// a client takes the finish_reason as the choice's end, and the reply
// is counted by then; a later event's usageMetadata still updates Usage.
// Not safe for concurrent use.
type Stream struct {
	model    string
	created  int64
	id       string
	choices  map[int]*choiceState
	usage    *chat.Usage
	finished bool
}

type choiceState struct {
	started  bool
	calls    int
	finished bool
}

// NewStream starts the translation of a stream whose chunks name model
// (each event's modelVersion when "") and were created at created (Unix
// seconds).
func NewStream(model string, created int64) *Stream {
	return &Stream{model: model, created: created, choices: map[int]*choiceState{}}
}

// ErrStreamEvent: an event of the stream was an error (the upstream
// failed mid-stream).
var ErrStreamEvent = errors.New("gemini: an error event")

// Event is the chunk bodies of one event's data, in order (none for an
// event that adds nothing).
func (s *Stream) Event(data []byte) ([][]byte, error) {
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("gemini: reading a stream event: %w", err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%w: %s (%s)", ErrStreamEvent, r.Error.Message, r.Error.Status)
	}
	if s.id == "" {
		s.id = completionID(r.ResponseID)
		if s.model == "" {
			s.model = r.ModelVersion
		}
	}
	if u := usage(r.UsageMetadata); u != nil {
		s.usage = u
	}
	var out []wireChunk
	if len(r.Candidates) == 0 && r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		r.Candidates = []candidate{{FinishReason: "PROHIBITED_CONTENT"}}
	}
	for _, c := range r.Candidates {
		if s.finished {
			break // the usage chunk is out: the reply is over
		}
		out = append(out, s.candidate(c, r.ResponseID)...)
	}
	if !s.finished && len(s.choices) > 0 && s.allFinished() && s.usage != nil {
		s.finished = true
		out = append(out, wireChunk{Choices: []wireChunkChoice{}, Usage: s.usage})
	}
	return s.encode(out)
}

// candidate is the chunks of one candidate of an event (none for a
// choice already finished).
func (s *Stream) candidate(c candidate, responseID string) []wireChunk {
	st := s.choices[c.Index]
	if st == nil {
		st = &choiceState{}
		s.choices[c.Index] = st
	}
	if st.finished {
		return nil
	}
	one := func(d wireDelta, finish *string) wireChunk {
		return wireChunk{Choices: []wireChunkChoice{{Index: c.Index, Delta: d, FinishReason: finish}}}
	}
	var out []wireChunk
	if !st.started {
		st.started = true
		empty := ""
		out = append(out, one(wireDelta{Role: "assistant", Content: &empty}, nil))
	}
	text, calls := candidateParts(c, responseID, st.calls)
	if text != "" {
		out = append(out, one(wireDelta{Content: &text}, nil))
	}
	if len(calls) > 0 {
		d := wireDelta{}
		for i, tc := range calls {
			d.ToolCalls = append(d.ToolCalls, chat.ToolCallDelta{Index: st.calls + i, ID: tc.ID, Type: "function", Function: tc.Function})
		}
		st.calls += len(calls)
		out = append(out, one(d, nil))
	}
	if c.FinishReason != "" {
		st.finished = true
		f := finishReason(c.FinishReason, st.calls > 0)
		out = append(out, one(wireDelta{}, &f))
	}
	return out
}

func (s *Stream) allFinished() bool {
	for _, st := range s.choices {
		if !st.finished {
			return false
		}
	}
	return true
}

// Done: every choice has its finish_reason.
func (s *Stream) Done() bool { return len(s.choices) > 0 && s.allFinished() }

// Usage is the stream's usage so far (the last event's usageMetadata);
// nil when none came.
func (s *Stream) Usage() *chat.Usage { return s.usage }

func (s *Stream) encode(chunks []wireChunk) ([][]byte, error) {
	out := make([][]byte, 0, len(chunks))
	for _, c := range chunks {
		c.ID, c.Object, c.Created, c.Model = s.id, "chat.completion.chunk", s.created, s.model
		b, err := chat.Marshal(c, chat.Verbatim)
		if err != nil {
			return nil, fmt.Errorf("gemini: encoding a chunk: %w", err)
		}
		out = append(out, b)
	}
	return out, nil
}

// OpenAI's chat.completion.chunk, as Stream writes it.
type wireChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []wireChunkChoice `json:"choices"`
	Usage   *chat.Usage       `json:"usage,omitempty"`
}

type wireChunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Role      string               `json:"role,omitempty"`
	Content   *string              `json:"content,omitempty"`
	ToolCalls []chat.ToolCallDelta `json:"tool_calls,omitempty"`
}
