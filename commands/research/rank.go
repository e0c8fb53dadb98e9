package research

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by for from has have how i in is it its of on or that the this to was were what when where which who why will with does do did can you your my we our they their them there these those than then so if not no yes into about over under after before between also more most other some such only own same too very just should would could may might must shall`) {
		stopwords[w] = true
	}
}

// terms splits text into lower-case terms without stop words, with a
// light plural folding.
func terms(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := f[:0]
	for _, w := range f {
		if stopwords[w] {
			continue
		}
		if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = strings.TrimSuffix(w, "s")
		}
		out = append(out, w)
	}
	return out
}

// bm25 scores each text against the query with Okapi BM25 (k1 1.2, b 0.75),
// the texts being the collection.
func bm25(query string, texts []string) []float64 {
	const k1, b = 1.2, 0.75
	q := terms(query)
	docs := make([]map[string]int, len(texts))
	lens := make([]int, len(texts))
	df := map[string]int{}
	total := 0
	for i, t := range texts {
		tf := map[string]int{}
		ts := terms(t)
		for _, w := range ts {
			tf[w]++
		}
		for w := range tf {
			df[w]++
		}
		docs[i], lens[i] = tf, len(ts)
		total += len(ts)
	}
	scores := make([]float64, len(texts))
	if len(texts) == 0 || total == 0 {
		return scores
	}
	avg := float64(total) / float64(len(texts))
	n := float64(len(texts))
	seen := map[string]bool{}
	for _, w := range q {
		if seen[w] {
			continue
		}
		seen[w] = true
		idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
		for i, tf := range docs {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			scores[i] += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(lens[i])/avg))
		}
	}
	return scores
}

// passage is a piece of one document.
type passage struct {
	doc   int
	text  string
	score float64
}

// splitPassages cuts text into passages of about target characters at
// paragraph, then sentence, boundaries.
func splitPassages(text string, target int) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for _, para := range strings.Split(text, "\n") {
		para = strings.Join(strings.Fields(para), " ")
		if para == "" {
			continue
		}
		pieces := []string{para}
		if len(para) > target*2 {
			pieces = sentences(para)
		}
		for _, p := range pieces {
			if cur.Len() > 0 && cur.Len()+len(p) > target {
				flush()
			}
			if cur.Len() > 0 {
				cur.WriteByte(' ')
			}
			cur.WriteString(p)
		}
	}
	flush()
	return out
}

// sentences splits text after ., ! and ? followed by white space and an
// upper-case letter or digit.
func sentences(text string) []string {
	var out []string
	rs := []rune(text)
	start := 0
	for i := 0; i < len(rs)-2; i++ {
		if (rs[i] == '.' || rs[i] == '!' || rs[i] == '?') && unicode.IsSpace(rs[i+1]) && (unicode.IsUpper(rs[i+2]) || unicode.IsDigit(rs[i+2])) {
			out = append(out, strings.TrimSpace(string(rs[start:i+1])))
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// rankPassages splits the documents, scores every passage against query
// and returns them best first; boost multiplies a document's passages.
func rankPassages(query string, docs []document) []passage {
	var ps []passage
	for i, d := range docs {
		for _, t := range splitPassages(d.text, 600) {
			ps = append(ps, passage{doc: i, text: t})
		}
	}
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = p.text
	}
	scores := bm25(query, texts)
	for i := range ps {
		ps[i].score = scores[i] * (1 + 0.5*float64(docs[ps[i].doc].foundBy-1))
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].score > ps[j].score })
	return ps
}
