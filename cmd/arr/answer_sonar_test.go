package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/arr-dev/arr/commands/research/researchtest"
)

// sonarBody is a chat completion of the Sonar-compatible route.
type sonarBody struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Choices []struct {
		Index        int     `json:"index"`
		FinishReason *string `json:"finish_reason"`
		Message      *struct {
			Role, Content string
		} `json:"message"`
		Delta *struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Citations     []string `json:"citations"`
	SearchResults []struct {
		Title, URL, Snippet string
		Date                *string `json:"date"`
	} `json:"search_results"`
	Usage *struct {
		PromptTokens      int    `json:"prompt_tokens"`
		SearchContextSize string `json:"search_context_size"`
	} `json:"usage"`
	Arr *struct {
		AnswerID      string `json:"answer_id"`
		Cached        bool   `json:"cached"`
		Synthesis     string `json:"synthesis"`
		ResolvedQuery string `json:"resolved_query"`
		Tier, Mode    string
	} `json:"arr"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
		Param   string `json:"param"`
	} `json:"error"`
}

// postSonar posts body to /v1/chat/completions as it is.
func postSonar(t testing.TB, base, key, body string) (int, http.Header, sonarBody) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST chat completions: %v", err)
	}
	defer resp.Body.Close()
	var out sonarBody
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("chat completion body: %v", err)
	}
	return resp.StatusCode, resp.Header, out
}

// sonarStreamed posts a streamed request and returns its chunks (the data
// lines before [DONE]) and whether [DONE] ended it.
func sonarStreamed(t testing.TB, base, key, body string) ([]sonarBody, bool) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST chat completions: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		t.Fatalf("stream: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b.Bytes())
	}
	var chunks []sonarBody
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("a line that is not data: %q", line)
		}
		if data == "[DONE]" {
			if sc.Scan() && sc.Text() != "" {
				t.Fatalf("data after [DONE]: %q", sc.Text())
			}
			return chunks, true
		}
		var ch sonarBody
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		chunks = append(chunks, ch)
	}
	return chunks, false
}

// sourceURLs are an arr answer's sources' URLs, in order.
func sourceURLs(a answerBody) []string {
	out := make([]string, len(a.Sources))
	for i, s := range a.Sources {
		out[i] = s.URL
	}
	return out
}

// lighthouseSites serves the filter test's pages on 127.0.0.1 (an old
// page) and localhost (two recent ones) and indexes them.
func lighthouseSites(t *testing.T, e *env) {
	t.Helper()
	recent := time.Now().UTC().AddDate(0, 0, -3).Format("2006-01-02")
	pages := map[string]struct{ head, lastModified, title, text string }{
		"/old-keeper": {"", "Mon, 01 Jan 2001 10:00:00 GMT", "The old keeper's log",
			"The lamp of the north pier lighthouse is powered by paraffin, and the keeper trims its wick every evening."},
		"/new-lamp": {`<meta property="article:published_time" content="` + recent + `T09:00:00Z">`, "", "The new lamp",
			"The lamp of the north pier lighthouse is powered by a solar-charged battery since 2019."},
		"/lens": {`<meta property="article:published_time" content="` + recent + `T10:00:00Z">`, "", "The lens",
			"The lamp of the north pier lighthouse shines through a Fresnel lens that is powered by clockwork."},
	}
	serve := func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if p.lastModified != "" {
			w.Header().Set("Last-Modified", p.lastModified)
		}
		_, _ = w.Write([]byte("<!doctype html><html><head><title>" + p.title + "</title>" + p.head + "</head><body><article><h1>" + p.title + "</h1><p>" + p.text + "</p></article></body></html>"))
	}
	ipSite := httptest.NewServer(http.HandlerFunc(serve))
	t.Cleanup(ipSite.Close)
	nameSrv := httptest.NewServer(http.HandlerFunc(serve))
	t.Cleanup(nameSrv.Close)
	nameSite := strings.Replace(nameSrv.URL, "127.0.0.1", "localhost", 1)
	o, stderr, code := indexAdd(t, e, ipSite.URL+"/old-keeper", nameSite+"/new-lamp", nameSite+"/lens")
	if code != 0 || o.Added != 3 {
		t.Fatalf("indexing: exit %d %+v\n%s", code, o, stderr)
	}

}

// TestSonarCompatibleAPI: POST /v1/chat/completions on the answer service
// answers in the shape Sonar clients parse, on the same command path as
// /api/v1/answer: the same answer and sources (one cache: asking the one
// after the other is a hit), counted against the daily limit and recorded
// (AnswerServed, AnswerSynthesized with the filters and the context
// size); streamed as chat.completion.chunk data lines ending with [DONE];
// the filters in Perplexity's names and formats; follow-ups from the
// earlier messages; hostile input refused with 400s in the OpenAI error
// shape naming the parameter. Every request goes to loopback.
func TestSonarCompatibleAPI(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off", "ARR_ANSWER_LLM_BASE_URL=http://127.0.0.1:1/v1")
	e.up()
	e.createAccount("sonar@example.com", "free")
	key := e.mint("sonar@example.com", "answer").Secret
	lighthouseSites(t, e)
	const q = "What powers the lamp of the north pier lighthouse?"
	user := `"messages":[{"role":"system","content":"Be precise."},{"role":"user","content":"` + q + `"}]`

	t.Run("text: the answer API's answer, citations and search_results", func(t *testing.T) {
		served0 := eventsOfType(t, e, "AnswerServed")
		status, h, s := postSonar(t, e.answer, key, `{"model":"sonar",`+user+`}`)
		if status != 200 || s.Object != "chat.completion" || s.Model != "sonar" || s.ID == "" || s.Created == 0 || len(s.Choices) != 1 ||
			s.Choices[0].Message == nil || s.Choices[0].Message.Role != "assistant" || s.Choices[0].FinishReason == nil || *s.Choices[0].FinishReason != "stop" {
			t.Fatalf("%d %+v", status, s)
		}
		before := remaining(t, h)
		// The same question on the answer API: a cache hit, the same answer.
		code, h2, a := askAnswer(t, http.MethodPost, e.answer, key, map[string]string{"q": q})
		if code != 200 || !a.Cached || a.Answer != s.Choices[0].Message.Content || !slices.Equal(sourceURLs(a), s.Citations) {
			t.Fatalf("answer API after Sonar: %d cached=%v %q %v; Sonar %q %v", code, a.Cached, a.Answer, sourceURLs(a), s.Choices[0].Message.Content, s.Citations)
		}
		if remaining(t, h2) != before-1 {
			t.Fatalf("X-RateLimit-Remaining %d then %d: one call each", before, remaining(t, h2))
		}
		assertCited(t, a)
		if len(s.SearchResults) != len(a.Sources) {
			t.Fatalf("search_results %+v for sources %+v", s.SearchResults, a.Sources)
		}
		for i, r := range s.SearchResults {
			src := a.Sources[i]
			if r.URL != src.URL || r.Title != src.Title || r.Snippet != src.Snippet || r.Snippet == "" || r.Date == nil || src.PublishedDate == nil || *r.Date != *src.PublishedDate {
				t.Fatalf("search_results[%d] %+v, source %+v", i, r, src)
			}
		}
		if s.Usage == nil || s.Usage.SearchContextSize != "medium" || s.Arr == nil || s.Arr.Tier != "free" || s.Arr.Mode != "quick" || s.Arr.Cached {
			t.Fatalf("usage %+v arr %+v", s.Usage, s.Arr)
		}
		_, _, again := postSonar(t, e.answer, key, `{"model":"sonar",`+user+`}`)
		if again.Arr == nil || !again.Arr.Cached || again.ID == s.ID || again.Choices[0].Message.Content != s.Choices[0].Message.Content {
			t.Fatalf("asked again: %+v", again)
		}
		// Recorded as served, each of the three, as the answer API's are.
		eventually(t, 10*time.Second, "three AnswerServed events", func() bool { return eventsOfType(t, e, "AnswerServed") == served0+3 })
		pool, _ := openStore(t, e.dbURL)
		var synthesized int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE event_type = 'AnswerSynthesized' AND data::jsonb->>'answer_id' = $1`, s.Arr.AnswerID).Scan(&synthesized); err != nil || synthesized != 1 {
			t.Fatalf("AnswerSynthesized of answer %s: %d %v", s.Arr.AnswerID, synthesized, err)
		}
	})
	t.Run("stream: chunks with citations, then [DONE]", func(t *testing.T) {
		chunks, done := sonarStreamed(t, e.answer, key, `{"model":"sonar","stream":true,`+user+`}`)
		if !done || len(chunks) < 3 {
			t.Fatalf("done=%v %d chunks", done, len(chunks))
		}
		_, _, plain := postSonar(t, e.answer, key, `{"model":"sonar",`+user+`}`)
		var text strings.Builder
		for i, ch := range chunks {
			if ch.Object != "chat.completion.chunk" || ch.ID != chunks[0].ID || len(ch.Choices) != 1 || ch.Choices[0].Delta == nil || !slices.Equal(ch.Citations, plain.Citations) {
				t.Fatalf("chunk %d %+v (plain citations %v)", i, ch, plain.Citations)
			}
			if c := ch.Choices[0].Delta.Content; c != nil {
				text.WriteString(*c)
			}
			last := i == len(chunks)-1
			if (ch.Choices[0].FinishReason != nil) != last || (ch.Usage != nil) != last {
				t.Fatalf("chunk %d of %d: finish %v usage %+v", i, len(chunks), ch.Choices[0].FinishReason, ch.Usage)
			}
		}
		if chunks[0].Choices[0].Delta.Role != "assistant" || text.String() != plain.Choices[0].Message.Content {
			t.Fatalf("streamed %q, plain %q", text.String(), plain.Choices[0].Message.Content)
		}
	})
	t.Run("filters in Perplexity's names", func(t *testing.T) {
		hosts := func(s sonarBody) map[string]bool {
			h := map[string]bool{}
			for _, c := range s.Citations {
				u, err := url.Parse(c)
				if err != nil {
					t.Fatalf("citation %q: %v", c, err)
				}
				h[u.Hostname()] = true
			}
			return h
		}
		for body, want := range map[string][]string{
			`"search_domain_filter":["LOCALHOST"]`:                                                    {"localhost"},
			`"search_domain_filter":["-localhost"]`:                                                   {"127.0.0.1"},
			`"search_domain_filter":["127.0.0.1","-localhost"]`:                                       {"127.0.0.1"},
			`"search_recency_filter":"month"`:                                                         {"localhost"},
			`"search_recency_filter":"hour"`:                                                          nil, // nothing dated today or yesterday
			`"search_after_date_filter":"12/31/2000","search_before_date_filter":"01/1/2001"`:         {"127.0.0.1"},
			`"search_domain_filter":["localhost"],"web_search_options":{"search_context_size":"low"}`: {"localhost"},
		} {
			status, _, s := postSonar(t, e.answer, key, `{"model":"sonar",`+user+`,`+body+`}`)
			if status != 200 {
				t.Fatalf("%s: %d %+v", body, status, s.Error)
			}
			h := hosts(s)
			if len(h) != len(want) {
				t.Fatalf("%s: hosts %v, want %v", body, h, want)
			}
			for _, w := range want {
				if !h[w] {
					t.Fatalf("%s: hosts %v, want %v", body, h, want)
				}
			}
		}
		// The filters are the answer API's: the same filters there are a hit.
		_, a := askAnswerJSON(t, e.answer, key, `{"q":"`+q+`","include_domains":["localhost"],"time_range":"month"}`)
		_, _, s := postSonar(t, e.answer, key, `{"model":"sonar",`+user+`,"search_domain_filter":["localhost"],"search_recency_filter":"month"}`)
		if !s.Arr.Cached || !slices.Equal(s.Citations, sourceURLs(a)) {
			t.Fatalf("answer API then Sonar with the same filters: cached=%v %v vs %v", s.Arr.Cached, s.Citations, sourceURLs(a))
		}
		pool, _ := openStore(t, e.dbURL)
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE event_type = 'AnswerSynthesized'
			AND data::jsonb->>'context_size' = 'low' AND data::jsonb->'filters'->'include_domains' = '["localhost"]'::jsonb`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("AnswerSynthesized with context_size low: %d %v", n, err)
		}
	})
	t.Run("follow-up from the earlier messages", func(t *testing.T) {
		status, _, s := postSonar(t, e.answer, key, `{"model":"sonar","messages":[
			{"role":"user","content":"Tell me about the lamp of the north pier lighthouse"},
			{"role":"assistant","content":"It is the lighthouse's light."},
			{"role":"user","content":[{"type":"text","text":"What powers it?"}]}]}`)
		if status != 200 || s.Arr == nil || s.Arr.ResolvedQuery == "What powers it?" || !strings.Contains(s.Arr.ResolvedQuery, "lamp") || len(s.Citations) == 0 {
			t.Fatalf("%d %+v", status, s.Arr)
		}
	})
	t.Run("pro models need the Pro plan", func(t *testing.T) {
		for _, m := range []string{"sonar-pro", "sonar-reasoning", "sonar-reasoning-pro", "sonar-deep-research"} {
			status, _, s := postSonar(t, e.answer, key, `{"model":"`+m+`",`+user+`}`)
			if status != 403 || s.Error == nil || s.Error.Code != 403 || s.Error.Type != "pro_plan_required" || !strings.Contains(s.Error.Message, m) {
				t.Fatalf("%s on Free: %d %+v", m, status, s.Error)
			}
		}
	})
	t.Run("the models' tiers and modes on the Pro plan", func(t *testing.T) {
		e.createAccount("sonarpro@example.com", "pro")
		pro := e.mint("sonarpro@example.com", "answer").Secret
		for m, want := range map[string][2]string{"sonar": {"free", "quick"}, "sonar-pro": {"pro", "quick"}, "sonar-reasoning": {"free", "deep"},
			"sonar-reasoning-pro": {"pro", "deep"}, "sonar-deep-research": {"pro", "deep"}} {
			status, _, s := postSonar(t, e.answer, pro, `{"model":"`+m+`",`+user+`}`)
			if status != 200 || s.Model != m || s.Arr == nil || s.Arr.Tier != want[0] || s.Arr.Mode != want[1] || len(s.Citations) == 0 {
				t.Fatalf("%s on Pro: %d %+v %+v", m, status, s.Arr, s.Error)
			}
		}
	})
	t.Run("hostile input: 400s in the OpenAI error shape", func(t *testing.T) {
		long := strings.Repeat("lighthouse ", 60)
		for body, param := range map[string]string{
			`{"model":"sonar",` + user: "",
			`[]`:                       "",
			`{"model":"sonar","model":"sonar",` + user + `}`: "model",
			`{` + user + `}`:                                                 "model",
			`{"model":"gpt-4o",` + user + `}`:                                "model",
			`{"model":7,` + user + `}`:                                       "model",
			`{"model":"sonar"}`:                                              "messages",
			`{"model":"sonar","messages":[]}`:                                "messages",
			`{"model":"sonar","messages":"hi"}`:                              "messages",
			`{"model":"sonar","messages":[{"role":"system","content":"x"}]}`: "messages[0].role",
			`{"model":"sonar","messages":[{"role":"user","content":"` + q + `"},{"role":"assistant","content":"x"}]}`: "messages[1].role",
			`{"model":"sonar","messages":[{"role":"user","content":"ab"}]}`:                                           "messages[0].content",
			`{"model":"sonar","messages":[{"role":"user","content":"` + long + `"}]}`:                                 "messages[0].content",
			`{"model":"sonar","messages":[{"role":"user","content":7}]}`:                                              "messages[0].content",
			`{"model":"sonar","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`: "messages[0].content[0]",
			`{"model":"sonar","messages":[{"role":"tool","content":"x"},{"role":"user","content":"` + q + `"}]}`:      "messages[0].role",
			`{"model":"sonar","messages":[{"role":"user","content":"` + q + `","extra":1}]}`:                          "messages[0].extra",
			`{"model":"sonar",` + user + `,"search_domain_filter":"localhost"}`:                                       "search_domain_filter",
			`{"model":"sonar",` + user + `,"search_domain_filter":["https://localhost/x"]}`:                           "search_domain_filter",
			`{"model":"sonar",` + user + `,"search_domain_filter":["localhost","-localhost"]}`:                        "search_domain_filter",
			`{"model":"sonar",` + user + `,"search_domain_filter":["a.com","b.com","c.com","d.com","e.com","f.com","g.com","h.com","i.com","j.com","k.com","-l.com","m.com","n.com","o.com","p.com","q.com","r.com","s.com","t.com","u.com"]}`: "search_domain_filter",
			`{"model":"sonar",` + user + `,"search_recency_filter":"decade"}`:                                             "search_recency_filter",
			`{"model":"sonar",` + user + `,"search_recency_filter":7}`:                                                    "search_recency_filter",
			`{"model":"sonar",` + user + `,"search_recency_filter":"week","search_after_date_filter":"1/1/2024"}`:         "search_recency_filter",
			`{"model":"sonar",` + user + `,"search_after_date_filter":"2024-01-01"}`:                                      "search_after_date_filter",
			`{"model":"sonar",` + user + `,"search_before_date_filter":"2/30/2024"}`:                                      "search_before_date_filter",
			`{"model":"sonar",` + user + `,"search_after_date_filter":"3/1/2024","search_before_date_filter":"2/1/2024"}`: "search_after_date_filter",
			`{"model":"sonar",` + user + `,"web_search_options":{"search_context_size":"huge"}}`:                          "web_search_options.search_context_size",
			`{"model":"sonar",` + user + `,"web_search_options":"low"}`:                                                   "web_search_options",
			`{"model":"sonar",` + user + `,"stream":"yes"}`:                                                               "stream",
			`{"model":"sonar",` + user + `,"temperature":"hot"}`:                                                          "temperature",
			`{"model":"sonar",` + user + `,"n":2}`:                                                                        "n",
			`{"model":"sonar",` + user + `,"tools":[]}`:                                                                   "tools",
			`{"model":"sonar",` + user + `,"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`:         "response_format.json_schema.name",
			`{"model":"sonar",` + user + `,"response_format":"json"}`:                                                     "response_format",
		} {
			status, _, s := postSonar(t, e.answer, key, body)
			if status != 400 || s.Error == nil || s.Error.Code != 400 || s.Error.Type == "" || s.Error.Message == "" || s.Error.Param != param {
				t.Errorf("%.120s: %d %+v, want 400 on %q", body, status, s.Error, param)
			}
		}
		// Accepted and ignored: the sampling fields clients send.
		status, _, s := postSonar(t, e.answer, key, `{"model":"sonar",`+user+`,"temperature":0.2,"top_p":0.9,"max_tokens":100,"presence_penalty":0,"frequency_penalty":1,"stream_options":{"include_usage":true},"response_format":{"type":"text"},"web_search_options":{"user_location":{"country":"FR"}}}`)
		if status != 200 || len(s.Citations) == 0 {
			t.Fatalf("sampling fields: %d %+v", status, s.Error)
		}
		// Too big, no key, a bad key: the same shape.
		status, _, s = postSonar(t, e.answer, key, `{"model":"sonar","messages":[{"role":"user","content":"`+strings.Repeat("x", 70<<10)+`"}]}`)
		if status != 413 || s.Error == nil || s.Error.Code != 413 || s.Error.Message == "" {
			t.Errorf("70 KiB body: %d %+v", status, s.Error)
		}
		for _, k := range []string{"", "arr_ans_nope"} {
			status, _, s = postSonar(t, e.answer, k, `{"model":"sonar",`+user+`}`)
			if status != 401 || s.Error == nil || s.Error.Code != 401 || !strings.Contains(s.Error.Type, "api_key") {
				t.Errorf("key %q: %d %+v", k, status, s.Error)
			}
		}
	})
}

