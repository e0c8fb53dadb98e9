package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	json "github.com/goccy/go-json"

	"github.com/arr-dev/arr/readapi/gateway/responses"
)

// responsesPath is the route of the OpenAI Responses API.
const responsesPath = "/v1/responses"

// auditedBodyKey holds, in the gin context, the body the client sent when
// the chat completion path serves a translated request: the audit chain
// hashes that body, not the translation.
const auditedBodyKey = "arr.audited_body"

// handleResponses serves POST /v1/responses: the request is translated into a
// chat completion (package responses), served by the chat completion path
// (routing, failover, cache, audit, metrics), and its reply translated back
// into a Response object or the response.* events.
func (s *completer) handleResponses(c *gin.Context) {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		fail(c, err)
		return
	}
	req, err := responses.ParseRequest(body)
	if err != nil {
		fail(c, err)
		return
	}
	chat, err := req.ChatBody()
	if err != nil {
		fail(c, err)
		return
	}
	w := &responsesWriter{ResponseWriter: c.Writer, req: req, id: newResponseID(), created: time.Now().Unix()}
	c.Request.Body = io.NopCloser(bytes.NewReader(chat))
	c.Set(auditedBodyKey, body)
	c.Writer = w
	s.handle(c)
	c.Writer = w.ResponseWriter
	w.finish(c)
}

// newResponseID is resp_ and 24 random bytes in hex.
func newResponseID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "resp_" + hex.EncodeToString(b[:])
}

type writerMode int

const (
	modeUndecided writerMode = iota
	modePass                 // not a 200: written as it comes (errors share the OpenAI shape)
	modeHold                 // a 200 JSON completion: held, translated when the handler returns
	modeEvents               // a 200 stream: translated event by event as it is written
)

// responsesWriter stands in for the response writer while the chat
// completion path serves a /v1/responses request. Headers (X-Arr-*,
// trailers) go to the real writer's header map unchanged.
type responsesWriter struct {
	gin.ResponseWriter
	req     *responses.Request
	id      string
	created int64
	status  int
	mode    writerMode
	buf     bytes.Buffer // the held completion, or stream bytes short of a whole event
	stream  *responses.Stream
}

func (w *responsesWriter) decide() {
	if w.mode != modeUndecided {
		return
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	switch {
	case w.status != http.StatusOK:
		w.mode = modePass
		w.ResponseWriter.WriteHeader(w.status)
	case w.req.Streaming():
		w.mode = modeEvents
		w.stream = responses.NewStream(w.req, w.id, w.created)
		w.ResponseWriter.WriteHeader(w.status)
	default:
		w.mode = modeHold
	}
}

func (w *responsesWriter) WriteHeader(code int) {
	if w.mode == modeUndecided {
		w.status = code
	}
}

func (w *responsesWriter) WriteHeaderNow() {
	w.decide()
	if w.mode != modeHold {
		w.ResponseWriter.WriteHeaderNow()
	}
}

func (w *responsesWriter) Write(b []byte) (int, error) {
	w.decide()
	switch w.mode {
	case modeHold:
		return w.buf.Write(b)
	case modeEvents:
		w.buf.Write(b)
		w.events()
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *responsesWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

func (w *responsesWriter) Flush() {
	if w.mode == modePass || w.mode == modeEvents {
		w.ResponseWriter.Flush()
	}
}

func (w *responsesWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

func (w *responsesWriter) Written() bool { return w.mode != modeUndecided }

// events translates every whole server-sent event in buf: a chunk into
// Response events, [DONE] into the end, the chat path's "error" event
// (a cut stream, an unrecorded completion) into response.failed.
func (w *responsesWriter) events() {
	for {
		raw := w.buf.Bytes()
		end := bytes.Index(raw, []byte("\n\n"))
		if end < 0 {
			return
		}
		block := string(raw[:end])
		w.buf.Next(end + 2)
		var name, data string
		for _, line := range bytes.Split([]byte(block), []byte{'\n'}) {
			switch {
			case bytes.HasPrefix(line, []byte("event: ")):
				name = string(line[len("event: "):])
			case bytes.HasPrefix(line, []byte("data: ")):
				data = string(line[len("data: "):])
			}
		}
		var out []responses.Event
		switch {
		case data == "[DONE]":
			out = w.stream.Finish()
		case name == "error":
			var e struct {
				Error struct {
					Message string `json:"message"`
					Code    string `json:"code"`
				} `json:"error"`
			}
			_ = json.Unmarshal([]byte(data), &e)
			out = w.stream.Fail(e.Error.Code, e.Error.Message)
		case data != "":
			var err error
			if out, err = w.stream.Chunk([]byte(data)); err != nil {
				out = w.stream.Fail("invalid_upstream_stream", "the upstream's stream could not be translated: "+err.Error())
			}
		}
		for _, e := range out {
			_, _ = w.ResponseWriter.WriteString("event: " + e.Type + "\ndata: ")
			_, _ = w.ResponseWriter.Write(e.Data)
			_, _ = w.ResponseWriter.WriteString("\n\n")
		}
	}
}

// finish writes a held completion as a Response object.
func (w *responsesWriter) finish(c *gin.Context) {
	if w.mode != modeHold {
		return
	}
	out, err := responses.FromChat(w.buf.Bytes(), w.req, w.id, w.created)
	if err != nil {
		fail(c, &upstreamFailure{attempts: []string{"the reply could not be read as a chat completion: " + err.Error()}})
		return
	}
	c.Data(http.StatusOK, "application/json", out)
}
