package answer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
)

// CacheTTL is how long a synthesized answer is served from the cache.
const CacheTTL = 6 * time.Hour

// Synthesis says how an answer was written.
type Synthesis string

// Ways an answer is written.
const (
	// LLM: a language model wrote the answer from the ranked passages.
	LLM Synthesis = "llm"
	// Extractive: no language model answered; the answer is the ranked
	// sentences of the sources, each with its marker.
	Extractive Synthesis = "extractive"
	// NoSources: the search found nothing to read; the answer says so.
	NoSources Synthesis = "no_sources"
)

// Source is one cited source: its title, absolute URL and the passage(s)
// the answer drew on.
type Source struct {
	// Title is the source page's title.
	Title string `json:"title"`
	// URL is the source's absolute URL.
	URL string `json:"url"`
	// Content is the passage(s) of the source the answer drew on.
	Content string `json:"content"`
	// PublishedDate is the source's date ("YYYY-MM-DD": its published or
	// modified date as the page states it, else its HTTP Last-Modified),
	// or null when it has none (always null in schema versions 1 and 2).
	PublishedDate *string `json:"published_date"`
	// Snippet is the passage text the answer used from the source, at
	// most SnippetChars code points (Snippet); schema version 3 (empty in
	// an earlier answer, whose reader computes it from Content).
	Snippet string `json:"snippet"`
}

// PublishedDate is a source's published date as a Source carries it: nil
// for "".
func PublishedDate(date string) *string {
	if date == "" {
		return nil
	}
	return &date
}

// Costs are what one synthesis used.
type Costs struct {
	// Searches is the number of web searches run.
	Searches int `json:"searches"`
	// PagesFetched is the number of pages fetched to read.
	PagesFetched int `json:"pages_fetched"`
	// LLMCalls is the number of language-model calls made.
	LLMCalls int `json:"llm_calls"`
	// PromptTokens is the language model's input tokens, summed over calls.
	PromptTokens int64 `json:"prompt_tokens"`
	// CompletionTokens is the language model's output tokens, summed over
	// calls.
	CompletionTokens int64 `json:"completion_tokens"`
	// CostMicroUSD is the language model's cost as its upstream reported
	// it (0 when it reported none).
	CostMicroUSD int64 `json:"cost_micro_usd"`
	// SearchUS is the web search's duration in microseconds.
	SearchUS int64 `json:"search_us"`
	// FetchUS is the page fetch's duration in microseconds: the slowest
	// page of the concurrent fetch.
	FetchUS int64 `json:"fetch_us"`
	// ExtractUS is the text extraction's duration in microseconds, summed
	// over pages.
	ExtractUS int64 `json:"extract_us"`
	// RankUS is the passage ranking's duration in microseconds.
	RankUS int64 `json:"rank_us"`
	// SynthesisUS is the writing of the answer's duration in microseconds.
	SynthesisUS int64 `json:"synthesis_us"`
	// TotalUS is the whole synthesis's duration in microseconds.
	TotalUS int64 `json:"total_us"`
}

