package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// atkModel is a loopback OpenAI-compatible model for the attack tests. A
// follow-up's rewrite prompt is answered with a fixed self-contained
// question (rewrites counts them); an answer prompt is answered citing
// every numbered source it was given, one sentence each, or, with
// uncited set, with one sentence that cites none (a model that ignored
// its instructions). Asked to stream, it streams a word per chunk and
// ends with [DONE].
type atkModel struct {
	srv      *httptest.Server
	rewrites atomic.Int64
	answers  atomic.Int64
	uncited  atomic.Bool
	// holdEnd makes a stream wait, after its last word and before
	// [DONE], until its client cancels (at most 30 s); held counts those.
	holdEnd atomic.Bool
	held    atomic.Int64
}

var atkSourceHead = regexp.MustCompile(`(?m)^\[(\d+)\] `)

func newAtkModel(t *testing.T) *atkModel {
	m := &atkModel{}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *atkModel) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	system, user := req.Messages[0].Content, req.Messages[len(req.Messages)-1].Content
	var content string
	switch {
	case strings.Contains(system, "rewrite the last question"):
		m.rewrites.Add(1)
		content = "What powers the lamp of the north pier lighthouse?"
	case m.uncited.Load():
		m.answers.Add(1)
		content = "Nobody knows for sure what powers that lamp."
	default:
		m.answers.Add(1)
		var parts []string
		for _, h := range atkSourceHead.FindAllStringSubmatch(user, -1) {
			parts = append(parts, fmt.Sprintf("Source %s says the lamp is powered [%s].", h[1], h[1]))
		}
		content = strings.Join(parts, " ")
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-atk", "object": "chat.completion", "model": "atk",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for _, word := range strings.SplitAfter(content, " ") {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-atk", "object": "chat.completion.chunk", "model": "atk",
			"choices": []map[string]any{{"index": 0, "delta": map[string]any{"content": word}}}})
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	if m.holdEnd.Load() {
		select {
		case <-r.Context().Done():
			m.held.Add(1)
		case <-time.After(30 * time.Second):
		}
		return
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
}

// atkLighthouse starts arr with the loopback model and nine indexed pages
// on 127.0.0.1 that all answer the lighthouse question, and returns it
// with a Free plan answer key.
func atkLighthouse(t *testing.T, m *atkModel) (*env, string) {
	t.Helper()
	pages := map[string]string{}
	var urls []string
	site := newLoopSite(t, pages)
	for i := 1; i <= 9; i++ {
		p := fmt.Sprintf("/lamp-%d", i)
		site.set(p, article(fmt.Sprintf("Lighthouse note %d", i), []string{
			fmt.Sprintf("The lamp of the north pier lighthouse is powered by generator number %d, says keeper %d.", i, i),
		}))
		urls = append(urls, site.srv.URL+p)
	}
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off",
		"ARR_ANSWER_LLM_BASE_URL="+m.srv.URL+"/v1", "ARR_ANSWER_LLM_API_KEY=standin")
	e.up()
	e.createAccount("atk-sonar@example.com", "free")
	key := e.mint("atk-sonar@example.com", "answer").Secret
	if o, errs, code := indexAdd(t, e, urls...); code != 0 || o.Added != 9 {
		t.Fatalf("index add: exit %d %+v %s", code, o, errs)
	}
	return e, key
}

const atkQ = "What powers the lamp of the north pier lighthouse?"

// TestAtkSonarStreamTextIsNotTheAnswer: when the model's streamed text is
// refused after it was relayed (it cites no source, so the answer is
// written extractively), the Sonar stream sends the refused model text
// and then the extractive answer after it, in the same message: the
// client shows a text that is neither the answer arr recorded and caches
// (the plain request right after is a hit with another text) nor one
// the final chunk's citations number. The stream must carry the answer
// that was recorded.
func TestAtkSonarStreamTextIsNotTheAnswer(t *testing.T) {
	m := newAtkModel(t)
	e, key := atkLighthouse(t, m)
	m.uncited.Store(true)
	body := `{"model":"sonar","messages":[{"role":"user","content":"` + atkQ + `"}]`
	chunks, done := sonarStreamed(t, e.answer, key, body+`,"stream":true}`)
	var text strings.Builder
	for _, ch := range chunks {
		if c := ch.Choices[0].Delta.Content; c != nil {
			text.WriteString(*c)
		}
	}
	status, _, plain := postSonar(t, e.answer, key, body+`}`)
	if status != 200 || plain.Arr == nil || !plain.Arr.Cached {
		t.Fatalf("plain after the stream: %d %+v", status, plain.Arr)
	}
	if !done || text.String() != plain.Choices[0].Message.Content {
		t.Fatalf("the stream showed %q; the answer recorded (and served from the cache) is %q (synthesis %s)",
			text.String(), plain.Choices[0].Message.Content, plain.Arr.Synthesis)
	}
}

