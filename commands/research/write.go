package research

import (
	"context"
	"fmt"
	"math"
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

// numbered is one numbered source: a page and its best passages.
type numbered struct {
	title, url, docID string
	// published is the page's date, "YYYY-MM-DD", or "".
	published string
	passages  []Scored
}

// selectSources groups the best passages by page, at most
// maxPassagesPerDoc per page and limit pages, numbering the pages in order
// of their best passage.
func selectSources(ranked []Scored, limit int) []numbered {
	var out []numbered
	index := map[string]int{}
	used := 0
	for _, p := range ranked {
		if used == maxPassages || p.Score <= 0 {
			break
		}
		key := p.URL + "\x00" + p.DocID
		i, ok := index[key]
		if !ok {
			if len(out) == limit {
				continue
			}
			i = len(out)
			index[key] = i
			out = append(out, numbered{title: p.Title, url: p.URL, docID: p.DocID, published: p.Published})
		}
		if len(out[i].passages) == maxPassagesPerDoc+2*boolInt(i == 0) {
			// The best page, which often holds the whole answer, gives
			// two passages more.
			continue
		}
		out[i].passages = append(out[i].passages, p)
		used++
	}
	return out
}

func (n numbered) content() string {
	texts := make([]string, len(n.passages))
	for i, p := range n.passages {
		texts[i] = p.Text
	}
	s := strings.Join(texts, "\n\n")
	if len(s) > maxSourceChars {
		s = s[:maxSourceChars]
		if i := strings.LastIndexByte(s, ' '); i > maxSourceChars/2 {
			s = s[:i]
		}
		s += " …"
	}
	return s
}

// ranking is what an answer is written from: the passages ranked for
// query, the index they came from, and the sources chosen.
type ranking struct {
	query  string
	ranked []Scored
	idx    *Index
	srcs   []numbered
}

// rank ranks the documents' passages (or takes those the local index
// ranked) and chooses the sources.
func (r *Researcher) rank(req answer.Request, docs []document, res *Result) ranking {
	t := time.Now()
	query := req.Query
	if len(res.SubQuestions) > 0 {
		query += " " + strings.Join(res.SubQuestions, " ")
	}
	ranked, idx := res.ranked, res.index
	if ranked == nil {
		ranked, idx = rankPassages(query, docs)
	}
	ranked = preferAnswerType(req.Query, ranked)
	srcs := selectSources(ranked, r.sources(req))
	res.Costs.RankUS = time.Since(t).Microseconds()
	return ranking{query: query, ranked: ranked, idx: idx, srcs: srcs}
}

// record fills res.Retrieval from the ranking.
func (rk ranking) record(r *Researcher, res *Result) {
	record(res, rk.query, res.generation, rk.ranked, func(p Scored) string { return r.sourceURL(numbered{url: p.URL, docID: p.DocID}) })
}

// numberedSources are the sources as the model sees and the answer cites
// them.
func (r *Researcher) numberedSources(srcs []numbered) []answer.Source {
	all := make([]answer.Source, len(srcs))
	for i, s := range srcs {
		all[i] = answer.Source{Title: s.title, URL: r.sourceURL(s), Content: s.content(), PublishedDate: answer.PublishedDate(s.published)}
	}
	return all
}

// write ranks the documents' passages, writes the answer and checks its
// citations.
func (r *Researcher) write(ctx context.Context, req answer.Request, docs []document, res *Result) {
	rk := r.rank(req, docs, res)
	defer rk.record(r, res)
	srcs, idx := rk.srcs, rk.idx
	if len(srcs) == 0 {
		res.Synthesis = answer.NoSources
		res.Answer = "No sources matched this question, so there is no answer to cite. Try other words" +
			map[bool]string{true: ", or add documents to the local index with `arr answer index add URL|FILE|DIR`.", false: "."}[r.Backend() == "local"]
		progressOf(ctx).sources([]answer.Source{})
		progressOf(ctx).delta(res.Answer)
		return
	}
	all := r.numberedSources(srcs)
	snipped := false // the extractive path sets them before streaming its sources
	defer func() {
		if !snipped {
			snippets(res, srcs, all)
		}
	}()
	prog := progressOf(ctx)
	if r.cfg.Model != nil {
		prog.sources(all)
	}
	t := time.Now()
	rel := newRelease(prog, all)
	text, ok := r.synthesize(ctx, req, all, res, rel.add)
	res.Costs.SynthesisUS = time.Since(t).Microseconds()
	if c, cited := rel.answer(text, ok); cited {
		// The text relayed is this answer (of a model that broke off, what
		// it wrote up to the last sentence relayed).
		res.Answer, res.Synthesis, res.Found = c.Answer, answer.LLM, true
		res.Sources = pick(all, c.Order)
		return
	}
	if ok {
		r.cfg.Logger.Warn("the model cited no source; answering extractively")
	}
	text, chosen := extractive(req.Query, srcs, idx, r.features)
	if text == "" {
		abstain(res, all)
		snippets(res, srcs, all)
		snipped = true
		prog.sources(res.Sources)
		prog.delta(res.Answer)
		return
	}
	c := answer.CheckCitations(text, len(all))
	res.Answer, res.Synthesis, res.Model, res.Found = c.Answer, answer.Extractive, "", true
	res.Sources = pick(all, c.Order)
	res.chosen = chosen
	snippets(res, srcs, all) // the streamed sources are the answer's, snippets included
	snipped = true
	prog.sources(res.Sources)
	for _, d := range answer.Deltas(res.Answer) {
		prog.delta(d)
	}
}

// abstainedAnswer is the extractive writer's answer when no passage
// answers the question.
const abstainedAnswer = "The indexed sources do not answer this question; the closest sources are listed."

// maxClosest is how many sources an abstention lists.
const maxClosest = 3

// abstain makes res the answer that says, in one sentence, that the
// sources do not answer the question, and lists the closest of them
// (the best ranked, cited by no marker): not found.
func abstain(res *Result, all []answer.Source) {
	res.Synthesis, res.Model, res.Found = answer.Extractive, "", false
	res.Answer = abstainedAnswer
	res.Sources = append([]answer.Source(nil), all[:min(maxClosest, len(all))]...)
}

// snippets sets each cited source's Snippet: the passage text the
// answer's sentences citing it used (answer.Snippet over all its
// passages, not only the Content shown).
func snippets(res *Result, srcs []numbered, all []answer.Source) {
	if len(res.Sources) == 0 {
		return
	}
	full := map[string]string{}
	for i, s := range srcs {
		texts := make([]string, len(s.passages))
		for j, p := range s.passages {
			texts[j] = p.Text
		}
		full[all[i].URL] = strings.Join(texts, "\n\n")
	}
	used := answer.CitedText(res.Answer, len(res.Sources))
	for i := range res.Sources {
		res.Sources[i].Snippet = answer.Snippet(full[res.Sources[i].URL], used[i])
	}
}

// sourceURL is where a source is cited: its URL, or for a local file the
// answer service's own /docs/{doc_id}.
func (r *Researcher) sourceURL(n numbered) string {
	if n.url != "" {
		return n.url
	}
	return strings.TrimRight(r.cfg.DocsBaseURL, "/") + answer.DocsPath(n.docID)
}

// maxRecorded bounds the passages an AnswerSynthesized records.
const maxRecorded = 20

// record fills res.Retrieval.
func record(res *Result, query string, generation uint64, ranked []Scored, sourceURL func(Scored) string) {
	rt := answer.Retrieval{Query: query, Generation: generation}
	for _, p := range ranked[:min(len(ranked), maxRecorded)] {
		rt.Passages = append(rt.Passages, answer.RetrievedPassage{ID: p.ID, URL: sourceURL(p), Score: math.Round(p.Score*1e4) / 1e4})
	}
	for _, c := range res.chosen {
		rt.Chosen = append(rt.Chosen, answer.ChosenSentence{Passage: c.Passage, Sentence: c.Sentence, Source: c.Source})
	}
	res.Retrieval = rt
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

// synthesize asks the model for an answer; false when none answered (or
// it broke off). A streamed answer's tokens go to relay as they come.
func (r *Researcher) synthesize(ctx context.Context, req answer.Request, srcs []answer.Source, res *Result, relay func(string)) (string, bool) {
	if r.cfg.Model == nil {
		return "", false
	}
	length, maxTokens := "one to two short paragraphs", 500
	if req.Tier == answer.Pro || req.Mode == answer.Deep {
		length, maxTokens = "up to four short paragraphs", 1000
	}
	lr := llm.Request{Model: r.cfg.ModelName, MaxTokens: maxTokens, Temperature: 0.2, Messages: []llm.Message{
		{Role: "system", Content: fmt.Sprintf(systemPrompt, length)},
		{Role: "user", Content: sourcesPrompt(req.Query, srcs)},
	}}
	if req.Tier == answer.Pro && r.cfg.ModelName == "auto" {
		lr.QualityFloor = r.cfg.ProQualityFloor
	}
	var out llm.Response
	var err error
	if sm, ok := r.cfg.Model.(StreamingModel); ok && progressOf(ctx).Delta != nil {
		sctx, stop := progressOf(ctx).modelContext(ctx)
		out, err = sm.Stream(sctx, lr, relay)
		stop()
	} else {
		out, err = r.cfg.Model.Complete(ctx, lr)
	}
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

// sourcesPrompt is the question and the numbered sources, as the model
// reads them.
func sourcesPrompt(question string, srcs []answer.Source) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n\nSources:\n", question)
	if len(srcs) == 0 {
		b.WriteString("\n(none: no source matched the question)\n")
	}
	for i, s := range srcs {
		fmt.Fprintf(&b, "\n[%d] %s (%s)\n%s\n", i+1, s.Title, s.URL, s.Content)
	}
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