// AnswerSynthesized: an answer was researched and written. It is the cache
// entry for CacheKey from SynthesizedAt for ValidForSeconds.
type AnswerSynthesized struct {
	// AnswerID identifies the answer (AnswerServed names it).
	AnswerID uuid.UUID `json:"answer_id"`
	// Question is the question as asked, trimmed.
	Question string `json:"question"`
	// Normalized is the question folded for the cache: lower case, letters
	// and digits kept, separators collapsed.
	Normalized string `json:"normalized"`
	// CacheKey is the answer cache's key: a hash of the normalized
	// question, tier, mode and local index generation (32 hex digits).
	CacheKey string `json:"cache_key"`
	// Tier is the answer tier asked for.
	Tier Tier `json:"tier"`
	// Mode is the research mode asked for.
	Mode Mode `json:"mode"`
	// Answer is the answer's text, with numbered citation markers ([1])
	// into Sources.
	Answer string `json:"answer"`
	// Sources are the cited sources, in citation order ([1] is the first).
	Sources []Source `json:"sources"`
	// Synthesis says how the answer was written.
	Synthesis Synthesis `json:"synthesis"`
	// AnswerFound: a passage of the sources answers the question. False
	// when the answer says, in one sentence, that the sources do not
	// (Sources then lists the closest ones, or none when nothing
	// matched). Schema version 4; an earlier answer reads as found unless
	// its Synthesis is NoSources (Upcast).
	AnswerFound bool `json:"answer_found"`
	// Model is the language model that wrote the answer (empty when none
	// did).
	Model string `json:"model,omitempty"`
	// SubQuestions are the sub-questions deep mode researched.
	SubQuestions []string `json:"sub_questions,omitempty"`
	// Backend names the search backend the sources came from.
	Backend string `json:"backend"`
	// Costs are what the synthesis used.
	Costs Costs `json:"costs"`
	// SynthesizedAt is when the answer was written (UTC); the cache entry
	// starts then.
	SynthesizedAt time.Time `json:"synthesized_at"`
	// ValidForSeconds is how long the cache serves the answer from
	// SynthesizedAt.
	ValidForSeconds int64 `json:"valid_for_seconds"`
	// Retrieval records how the sources were found and which sentences an
	// extractive answer quotes, so a new ranking can be replayed and
	// compared offline (schema version 2; absent in version 1).
	Retrieval *Retrieval `json:"retrieval,omitempty"`
	// Filters are the filters the answer was made with (domains and the
	// window of dates, resolved), absent when none (schema version 3;
	// absent in versions 1 and 2, which had no filters).
	Filters *Filters `json:"filters,omitempty"`
	// ResolvedQuery is the self-contained question the answer was
	// researched for: Question resolved against the earlier turns of a
	// conversation (schema version 3; absent when no turns were given,
	// the question itself).
	ResolvedQuery string `json:"resolved_query,omitempty"`
	// Conversation says that earlier turns were given and how the
	// question was resolved against them (schema version 3; absent when
	// none were).
	Conversation *Conversation `json:"conversation,omitempty"`
	// Format is the response_format the answer was asked in, when it was
	// JSON against a schema (Answer is then the JSON text) (schema
	// version 4; absent for prose, as in every earlier answer).
	Format *ResponseFormat `json:"format,omitempty"`
	// ContextSize is the search_context_size the answer was asked with
	// (the Sonar-compatible route), absent when medium, the default: it
	// scaled the sources read (optional in schema version 3; absent in
	// every answer before it, which read the tier's and mode's).
	ContextSize ContextSize `json:"context_size,omitempty"`
}

// Conversation is what an answer knew of the conversation it was asked
// in.
type Conversation struct {
	// Turns is the number of earlier messages given.
	Turns int `json:"turns"`
	// ResolvedBy says how the question was made self-contained: "llm" (a
	// language model rewrote it), "extractive" (ResolveFollowUp's rule) or
	// "unchanged" (nothing to resolve).
	ResolvedBy string `json:"resolved_by"`
}

// Retrieval is what an answer's retrieval did.
type Retrieval struct {
	// Query is the text retrieval ran for (the question, with deep mode's
	// sub-questions).
	Query string `json:"query"`
	// Generation is the local index's generation (0 for web search).
	Generation uint64 `json:"generation,omitempty"`
	// Passages are the best passages, best first, with their scores.
	Passages []RetrievedPassage `json:"passages"`
	// Chosen are the sentences an extractive answer quotes, in its order.
	Chosen []ChosenSentence `json:"chosen,omitempty"`
}

// RetrievedPassage is one ranked passage.
type RetrievedPassage struct {
	// ID is the passage's id, "{doc_id}:{seq}".
	ID string `json:"id"`
	// URL is the passage's source URL.
	URL string `json:"url"`
	// Score is the passage's ranking score (higher is better).
	Score float64 `json:"score"`
}

// ChosenSentence is one quoted sentence: its passage, its index among the
// passage's sentences and the source number it is cited as.
type ChosenSentence struct {
	// Passage is the quoted passage's ID.
	Passage string `json:"passage"`
	// Sentence is the sentence's 0-based index among the passage's
	// sentences.
	Sentence int `json:"sentence"`
	// Source is the source number the sentence is cited as ([1] is 1).
	Source int `json:"source"`
}

func (AnswerSynthesized) EventType() string { return "AnswerSynthesized" }

// CleanWorldText makes the text the answer took from the world (pages,
// search results, a language model) fit the rule for event text
// (text.Clean): a page with a NUL in it is cited without the NUL instead
// of producing an event no read model can store.
func (e *AnswerSynthesized) CleanWorldText() {
	e.Answer = text.Clean(e.Answer)
	e.Model = text.Clean(e.Model)
	e.Backend = text.Clean(e.Backend)
	if len(e.Sources) > 0 {
		srcs := make([]Source, len(e.Sources))
		for i, s := range e.Sources {
			srcs[i] = Source{Title: text.Clean(s.Title), URL: text.Clean(s.URL), Content: text.Clean(s.Content), PublishedDate: s.PublishedDate,
				Snippet: text.Clean(s.Snippet)}
		}
		e.Sources = srcs
	}
	for i, q := range e.SubQuestions {
		e.SubQuestions[i] = text.Clean(q)
	}
	e.ResolvedQuery = text.Clean(e.ResolvedQuery)
}
func (AnswerSynthesized) SchemaVersion() int { return 4 }