// TestSonarClients: the official clients against the Sonar-compatible
// route, changing only the base URL and the key: openai-go and the openai
// npm package (text, stream, filters in the body, a bad filter's error)
// and the Vercel AI SDK's @ai-sdk/perplexity provider (generateText,
// streamText, providerOptions filters, an unknown model). Every client's
// citations are the sources the answer API serves for the same question
// and filters.
func TestSonarClients(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off", "ARR_ANSWER_LLM_BASE_URL=http://127.0.0.1:1/v1")
	e.up()
	e.createAccount("clients@example.com", "free")
	key := e.mint("clients@example.com", "answer").Secret
	lighthouseSites(t, e)
	const q = "What powers the lamp of the north pier lighthouse?"
	_, served := askAnswerJSON(t, e.answer, key, `{"q":"`+q+`"}`)
	_, filtered := askAnswerJSON(t, e.answer, key, `{"q":"`+q+`","include_domains":["localhost"],"time_range":"month"}`)
	assertCited(t, served)
	assertCited(t, filtered)
	if slices.Equal(sourceURLs(served), sourceURLs(filtered)) {
		t.Fatalf("the filters changed nothing: %v", sourceURLs(served))
	}
	want, wantFiltered := sourceURLs(served), sourceURLs(filtered)

	t.Run("openai-go", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		client := openai.NewClient(option.WithBaseURL(e.answer+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
		params := openai.ChatCompletionNewParams{Model: "sonar", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(q)}}
		citations := func(t *testing.T, raw string) []string {
			t.Helper()
			var c []string
			if err := json.Unmarshal([]byte(raw), &c); err != nil {
				t.Fatalf("citations %q: %v", raw, err)
			}
			return c
		}
		resp, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Choices[0].Message.Content != served.Answer || !slices.Equal(citations(t, resp.JSON.ExtraFields["citations"].Raw()), want) {
			t.Fatalf("text: %q %s", resp.Choices[0].Message.Content, resp.JSON.ExtraFields["citations"].Raw())
		}
		stream := client.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		var last string
		for stream.Next() {
			ch := stream.Current()
			acc.AddChunk(ch)
			last = ch.JSON.ExtraFields["citations"].Raw()
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.Choices[0].Message.Content != served.Answer || !slices.Equal(citations(t, last), want) {
			t.Fatalf("stream: %q %s", acc.Choices[0].Message.Content, last)
		}
		resp, err = client.Chat.Completions.New(ctx, params, option.WithJSONSet("search_domain_filter", []string{"localhost"}), option.WithJSONSet("search_recency_filter", "month"))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(citations(t, resp.JSON.ExtraFields["citations"].Raw()), wantFiltered) {
			t.Fatalf("filtered: %s, want %v", resp.JSON.ExtraFields["citations"].Raw(), wantFiltered)
		}
		_, err = client.Chat.Completions.New(ctx, params, option.WithJSONSet("search_domain_filter", []string{"http://localhost:1/"}))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "search_domain_filter" || !strings.Contains(apiErr.Message, "host name") {
			t.Fatalf("a bad domain: %v", err)
		}
	})
	for _, c := range []struct{ dir, pkg string }{{"openai-node", "openai"}, {"ai-sdk-perplexity", "@ai-sdk/perplexity"}} {
		t.Run(c.dir, func(t *testing.T) {
			rep := runSonarScript(t, c.dir, c.pkg, e.answer+"/v1", key, q)
			for _, call := range []string{"plain", "generate", "stream"} {
				if r, ok := rep[call]; ok && (!slices.Equal(r.urls(), want) || r.Text != served.Answer) {
					t.Fatalf("%s: %q %v, want %q %v", call, r.Text, r.urls(), served.Answer, want)
				}
			}
			if r := rep["filtered"]; !slices.Equal(r.urls(), wantFiltered) {
				t.Fatalf("filtered: %v, want %v", r.urls(), wantFiltered)
			}
		})
	}
}

// sonarCall is one call of a client script's report.
type sonarCall struct {
	Text      string   `json:"text"`
	Citations []string `json:"citations"`
	Sources   []string `json:"sources"`
}

func (c sonarCall) urls() []string {
	if c.Sources != nil {
		return c.Sources
	}
	return c.Citations
}

// runSonarScript runs scripts/clients/DIR/sonar.mjs (with the Node.js 22
// the directory pins, if it does) and returns its report's calls.
func runSonarScript(t *testing.T, dir, pkg, base, key, q string) map[string]sonarCall {
	t.Helper()
	abs, _ := filepath.Abs("../../scripts/clients/" + dir)
	if _, err := os.Stat(filepath.Join(abs, "node_modules", pkg, "package.json")); err != nil {
		t.Fatalf("the %s npm package is not installed in %s: run scripts/test.sh (or npm ci there)", pkg, abs)
	}
	node := filepath.Join(abs, "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		node = "node"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "sonar.mjs")
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), "ARR_BASE_URL="+base, "ARR_API_KEY="+key, "Q="+q, "KEEP_HOST=localhost")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s/sonar.mjs: %v\n%s\n%s", dir, err, out, stderr.Bytes())
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("report %s: %v", out, err)
	}
	calls := map[string]sonarCall{}
	for k, v := range raw {
		var c sonarCall
		if json.Unmarshal(v, &c) == nil {
			calls[k] = c
		}
	}
	t.Logf("%s report: %s", dir, out)
	return calls
}