// TestAtkSonarCachedFollowUpCallsModel: a follow-up's resolution runs
// before the cache lookup, so every call of a cached follow-up still
// sends the whole conversation (up to 20 turns, 20,000 characters) to the
// language model, on a Free key, and that model call is recorded nowhere
// (not in AnswerSynthesized's costs: no answer is synthesized). "Cached 6
// h" must mean a repeated call costs no model call.
func TestAtkSonarCachedFollowUpCallsModel(t *testing.T) {
	m := newAtkModel(t)
	e, key := atkLighthouse(t, m)
	long := strings.Repeat("The lighthouse keeper wrote many notes. ", 90) // ~3.6k characters per turn
	var turns []string
	for i := 0; i < 10; i++ {
		turns = append(turns, `{"role":"user","content":"`+long+`"}`, `{"role":"assistant","content":"`+long+`"}`)
	}
	body := `{"model":"sonar","messages":[` + strings.Join(turns[:4], ",") + `,{"role":"user","content":"What powers it?"}]}`
	status, _, first := postSonar(t, e.answer, key, body)
	if status != 200 || first.Arr == nil {
		t.Fatalf("first: %d %+v", status, first.Error)
	}
	before := m.rewrites.Load()
	for i := 0; i < 3; i++ {
		status, _, again := postSonar(t, e.answer, key, body)
		if status != 200 || again.Arr == nil || !again.Arr.Cached {
			t.Fatalf("again: %d %+v %+v", status, again.Arr, again.Error)
		}
	}
	if n := m.rewrites.Load() - before; n != 0 {
		t.Fatalf("three cached follow-ups made %d language model calls (each sent the whole conversation)", n)
	}
}

// TestAtkSonarPlanHighContextOnFree: web_search_options.search_context_size
// "high" lets a Free key read half as many sources again (7) as its tier
// (5), about the Pro tier's 8, with no plan check: the Pro plan's "more
// sources" is open to Free through a field. A Free key must get at most
// its tier's sources (or a 403).
func TestAtkSonarPlanHighContextOnFree(t *testing.T) {
	m := newAtkModel(t)
	e, key := atkLighthouse(t, m)
	status, _, medium := postSonar(t, e.answer, key, `{"model":"sonar","messages":[{"role":"user","content":"`+atkQ+`"}]}`)
	if status != 200 || len(medium.Citations) == 0 {
		t.Fatalf("medium: %d %+v", status, medium.Error)
	}
	status, _, high := postSonar(t, e.answer, key, `{"model":"sonar","messages":[{"role":"user","content":"`+atkQ+`"}],"web_search_options":{"search_context_size":"high"}}`)
	if status == 403 {
		return
	}
	if status != 200 || len(high.Citations) > len(medium.Citations) {
		t.Fatalf("Free key, search_context_size high: %d, %d sources read and cited (the Free tier's medium: %d)", status, len(high.Citations), len(medium.Citations))
	}
}

// TestAtkSonarStreamTakenWholeLeavesNoRecord: a client that reads a
// streamed answer's every model token and hangs up before the last chunk
// (the model has not sent [DONE] yet) has the whole answer text, while
// the synthesis is cancelled: no AnswerSynthesized records the model
// call's cost, no AnswerServed records the answer, and nothing is cached,
// so the next such call pays the model again. The text delivered must be
// recorded (or the synthesis finish for the cache once its text is out).
func TestAtkSonarStreamTakenWholeLeavesNoRecord(t *testing.T) {
	m := newAtkModel(t)
	e, key := atkLighthouse(t, m)
	m.holdEnd.Store(true)
	synth0 := eventsOfType(t, e, "AnswerSynthesized")
	req, _ := http.NewRequest(http.MethodPost, e.answer+"/v1/chat/completions",
		strings.NewReader(`{"model":"sonar","stream":true,"messages":[{"role":"user","content":"`+atkQ+`"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(text.String(), "[5].") {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ch sonarBody
		if json.Unmarshal([]byte(data), &ch) == nil && len(ch.Choices) > 0 && ch.Choices[0].Delta != nil && ch.Choices[0].Delta.Content != nil {
			text.WriteString(*ch.Choices[0].Delta.Content)
		}
	}
	resp.Body.Close() // hang up with the whole text
	if !strings.Contains(text.String(), "[5].") {
		t.Fatalf("the stream ended before the model's last sentence: %q", text.String())
	}
	eventually(t, 20*time.Second, "the model sees the hang-up", func() bool { return m.held.Load() == 1 })
	eventually(t, 10*time.Second, "the answer the client took is recorded (AnswerSynthesized)", func() bool {
		return eventsOfType(t, e, "AnswerSynthesized") == synth0+1
	})
}
