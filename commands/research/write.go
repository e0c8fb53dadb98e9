package research

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/domain/answer"
)

// Per-answer bounds of what goes to the model.
const (
	maxPassages       = 12
	maxPassagesPerDoc = 3
	maxSourceChars    = 1800
)

// numbered is one numbered source as the model sees it.
type numbered struct {
	doc      int
	passages []string
}

// select picks the best passages, at most maxPassagesPerDoc per document,
// and numbers their documents in order of their best passage.
func selectSources(ranked []passage, limit int) []numbered {
	var out []numbered
	index := map[int]int{}
	used := 0
	for _, p := range ranked {
		if used == maxPassages || p.score <= 0 {
			break
		}
		i, ok := index[p.doc]
		if !ok {
			if len(out) == limit {
				continue
			}
			i = len(out)
			index[p.doc] = i
			out = append(out, numbered{doc: p.doc})
		}
		if len(out[i].passages) == maxPassagesPerDoc {
			continue
		}
		out[i].passages = append(out[i].passages, p.text)
		used++
	}
	return out
}

func (n numbered) content() string {
	s := strings.Join(n.passages, "\n\n")
	if len(s) > maxSourceChars {
		s = s[:maxSourceChars]
		if i := strings.LastIndexByte(s, ' '); i > maxSourceChars/2 {
			s = s[:i]
		}
		s += " …"
	}
	return s
}

// write ranks the documents' passages, writes the answer and checks its
// citations.
func (r *Researcher) write(ctx context.Context, req answer.Request, docs []document, res *Result) {
	t := time.Now()
	query := req.Query
	if len(res.SubQuestions) > 0 {
		query += " " + strings.Join(res.SubQuestions, " ")
	}
	srcs := selectSources(rankPassages(query, docs), r.sources(req))
	res.Costs.RankUS = time.Since(t).Microseconds()
	if len(srcs) == 0 {
		res.Synthesis = answer.NoSources
		res.Answer = "No sources matched this question, so there is no answer to cite. Try other words" +
			map[bool]string{true: ", or add documents to the local index with `arr answer index add URL|FILE|DIR`.", false: "."}[r.Backend() == "local"]
		return
	}
	all := make([]answer.Source, len(srcs))
	for i, s := range srcs {
		d := docs[s.doc]
		all[i] = answer.Source{Title: d.title, URL: d.url, Content: s.content()}
	}
	t = time.Now()
	text, ok := r.synthesize(ctx, req, all, res)
	res.Costs.SynthesisUS = time.Since(t).Microseconds()
	if ok {
		c := answer.CheckCitations(text, len(all))
		if len(c.Order) > 0 {
			res.Answer, res.Synthesis = c.Answer, answer.LLM
			res.Sources = pick(all, c.Order)
			return
		}
		r.cfg.Logger.Warn("the model cited no source; answering extractively")
	}
	c := answer.CheckCitations(extractive(query, srcs, all), len(all))
	res.Answer, res.Synthesis, res.Model = c.Answer, answer.Extractive, ""
	res.Sources = pick(all, c.Order)
}

func pick(all []answer.Source, order []int) []answer.Source {
	out := make([]answer.Source, len(order))
	for i, o := range order {
		out[i] = all[o]
	}
	return out
}

const systemPrompt = `You answer questions using only the numbered sources given. Rules:
- Cite every factual statement with the number of its source in square brackets, like [1] or [2][3].
- Use only numbers of the sources listed; never invent a source or a number.
- If the sources do not answer the question, say so briefly.
- Be concise: %s. Plain text, no headings.`

// synthesize asks the model for an answer; false when none answered.
func (r *Researcher) synthesize(ctx context.Context, req answer.Request, srcs []answer.Source, res *Result) (string, bool) {
	if r.cfg.Model == nil {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n\nSources:\n", req.Query)
	for i, s := range srcs {
		fmt.Fprintf(&b, "\n[%d] %s (%s)\n%s\n", i+1, s.Title, s.URL, s.Content)
	}
	length, maxTokens := "one to two short paragraphs", 500
	if req.Tier == answer.Pro || req.Mode == answer.Deep {
		length, maxTokens = "up to four short paragraphs", 1000
	}
	lr := llm.Request{Model: r.cfg.ModelName, MaxTokens: maxTokens, Temperature: 0.2, Messages: []llm.Message{
		{Role: "system", Content: fmt.Sprintf(systemPrompt, length)},
		{Role: "user", Content: b.String()},
	}}
	if req.Tier == answer.Pro && r.cfg.ModelName == "auto" {
		lr.QualityFloor = r.cfg.ProQualityFloor
	}
	out, err := r.cfg.Model.Complete(ctx, lr)
	res.Costs.LLMCalls++
	if err != nil {
		r.cfg.Logger.Warn("language model unavailable; answering extractively", "err", err)
		return "", false
	}
	res.Costs.PromptTokens += out.PromptTokens
	res.Costs.CompletionTokens += out.CompletionTokens
	res.Costs.CostMicroUSD += out.CostMicroUSD
	res.Model = out.Model
	return out.Content, true
}

// extractive writes an answer from the best sentences of the selected
// passages, each followed by its source's marker.
func extractive(query string, srcs []numbered, all []answer.Source) string {
	type cand struct {
		text string
		src  int
	}
	var cs []cand
	for i, s := range srcs {
		for _, p := range s.passages {
			for _, sen := range sentences(p) {
				if l := len(sen); l >= 30 && l <= 400 {
					cs = append(cs, cand{sen, i})
				}
			}
		}
	}
	if len(cs) == 0 {
		for i := range all {
			cs = append(cs, cand{firstChars(all[i].Content, 300), i})
		}
	}
	texts := make([]string, len(cs))
	for i, c := range cs {
		texts[i] = c.text
	}
	scores := bm25(query, texts)
	best := make([]int, 0, 4)
	perSrc := map[int]int{}
	seen := map[string]bool{}
	for len(best) < 4 {
		top := -1
		for i := range cs {
			if seen[cs[i].text] || perSrc[cs[i].src] >= 2 {
				continue
			}
			if top < 0 || scores[i] > scores[top] {
				top = i
			}
		}
		if top < 0 || (len(best) > 0 && scores[top] <= 0) {
			break
		}
		seen[cs[top].text] = true
		perSrc[cs[top].src]++
		best = append(best, top)
	}
	var b strings.Builder
	for _, i := range best {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		s := strings.TrimSpace(cs[i].text)
		end := ""
		if n := len(s); n > 0 && strings.ContainsRune(".!?", rune(s[n-1])) {
			s, end = s[:n-1], s[n-1:]
		} else {
			end = "."
		}
		fmt.Fprintf(&b, "%s [%d]%s", s, cs[i].src+1, end)
	}
	return b.String()
}

func firstChars(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, ' '); i > n/2 {
		s = s[:i]
	}
	return s + " …"
}