// TestSonarStreamModel: with a language model (the loopback stand-in that
// streams a word per chunk) the Sonar stream relays the model's raw tokens
// as content chunks, each carrying the citations the raw text numbers by
// (the sources as numbered for the model); the non-streamed answer
// afterwards is the checked one, from the cache. A model that fails makes
// the stream carry the extractive answer, whose citations are the served
// sources.
func TestSonarStreamModel(t *testing.T) {
	site := newLoopSite(t, map[string]string{
		"/ferry": article("Ferry timetable", []string{"The island ferry leaves the north pier at nine and at three every day.", "The crossing takes forty minutes."}),
		"/tides": article("Tide tables", []string{"High water at the north pier comes about fifty minutes later each day.", "Spring tides follow the new and the full moon."}),
	})
	model := researchtest.NewLLM(t)
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off",
		"ARR_ANSWER_LLM_BASE_URL="+model.BaseURL(), "ARR_ANSWER_LLM_API_KEY=standin")
	e.up()
	e.createAccount("sonarmodel@example.com", "free")
	key := e.mint("sonarmodel@example.com", "answer").Secret
	if o, errs, code := indexAdd(t, e, site.srv.URL+"/ferry", site.srv.URL+"/tides"); code != 0 || o.Added != 2 {
		t.Fatalf("index add: exit %d %+v %s", code, o, errs)
	}
	ask := func(q string) string {
		return `{"model":"sonar","messages":[{"role":"user","content":"` + q + `"}]`
	}

	chunks, done := sonarStreamed(t, e.answer, key, ask("When does the island ferry leave?")+`,"stream":true}`)
	var text strings.Builder
	for _, ch := range chunks {
		if len(ch.Citations) == 0 { // they narrow to the cited sources as the text comes
			t.Fatalf("chunk citations %v, first %v", ch.Citations, chunks[0].Citations)
		}
		if c := ch.Choices[0].Delta.Content; c != nil {
			text.WriteString(*c)
		}
	}
	if !done || len(chunks) < 3 || strings.Contains(text.String(), "[42]") || model.Streams() != 1 {
		t.Fatalf("done=%v %d chunks, text %q, %d model streams", done, len(chunks), text.String(), model.Streams())
	}
	status, _, plain := postSonar(t, e.answer, key, ask("When does the island ferry leave?")+`}`)
	if status != 200 || !plain.Arr.Cached || plain.Arr.AnswerID == "" || plain.Choices[0].Message.Content != text.String() || !slices.Equal(chunks[len(chunks)-1].Citations, plain.Citations) || len(plain.Citations) == 0 {
		t.Fatalf("plain after the stream: %d %+v", status, plain)
	}
	for _, c := range plain.Citations {
		if !slices.Contains(chunks[0].Citations, c) {
			t.Fatalf("the answer cites %s, which the stream did not list: %v", c, chunks[0].Citations)
		}
	}

	model.SetDown(true)
	defer model.SetDown(false)
	chunks, done = sonarStreamed(t, e.answer, key, ask("When does the island ferry leave the north pier?")+`,"stream":true}`)
	text.Reset()
	for _, ch := range chunks {
		if c := ch.Choices[0].Delta.Content; c != nil {
			text.WriteString(*c)
		}
	}
	_, _, plain = postSonar(t, e.answer, key, ask("When does the island ferry leave the north pier?")+`}`)
	last := chunks[len(chunks)-1]
	if !done || plain.Arr.Synthesis != "extractive" || text.String() != plain.Choices[0].Message.Content || !slices.Equal(last.Citations, plain.Citations) {
		t.Fatalf("model down: done=%v text %q, plain %q (%s), last citations %v, plain %v", done, text.String(), plain.Choices[0].Message.Content, plain.Arr.Synthesis, last.Citations, plain.Citations)
	}
}
