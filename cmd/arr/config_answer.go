package main

import (
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// AnswerConfig is the answer service's part of Config.
type AnswerConfig struct {
	Search        string
	SearXNGURL    string
	BraveAPIKey   string
	BraveAPIBase  string
	LLMBaseURL    string
	LLMAPIKey     string
	LLMModel      string
	FetchPrivate  string
	Seed          string
	TestClockFile string
	FeaturesFile  string
}

func (c *Config) answerSettings() []setting {
	a := &c.Answer
	return []setting{
		{env: "ARR_SEARCH", str: &a.Search, def: "local", help: "answer search backend: local (the local index: documents added with arr answer index add, ranked as passages), searxng or brave", choices: []string{"local", "searxng", "brave"}},
		{env: "SEARXNG_URL", str: &a.SearXNGURL, help: "SearXNG instance for ARR_SEARCH=searxng (its JSON format must be enabled)"},
		{env: "BRAVE_API_KEY", str: &a.BraveAPIKey, secret: true, help: "Brave Search API key for ARR_SEARCH=brave"},
		{env: "BRAVE_API_BASE", str: &a.BraveAPIBase, def: "https://api.search.brave.com", help: "Brave Search API base URL"},
		{env: "ARR_ANSWER_LLM_BASE_URL", str: &a.LLMBaseURL, help: "OpenAI-compatible base URL the answer service writes with; empty is this arr's gateway (http://ARR_GATEWAY_ADDR/v1)"},
		{env: "ARR_ANSWER_LLM_API_KEY", str: &a.LLMAPIKey, secret: true, help: "API key for ARR_ANSWER_LLM_BASE_URL (for arr's gateway: a gateway key); without one that answers, answers are extractive"},
		{env: "ARR_ANSWER_LLM_MODEL", str: &a.LLMModel, def: "auto", help: "model the answer service asks for (auto lets arr's gateway choose)"},
		{env: "ARR_ANSWER_FETCH_PRIVATE", str: &a.FetchPrivate, def: "deny", help: "allow lets the answer service fetch pages on loopback and private addresses (deny: public addresses only)", choices: []string{"deny", "allow"}},
		{env: "ARR_ANSWER_SEED", str: &a.Seed, def: "on", help: "on: the first arr up seeds the local index with arr's own documentation and the records service's data sources", choices: []string{"on", "off"}},
		{env: "ARR_ANSWER_FEATURES_FILE", str: &a.FeaturesFile, help: "evaluation only: a file the extractive writer appends every candidate sentence's feature values to (JSON lines), the input of scripts/eval/answer -fit"},
		{env: "ARR_TEST_CLOCK_FILE", str: &a.TestClockFile, help: "tests only: a file holding a Go duration (e.g. 6h1m) added to the wall clock of the services; re-read every 20ms"},
	}
}

// validate checks what the answer settings need together.
func (a AnswerConfig) validate(c *Config) []error {
	if a.Search != "searxng" {
		return nil
	}
	u, err := url.Parse(a.SearXNGURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return []error{&configError{env: "SEARXNG_URL", value: c.rawOf("SEARXNG_URL"), want: "an absolute http(s) URL when ARR_SEARCH=searxng, like http://127.0.0.1:8888"}}
	}
	return nil
}

func (c *Config) llmBaseURL() string {
	if c.Answer.LLMBaseURL != "" {
		return c.Answer.LLMBaseURL
	}
	return "http://" + c.GatewayAddr + "/v1"
}

// clock is the services' clock: the wall clock, moved by the offset in
// ARR_TEST_CLOCK_FILE when set (tests move time without waiting for it).
func (c *Config) clock() func() time.Time {
	if c.Answer.TestClockFile == "" {
		return time.Now
	}
	fc := &fileClock{path: c.Answer.TestClockFile}
	return fc.Now
}

type fileClock struct {
	path    string
	mu      sync.Mutex
	off     time.Duration
	checked time.Time
}

func (f *fileClock) Now() time.Time {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.checked) > 20*time.Millisecond {
		f.checked = now
		if b, err := os.ReadFile(f.path); err == nil {
			if d, err := time.ParseDuration(strings.TrimSpace(string(b))); err == nil {
				f.off = d
			}
		}
	}
	return now.Add(f.off)
}