// Upcast implements domain.Upcaster: version 2 added Retrieval, which a
// version 1 answer did not record (absent: nothing to replay); version 3
// added Filters, the sources' published_date and Snippet, ResolvedQuery
// and Conversation, which earlier answers did not have (absent: no
// filter, no conversation — the question is what retrieval ran for; null:
// no date; empty: a reader computes the snippet from Content); version 4
// added Format (absent: prose) and AnswerFound, which an earlier answer
// gets from its synthesis: every answer then was written from a passage
// except one of no_sources, which said the sources did not answer.
func (AnswerSynthesized) Upcast(from int, data []byte) ([]byte, error) {
	if from < 1 || from > 3 {
		return nil, fmt.Errorf("no schema version %d of AnswerSynthesized", from)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading AnswerSynthesized version %d: %w", from, err)
	}
	var syn Synthesis
	if raw, ok := m["synthesis"]; ok {
		if err := json.Unmarshal(raw, &syn); err != nil {
			return nil, fmt.Errorf("reading AnswerSynthesized version %d's synthesis: %w", from, err)
		}
	}
	m["answer_found"] = json.RawMessage(strconv.FormatBool(syn != NoSources))
	return json.Marshal(m)
}

// ExpiresAt is when the cache entry stops being served.
func (e AnswerSynthesized) ExpiresAt() time.Time {
	return e.SynthesizedAt.Add(time.Duration(e.ValidForSeconds) * time.Second)
}

// AnswerServed: a key received an answer, from the cache or freshly made.
type AnswerServed struct {
	// AccountID is the account the answer was served to.
	AccountID uuid.UUID `json:"account_id"`
	// KeyID is the key that asked.
	KeyID uuid.UUID `json:"key_id"`
	// CacheKey is the answer's cache key (as in its AnswerSynthesized).
	CacheKey string `json:"cache_key"`
	// AnswerID is the answer served (its AnswerSynthesized).
	AnswerID uuid.UUID `json:"answer_id"`
	// Tier is the answer tier asked for.
	Tier Tier `json:"tier"`
	// Mode is the research mode asked for.
	Mode Mode `json:"mode"`
	// Cached is true when the answer came from the cache, false when it
	// was made for this request.
	Cached bool `json:"cached"`
	// ServedAt is when it was served (UTC).
	ServedAt time.Time `json:"served_at"`
	// ResolvedQuery is the self-contained question this request's
	// follow-up was resolved into (schema version 2; absent when the
	// request gave no earlier turns).
	ResolvedQuery string `json:"resolved_query,omitempty"`
	// Turns is the number of earlier turns the request gave (schema
	// version 2; absent when none).
	Turns int `json:"turns,omitempty"`
}

func (AnswerServed) EventType() string  { return "AnswerServed" }
func (AnswerServed) SchemaVersion() int { return 2 }

// Upcast implements domain.Upcaster: version 2 added ResolvedQuery and
// Turns, absent when no conversation was given, as in every version 1
// answer; a version 1 payload reads as version 2 unchanged.
func (AnswerServed) Upcast(from int, data []byte) ([]byte, error) {
	if from != 1 {
		return nil, fmt.Errorf("no schema version %d of AnswerServed", from)
	}
	return data, nil
}

// Events lists constructors for every event of this package, for a
// domain.Registry.
func Events() []func() domain.Event {
	evs := []func() domain.Event{
		func() domain.Event { return &AnswerSynthesized{} },
		func() domain.Event { return &AnswerServed{} },
		func() domain.Event { return &DocumentIndexed{} },
	}
	return append(evs, JobEvents()...)
}

// StreamID is the stream of one cache key's syntheses.
func StreamID(cacheKey string) string { return "answer-" + cacheKey }

// ServedStreamID is the stream of one account's served answers of one UTC
// day (day as usage.DayLayout).
func ServedStreamID(accountID uuid.UUID, day string) string {
	return "answerserved-" + accountID.String() + "-" + day
}

// TTL is how long an answer is served from the cache: CacheTTL (6 hours,
// as the interface specification says) whatever wrote it. An answer from
// the local index is stale sooner, when a document changes: the index's
// generation is part of its cache key.
func TTL(Synthesis) time.Duration { return CacheTTL }
