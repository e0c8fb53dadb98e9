package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands/research/researchtest"
)

// answerEvent is one server-sent event of a streamed answer.
type answerEvent struct {
	name string
	data []byte
}

// postAnswerStream sends POST /api/v1/answer with body (raw JSON) and headers.
func postAnswerStream(ctx context.Context, t testing.TB, base, key, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/answer", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST answer: %v", err)
	}
	return resp
}

// readEvents reads a text/event-stream body to its end.
func readEvents(t testing.TB, resp *http.Response) []answerEvent {
	t.Helper()
	defer resp.Body.Close()
	sc := eventScanner(t, resp)
	var out []answerEvent
	for {
		e, ok := nextEvent(t, sc)
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

// eventScanner checks that resp is a 200 event stream and returns a
// scanner of its lines.
func eventScanner(t testing.TB, resp *http.Response) *bufio.Scanner {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		t.Fatalf("want a 200 event stream, got %d %q: %s", resp.StatusCode, ct, b.String())
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	return sc
}

// nextEvent reads the next event; false at the end of the stream.
func nextEvent(t testing.TB, sc *bufio.Scanner) (answerEvent, bool) {
	t.Helper()
	var cur answerEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				return cur, true
			}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = []byte(strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return answerEvent{}, false
}

// streamed is a stream's parts: the names in order, the sources, the
// deltas' texts and done's data.
type streamed struct {
	names   []string
	sources []byte
	deltas  []string
	done    []byte
}

func parseStreamed(t testing.TB, evs []answerEvent) streamed {
	t.Helper()
	var s streamed
	for _, e := range evs {
		s.names = append(s.names, e.name)
		switch e.name {
		case "sources":
			s.sources = e.data
		case "delta":
			var d struct{ Text string }
			if err := json.Unmarshal(e.data, &d); err != nil {
				t.Fatalf("delta %s: %v", e.data, err)
			}
			s.deltas = append(s.deltas, d.Text)
		case "done":
			s.done = e.data
		}
	}
	return s
}

// wellFormed: sources first, then at least one delta, done last, nothing
// else but a later sources event (a model's text that cites a source the
// last one did not show renumbers them).
func (s streamed) wellFormed(t testing.TB) {
	t.Helper()
	n := len(s.names)
	if n < 3 || s.names[0] != "sources" || s.names[n-1] != "done" || !slices.Contains(s.names, "delta") {
		t.Fatalf("event sequence %v", s.names)
	}
	for _, name := range s.names[1 : n-1] {
		if name != "delta" && name != "sources" {
			t.Fatalf("event sequence %v", s.names)
		}
	}
}

func decodeMap(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

func remaining(t testing.TB, h http.Header) int {
	t.Helper()
	n, err := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	if err != nil {
		t.Fatalf("X-RateLimit-Remaining %q", h.Get("X-RateLimit-Remaining"))
	}
	return n
}

// TestAnswerStream: POST /api/v1/answer with "stream": true (or Accept:
// text/event-stream) against the real process, answering from a loopback
// site indexed locally with no model (extractive): sources, a delta per
// sentence, then done, which is the plain response (the same answer
// cached, byte for byte); a cached answer streams; each request counts
// once; a bad stream value is a 400 naming the field.
func TestAnswerStream(t *testing.T) {
	site := newLoopSite(t, map[string]string{
		"/ferry": article("Ferry timetable", []string{"The island ferry leaves the north pier at nine and at three every day.", "The crossing takes forty minutes."}),
		"/tides": article("Tide tables", []string{"High water at the north pier comes about fifty minutes later each day.", "Spring tides follow the new and the full moon."}),
	})
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off")
	e.up()
	e.createAccount("stream@example.com", "free")
	key := e.mint("stream@example.com", "answer").Secret
	if o, errs, code := indexAdd(t, e, site.srv.URL+"/ferry", site.srv.URL+"/tides"); code != 0 || o.Added != 2 {
		t.Fatalf("index add: exit %d %+v %s", code, o, errs)
	}
	ctx := context.Background()
	const q = "When does the island ferry leave the north pier?"

	t.Run("bad stream values", func(t *testing.T) {
		for _, v := range []string{`"yes"`, `1`, `"true"`, `{}`} {
			resp := postAnswerStream(ctx, t, e.answer, key, `{"q":"`+q+`","stream":`+v+`}`, nil)
			var b answerBody
			_ = json.NewDecoder(resp.Body).Decode(&b)
			resp.Body.Close()
			if resp.StatusCode != 400 || b.Error == nil || b.Error.Code != "invalid_stream" || b.Error.Field != "stream" || !strings.Contains(b.Error.Message, "stream must be true or false") {
				t.Fatalf("stream %s: %d %+v", v, resp.StatusCode, b.Error)
			}
		}
		// An error before anything is sent keeps its status, streamed or not.
		resp := postAnswerStream(ctx, t, e.answer, key, `{"q":"ab","stream":true}`, nil)
		var b answerBody
		_ = json.NewDecoder(resp.Body).Decode(&b)
		resp.Body.Close()
		if resp.StatusCode != 400 || b.Error == nil || b.Error.Code != "q_too_short" || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("bad q streamed: %d %q %+v", resp.StatusCode, resp.Header.Get("Content-Type"), b.Error)
		}
	})

	// A fresh answer, streamed.
	resp := postAnswerStream(ctx, t, e.answer, key, `{"q":"`+q+`","stream":true}`, nil)
	left := remaining(t, resp.Header)
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Fatalf("Cache-Control %q", cc)
	}
	fresh := parseStreamed(t, readEvents(t, resp))
	fresh.wellFormed(t)
	done := decodeMap(t, fresh.done)
	if done["cached"] != false || done["synthesis"] != "extractive" || !strings.Contains(done["answer"].(string), "nine") {
		t.Fatalf("done: %s", fresh.done)
	}
	if got := strings.Join(fresh.deltas, ""); got != done["answer"] {
		t.Fatalf("the deltas make %q, done says %q", got, done["answer"])
	}
	var doneSources struct{ Sources json.RawMessage }
	_ = json.Unmarshal(fresh.done, &doneSources)
	if !bytes.Equal(fresh.sources, doneSources.Sources) {
		t.Fatalf("sources event %s, done's sources %s", fresh.sources, doneSources.Sources)
	}

	// The same question, plain: the answer the stream made, from the cache.
	plainResp := postAnswerStream(ctx, t, e.answer, key, `{"q":"`+q+`"}`, nil)
	var plain bytes.Buffer
	_, _ = plain.ReadFrom(plainResp.Body)
	plainResp.Body.Close()
	if plainResp.StatusCode != 200 || !strings.HasPrefix(plainResp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("plain: %d %s", plainResp.StatusCode, plain.String())
	}
	if n := remaining(t, plainResp.Header); n != left-1 {
		t.Fatalf("X-RateLimit-Remaining %d after the stream, %d after the next request: a request counted other than once", left, n)
	}
	p := decodeMap(t, plain.Bytes())
	if p["cached"] != true {
		t.Fatalf("plain ask after the stream: not cached: %s", plain.String())
	}
	delete(p, "cached")
	delete(done, "cached")
	if !reflect.DeepEqual(p, done) {
		t.Fatalf("done and the plain body differ beyond cached:\n done %s\nplain %s", fresh.done, plain.String())
	}

	t.Run("a cached answer streams; Accept: text/event-stream works like stream:true", func(t *testing.T) {
		for i, tc := range []struct {
			name, body string
			headers    map[string]string
		}{
			{"stream true", `{"q":"` + q + `","stream":true}`, nil},
			{"Accept header", `{"q":"` + q + `"}`, map[string]string{"Accept": "application/json;q=0.5, text/event-stream"}},
			{"Accept header, stream false", `{"q":"` + q + `","stream":false}`, map[string]string{"Accept": "text/event-stream"}},
		} {
			resp := postAnswerStream(ctx, t, e.answer, key, tc.body, tc.headers)
			if n := remaining(t, resp.Header); n != left-2-i {
				t.Fatalf("%s: X-RateLimit-Remaining %d, want %d", tc.name, n, left-2-i)
			}
			s := parseStreamed(t, readEvents(t, resp))
			s.wellFormed(t)
			if !bytes.Equal(s.done, plain.Bytes()) {
				t.Fatalf("%s: done is not the plain body byte for byte:\n done %s\nplain %s", tc.name, s.done, plain.String())
			}
			if strings.Join(s.deltas, "") != p["answer"] || !bytes.Equal(s.sources, doneSources.Sources) {
				t.Fatalf("%s: deltas %q, sources %s", tc.name, s.deltas, s.sources)
			}
		}
	})

	t.Run("Accept: text/event-stream;q=0 is plain JSON", func(t *testing.T) {
		resp := postAnswerStream(ctx, t, e.answer, key, `{"q":"`+q+`"}`, map[string]string{"Accept": "text/event-stream;q=0, application/json"})
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(b.Bytes(), plain.Bytes()) {
			t.Fatalf("%d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b.String())
		}
	})

	t.Run("GET with Accept: text/event-stream", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, e.answer+"/api/v1/answer?q="+strings.ReplaceAll(q, " ", "+"), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		s := parseStreamed(t, readEvents(t, resp))
		s.wellFormed(t)
		if !bytes.Equal(s.done, plain.Bytes()) {
			t.Fatalf("done %s", s.done)
		}
	})

	// Seven answers were served (one fresh stream, five cached streams or
	// plain calls, one GET stream): one AnswerServed each, none for the
	// refused ones.
	const served = 7
	deadline := time.Now().Add(15 * time.Second)
	for eventsOfType(t, e, "AnswerServed") < served && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the recorder appends every 100 ms
	if n := eventsOfType(t, e, "AnswerServed"); n != served {
		t.Fatalf("%d AnswerServed events for %d answers served", n, served)
	}
}

// eventsOfType is how many events of type the log holds.
func eventsOfType(t testing.TB, e *env, typ string) int64 {
	t.Helper()
	var stats struct {
		Types []struct {
			Type   string `json:"type"`
			Events int64  `json:"events"`
		} `json:"types"`
	}
	e.mustArr(&stats, "events", "stats", "--json")
	for _, ty := range stats.Types {
		if ty.Type == typ {
			return ty.Events
		}
	}
	return 0
}

// TestAnswerStreamModel: with a language model (a loopback stand-in that
// streams its completion a word per chunk) a streamed answer relays the
// model's tokens as separate deltas before done (raw: the marker that
// refers to nothing is still in them; done's answer has it dropped). A
// client that hangs up mid-stream stops the work: the model sees its
// request cancelled, nothing is cached, and the next asker gets a fresh
// answer from a server that still serves.
func TestAnswerStreamModel(t *testing.T) {
	site := newLoopSite(t, map[string]string{
		"/ferry": article("Ferry timetable", []string{"The island ferry leaves the north pier at nine and at three every day.", "The crossing takes forty minutes."}),
		"/tides": article("Tide tables", []string{"High water at the north pier comes about fifty minutes later each day.", "Spring tides follow the new and the full moon."}),
	})
	model := researchtest.NewLLM(t)
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off",
		"ARR_ANSWER_LLM_BASE_URL="+model.BaseURL(), "ARR_ANSWER_LLM_API_KEY=standin")
	p := e.up()
	e.createAccount("model@example.com", "free")
	key := e.mint("model@example.com", "answer").Secret
	if o, errs, code := indexAdd(t, e, site.srv.URL+"/ferry", site.srv.URL+"/tides"); code != 0 || o.Added != 2 {
		t.Fatalf("index add: exit %d %+v %s", code, o, errs)
	}
	ctx := context.Background()

	resp := postAnswerStream(ctx, t, e.answer, key, `{"q":"When does the island ferry leave?","stream":true}`, nil)
	s := parseStreamed(t, readEvents(t, resp))
	s.wellFormed(t)
	if model.Streams() != 1 || model.Hits() != 1 {
		t.Fatalf("the model was asked %d times, %d streamed", model.Hits(), model.Streams())
	}
	// The model's text is relayed a checked sentence at a time: the
	// deltas joined are the answer recorded (its [42] dropped, markers
	// renumbered), never the raw tokens.
	var done answerBody
	if err := json.Unmarshal(s.done, &done); err != nil {
		t.Fatal(err)
	}
	if done.Synthesis != "llm" || done.Cached || strings.Contains(done.Answer, "[42]") {
		t.Fatalf("done: %s", s.done)
	}
	if len(s.deltas) < 2 || strings.Join(s.deltas, "") != done.Answer {
		t.Fatalf("want the answer's checked sentences as deltas, got %q (answer %q)", s.deltas, done.Answer)
	}
	assertCited(t, done)
	var srcs []struct{ URL string }
	if err := json.Unmarshal(s.sources, &srcs); err != nil || len(srcs) < len(done.Sources) {
		t.Fatalf("sources event %s: %v", s.sources, err)
	}

	t.Run("a model that fails: a second sources event, then the extractive answer", func(t *testing.T) {
		model.SetDown(true)
		defer model.SetDown(false)
		s := parseStreamed(t, readEvents(t, postAnswerStream(ctx, t, e.answer, key, `{"q":"When does the island ferry leave the north pier?","stream":true}`, nil)))
		if len(s.names) < 4 || s.names[0] != "sources" || s.names[1] != "sources" || s.names[2] != "delta" || s.names[len(s.names)-1] != "done" {
			t.Fatalf("event sequence %v", s.names)
		}
		var done answerBody
		if err := json.Unmarshal(s.done, &done); err != nil {
			t.Fatal(err)
		}
		var doneSources struct{ Sources json.RawMessage }
		_ = json.Unmarshal(s.done, &doneSources)
		if done.Synthesis != "extractive" || strings.Join(s.deltas, "") != done.Answer || !bytes.Equal(s.sources, doneSources.Sources) {
			t.Fatalf("deltas %q, last sources %s, done %s", s.deltas, s.sources, s.done)
		}
	})

	t.Run("askers of one question share its stream; one hanging up cancels nothing", func(t *testing.T) {
		model.SetHold(true)
		defer model.SetHold(false)
		const q = `{"q":"What time does the second ferry leave?","stream":true}`
		hits := model.Hits()
		actx, cancelA := context.WithCancel(ctx)
		defer cancelA()
		respA := postAnswerStream(actx, t, e.answer, key, q, nil)
		scA := eventScanner(t, respA)
		for {
			ev, ok := nextEvent(t, scA)
			if !ok {
				t.Fatal("A's stream ended before a delta")
			}
			if ev.name == "delta" {
				break
			}
		}
		select {
		case <-model.Held:
		case <-time.After(10 * time.Second):
			t.Fatal("the model's stream was not held")
		}
		// B asks the same question while A's answer is being written: it
		// joins it, and gets what was sent so far first.
		respB := postAnswerStream(ctx, t, e.answer, key, q, nil)
		scB := eventScanner(t, respB)
		var b []answerEvent
		for len(b) < 2 {
			ev, ok := nextEvent(t, scB)
			if !ok {
				t.Fatalf("B's stream ended after %v", b)
			}
			b = append(b, ev)
		}
		if b[0].name != "sources" || b[1].name != "delta" {
			t.Fatalf("B began with %s, %s", b[0].name, b[1].name)
		}
		cancelA()
		respA.Body.Close()
		// A bounded look for a cancellation that must not come.
		time.Sleep(500 * time.Millisecond)
		if n := model.Cancelled(); n != 0 {
			t.Fatalf("A hanging up cancelled the model call B shares (%d cancelled)", n)
		}
		model.Release()
		for {
			ev, ok := nextEvent(t, scB)
			if !ok {
				break
			}
			b = append(b, ev)
		}
		respB.Body.Close()
		s := parseStreamed(t, b)
		s.wellFormed(t)
		var done answerBody
		if err := json.Unmarshal(s.done, &done); err != nil {
			t.Fatal(err)
		}
		if done.Cached || done.Synthesis != "llm" || model.Hits() != hits+1 || len(s.deltas) < 2 || strings.Join(s.deltas, "") != done.Answer {
			t.Fatalf("B: %d model calls, deltas %q, done %s", model.Hits()-hits, s.deltas, s.done)
		}
		assertCited(t, done)
	})

	t.Run("a client that hangs up after the text began: the model is cut after a bound and the text it took is recorded", func(t *testing.T) {
		time.Sleep(300 * time.Millisecond) // earlier answers' AnswerServed appended
		served := eventsOfType(t, e, "AnswerServed")
		synthesized := eventsOfType(t, e, "AnswerSynthesized")
		model.SetHold(true)
		const q = `{"q":"How long does the ferry crossing take?","stream":true}`
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		resp := postAnswerStream(cctx, t, e.answer, key, q, nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		left := remaining(t, resp.Header)
		// Read up to the first delta: the model is writing.
		sc := eventScanner(t, resp)
		var took string
		for took == "" {
			ev, ok := nextEvent(t, sc)
			if !ok {
				t.Fatal("no delta before the stream ended")
			}
			if ev.name == "delta" {
				var d struct{ Text string }
				_ = json.Unmarshal(ev.data, &d)
				took = d.Text
			}
		}
		select {
		case <-model.Held:
		case <-time.After(10 * time.Second):
			t.Fatal("the model's stream was not held")
		}
		cancel()
		resp.Body.Close()
		deadline := time.Now().Add(15 * time.Second)
		for model.Cancelled() != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("the model's request was not cancelled after the client hung up; logs:\n%s", p.logs.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		// The text the client took is the answer, recorded and cached:
		// the same question is answered with that text and no model call
		// (from the cache, or from the synthesis if it is still landing).
		eventually(t, 15*time.Second, "the cut answer is recorded", func() bool {
			return eventsOfType(t, e, "AnswerSynthesized") == synthesized+1
		})
		model.SetHold(false)
		hits := model.Hits()
		next := postAnswerStream(ctx, t, e.answer, key, q, nil)
		if n := remaining(t, next.Header); n != left-1 {
			t.Fatalf("X-RateLimit-Remaining %d after the hung-up call, %d after the next: the hung-up call must stay counted, once", left, n)
		}
		s := parseStreamed(t, readEvents(t, next))
		s.wellFormed(t)
		var again answerBody
		if err := json.Unmarshal(s.done, &again); err != nil {
			t.Fatal(err)
		}
		if again.Synthesis != "llm" || model.Hits() != hits || again.Answer != took {
			t.Fatalf("after the hang-up: cached=%v synthesis=%s, %d model calls, answer %q (the client took %q)", again.Cached, again.Synthesis, model.Hits()-hits, again.Answer, took)
		}
		assertCited(t, again)
		// One answer was served since: the hung-up call recorded none.
		deadline = time.Now().Add(15 * time.Second)
		for eventsOfType(t, e, "AnswerServed") < served+1 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		if n := eventsOfType(t, e, "AnswerServed"); n != served+1 {
			t.Fatalf("%d AnswerServed events after one answer served and one hung up", n-served)
		}
	})
}

// TestAnswerStreamThroughGateway: the default model path, arr's own
// gateway (ARR_ANSWER_LLM_API_KEY is a gateway key) over a loopback
// upstream: the answer service asks the gateway for a stream and relays
// the upstream's text as deltas before done, a checked sentence at a
// time.
func TestAnswerStreamThroughGateway(t *testing.T) {
	site := newLoopSite(t, map[string]string{
		"/ferry": article("Ferry timetable", []string{"The island ferry leaves the north pier at nine and at three every day.", "The crossing takes forty minutes."}),
	})
	g := newGateway(t, "pro", "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off")
	g.proc.stop(t)
	g.env.extraEnv = append(g.env.extraEnv, "ARR_ANSWER_LLM_API_KEY="+g.key)
	g.proc = g.env.up()
	e := g.env
	key := e.mint("gw-pro@example.com", "answer").Secret
	if o, errs, code := indexAdd(t, e, site.srv.URL+"/ferry"); code != 0 || o.Added != 1 {
		t.Fatalf("index add: exit %d %+v %s", code, o, errs)
	}
	s := parseStreamed(t, readEvents(t, postAnswerStream(context.Background(), t, e.answer, key, `{"q":"When does the island ferry leave?","stream":true}`, nil)))
	if len(s.names) < 4 || s.names[0] != "sources" || s.names[1] != "delta" || s.names[len(s.names)-1] != "done" {
		t.Fatalf("event sequence %v", s.names)
	}
	var done answerBody
	if err := json.Unmarshal(s.done, &done); err != nil {
		t.Fatal(err)
	}
	if raw := strings.Join(s.deltas, ""); len(s.deltas) < 2 || !strings.HasPrefix(raw, "Hello from ") || raw != done.Answer || done.Synthesis != "llm" {
		t.Fatalf("deltas %q, done %s; logs:\n%s", s.deltas, s.done, g.proc.logs.String())
	}
	assertCited(t, done)
}
