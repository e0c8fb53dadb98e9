package research

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/domain/answer"
)

const planPrompt = `You plan web research. Given a question, write up to %d short web search queries that together cover what is needed to answer it well: its parts, definitions it depends on, and comparisons it implies. Answer with a JSON array of strings only.`

// deepGather plans sub-questions, searches for the question and each
// sub-question concurrently, and reads the union of the results, most
// corroborated first.
func (r *Researcher) deepGather(ctx context.Context, req answer.Request, res *Result) ([]document, error) {
	t := time.Now()
	res.SubQuestions = r.plan(ctx, req, res)
	queries := append([]string{req.Query}, res.SubQuestions...)
	if len(queries) > r.cfg.DeepMaxSearches {
		queries = queries[:r.cfg.DeepMaxSearches]
		res.SubQuestions = queries[1:]
	}
	sctx, cancel := context.WithTimeout(ctx, r.cfg.DeepSearchBudget)
	defer cancel()
	n := r.sources(req)
	results := make([][]websearch.Hit, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = r.cfg.Search.Search(sctx, searchQuery(q, req.Filters), n)
		}()
	}
	wg.Wait()
	res.Costs.Searches += len(queries)
	res.Costs.SearchUS += time.Since(t).Microseconds()
	// The main question's search must work; a failed sub-search only
	// narrows the research.
	if errs[0] != nil {
		return nil, fmt.Errorf("searching: %w", errs[0])
	}
	foundBy := map[string]int{}
	firstRank := map[string]int{}
	byURL := map[string]websearch.Hit{}
	for qi, hits := range results {
		if errs[qi] != nil {
			r.cfg.Logger.Warn("a deep-research sub-search failed", "err", errs[qi])
			continue
		}
		for rank, h := range allowedHits(hits, req.Filters) {
			foundBy[h.URL]++
			if old, ok := firstRank[h.URL]; !ok || rank < old {
				firstRank[h.URL] = rank
			}
			if _, ok := byURL[h.URL]; !ok {
				byURL[h.URL] = h
			}
		}
	}
	urls := make([]string, 0, len(byURL))
	for u := range byURL {
		urls = append(urls, u)
	}
	sort.Slice(urls, func(i, j int) bool {
		a, b := urls[i], urls[j]
		if foundBy[a] != foundBy[b] {
			return foundBy[a] > foundBy[b]
		}
		if firstRank[a] != firstRank[b] {
			return firstRank[a] < firstRank[b]
		}
		return a < b
	})
	if len(urls) > n {
		urls = urls[:n]
	}
	hits := make([]websearch.Hit, len(urls))
	for i, u := range urls {
		hits[i] = byURL[u]
	}
	return keepDated(r.read(ctx, hits, foundBy, &res.Costs), req.Filters), nil
}

var jsonArray = regexp.MustCompile(`(?s)\[.*\]`)

// plan returns up to DeepMaxSearches-1 sub-questions: the model's, or,
// with no model, ones derived from the question's parts.
func (r *Researcher) plan(ctx context.Context, req answer.Request, res *Result) []string {
	want := r.cfg.DeepMaxSearches - 1
	if want <= 0 {
		return nil
	}
	var subs []string
	if r.cfg.Model != nil {
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		out, err := r.cfg.Model.Complete(pctx, llm.Request{Model: r.cfg.ModelName, Temperature: 0.2, MaxTokens: 300, Messages: []llm.Message{
			{Role: "system", Content: fmt.Sprintf(planPrompt, want)},
			{Role: "user", Content: req.Query},
		}})
		cancel()
		res.Costs.LLMCalls++
		if err == nil {
			res.Costs.PromptTokens += out.PromptTokens
			res.Costs.CompletionTokens += out.CompletionTokens
			res.Costs.CostMicroUSD += out.CostMicroUSD
			var list []string
			if m := jsonArray.FindString(out.Content); m != "" && json.Unmarshal([]byte(m), &list) == nil {
				subs = list
			}
		} else {
			r.cfg.Logger.Warn("language model unavailable for planning; deriving sub-questions", "err", err)
		}
	}
	if len(subs) == 0 {
		subs = derive(req.Query)
	}
	return distinct(req.Query, subs, want)
}

var splitter = regexp.MustCompile(`(?i)\s*(?:,|;|\band\b|\bor\b|\bvs\.?|\bversus\b|\bcompared (?:to|with)\b)\s*`)

// derive makes sub-questions without a model: the question's parts (split
// at and, or, versus, commas) and its key terms alone.
func derive(q string) []string {
	q = strings.TrimRight(strings.TrimSpace(q), "?.! ")
	var out []string
	if parts := splitter.Split(q, -1); len(parts) > 1 {
		for _, p := range parts {
			if len(words(p)) > 0 {
				out = append(out, p)
			}
		}
	}
	if ts := words(q); len(ts) > 1 {
		out = append(out, strings.Join(ts, " "))
		if len(ts) > 3 {
			out = append(out, strings.Join(ts[:len(ts)/2+1], " "), strings.Join(ts[len(ts)/2:], " "))
		}
	}
	return out
}

// distinct drops empty, over-long and repeated queries (and the question
// itself) and keeps at most n.
func distinct(q string, subs []string, n int) []string {
	seen := map[string]bool{answer.Normalize(q): true}
	var out []string
	for _, s := range subs {
		s = strings.TrimSpace(s)
		k := answer.Normalize(s)
		if k == "" || len(s) > answer.MaxQuestionChars || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
		if len(out) == n {
			break
		}
	}
	return out
}
