package research

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/answer/terms"
)

// Weights are the parameters of passage retrieval: BM25F field weights
// (a term in a page title counts Title times a term in the body), the
// BM25 saturation K1 and length normalisation B, and the boosts for query
// terms that stand next to each other in the body in the query's order
// (Phrase, per adjacent pair) or close together (Proximity, for the
// tightest window holding two or more of them). Chosen by measurement on
// the answer evaluation (scripts/eval/answer).
type Weights struct {
	// Term weighs the passage's definition terms (API signatures, glossary
	// words: the lines a passage defines), counted on top of the body.
	Title, Heading, Body, Term float64
	K1, B                      float64
	Phrase, Proximity          float64
	// Section raises a passage by this much times the share (by IDF) of
	// the query's terms its own section heading holds (twice this much
	// when the heading is a question: an FAQ entry headed "How do I
	// delete a file?" for "how do I delete a file").
	Section float64
}

// DefaultWeights are the weights retrieval uses.
var DefaultWeights = Weights{Title: 1.5, Heading: 2, Body: 1, Term: 2, K1: 1.2, B: 0.75, Phrase: 0.6, Proximity: 0.4, Section: 0.5}

// Scored is a passage with its score.
type Scored struct {
	answer.IndexedPassage
	Score float64
}

// posting is one passage's occurrences of a term.
type posting struct {
	passage                   int32
	title, head, bodyTF, term uint16
	section                   bool    // in the passage's own section heading
	positions                 []int32 // in the body
}

// Index is an in-memory BM25F index over passages. Build it once; Search
// is safe for concurrent use.
type Index struct {
	w                       Weights
	passages                []answer.IndexedPassage
	postings                map[string][]posting
	lenTitle, lenHead       []int32
	lenBody                 []int32
	faq                     []bool // the passage's section heading is a question
	avgTitle, avgHead, avgB float64
	// n and df, when df is set, are the passage count and document
	// frequencies of the corpus the passages were picked from (an index
	// of candidates scores as the whole index would).
	n  float64
	df map[string]int64
	// Generation is the local index generation the passages are of (0 for
	// an ad hoc collection of fetched pages).
	Generation uint64
}

// BuildIndex indexes passages.
func BuildIndex(ps []answer.IndexedPassage, generation uint64, w Weights) *Index {
	as := make([]terms.Analysis, len(ps))
	for i, p := range ps {
		as[i] = terms.Analyze(p)
	}
	return buildIndex(ps, as, generation, w)
}

// buildIndex indexes passages ps whose terms are as.
func buildIndex(ps []answer.IndexedPassage, as []terms.Analysis, generation uint64, w Weights) *Index {
	x := &Index{w: w, passages: ps, postings: map[string][]posting{}, Generation: generation,
		lenTitle: make([]int32, len(ps)), lenHead: make([]int32, len(ps)), lenBody: make([]int32, len(ps)), faq: make([]bool, len(ps))}
	var sumT, sumH, sumB float64
	type acc struct {
		title, head, term uint16
		section           bool
		pos               []int32
	}
	for i := range ps {
		a := as[i]
		m := map[string]*acc{}
		get := func(t string) *acc {
			c := m[t]
			if c == nil {
				c = &acc{}
				m[t] = c
			}
			return c
		}
		for _, t := range a.Title {
			get(t).title++
		}
		for _, t := range a.Head {
			get(t).head++
		}
		for _, t := range a.Section {
			get(t).section = true
		}
		x.faq[i] = a.FAQ
		for j, t := range a.Body {
			c := get(t)
			c.pos = append(c.pos, int32(j))
		}
		for _, t := range a.Defs {
			get(t).term++
		}
		x.lenTitle[i], x.lenHead[i], x.lenBody[i] = int32(len(a.Title)), int32(len(a.Head)), int32(len(a.Body))
		sumT, sumH, sumB = sumT+float64(len(a.Title)), sumH+float64(len(a.Head)), sumB+float64(len(a.Body))
		for t, c := range m {
			x.postings[t] = append(x.postings[t], posting{passage: int32(i), title: c.title, head: c.head, term: c.term, section: c.section,
				bodyTF: uint16(min(len(c.pos), math.MaxUint16)), positions: c.pos})
		}
	}
	x.n = float64(len(ps))
	if x.n > 0 {
		x.avgTitle, x.avgHead, x.avgB = max(sumT/x.n, 1), max(sumH/x.n, 1), max(sumB/x.n, 1)
	}
	return x
}

// IndexCandidates indexes passages picked from a larger corpus (with
// their terms as stored) and scores them with that corpus's statistics
// (passage count, average field lengths, the document frequency of the
// query's terms): the scores are those an index of the whole corpus gives
// them.
func IndexCandidates(c terms.Candidates, w Weights) *Index {
	x := buildIndex(c.Passages, c.Analyses, c.Generation, w)
	st := c.Stats
	if st.Passages <= 0 {
		return x
	}
	x.n, x.df = float64(st.Passages), st.DF
	n := float64(st.Passages)
	x.avgTitle, x.avgHead, x.avgB = max(float64(st.SumTitle)/n, 1), max(float64(st.SumHead)/n, 1), max(float64(st.SumBody)/n, 1)
	return x
}

// docFreq is how many passages of the corpus hold term.
func (x *Index) docFreq(term string) float64 {
	if df, ok := x.df[term]; ok {
		return float64(df)
	}
	return float64(len(x.postings[term]))
}

// IDF is the inverse document frequency of a term over the passages (BM25's).
func (x *Index) IDF(term string) float64 {
	df := x.docFreq(term)
	return math.Log(1 + (x.n-df+0.5)/(df+0.5))
}

// Len is the number of passages indexed.
func (x *Index) Len() int { return len(x.passages) }

// Search returns the best n passages for query, best first (only those
// matching at least one query term).
func (x *Index) Search(query string, n int) []Scored {
	qt := uniqueTerms(Terms(query))
	if len(qt) == 0 || len(x.passages) == 0 {
		return nil
	}
	N := x.n
	scores := map[int32]float64{}
	section := map[int32]float64{}     // IDF of the query terms in the passage's section heading
	positions := map[int32][][]int32{} // per passage, per query term
	idfSum := 0.0
	for qi, t := range qt {
		ps := x.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := x.docFreq(t)
		idf := math.Log(1 + (N-df+0.5)/(df+0.5))
		idfSum += idf
		for _, p := range ps {
			if p.section {
				section[p.passage] += idf
			}
			i := p.passage
			tf := x.w.Title*float64(p.title)/(1-x.w.B+x.w.B*float64(x.lenTitle[i])/x.avgTitle) +
				x.w.Heading*float64(p.head)/(1-x.w.B+x.w.B*float64(x.lenHead[i])/x.avgHead) +
				x.w.Body*float64(p.bodyTF)/(1-x.w.B+x.w.B*float64(x.lenBody[i])/x.avgB) +
				x.w.Term*float64(p.term)
			scores[i] += idf * tf / (x.w.K1 + tf)
			if len(p.positions) > 0 {
				if positions[i] == nil {
					positions[i] = make([][]int32, len(qt))
				}
				positions[i][qi] = p.positions
			}
		}
	}
	out := make([]Scored, 0, len(scores))
	for i, s := range scores {
		if pos := positions[i]; pos != nil && len(qt) > 1 {
			s *= 1 + x.w.Phrase*adjacentPairs(pos)/float64(len(qt)-1) + x.w.Proximity*proximity(pos)
		}
		if h := section[i]; h > 0 && len(qt) > 1 {
			w := x.w.Section
			if x.faq[i] {
				w *= 2 // an FAQ entry: its heading is the question it answers
			}
			s *= 1 + w*h/idfSum
		}
		out = append(out, Scored{IndexedPassage: x.passages[i], Score: s})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].ID < out[b].ID
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// adjacentPairs counts the consecutive query terms that also stand next
// to each other, in order, somewhere in the body.
func adjacentPairs(pos [][]int32) float64 {
	n := 0.0
	for q := 0; q+1 < len(pos); q++ {
		a, b := pos[q], pos[q+1]
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		j := 0
		for _, p := range a {
			for j < len(b) && b[j] <= p {
				j++
			}
			if j < len(b) && b[j] == p+1 {
				n++
				break
			}
		}
	}
	return n
}

// proximity is 0 to 1: the share of query terms found together in the
// tightest window of the body, discounted by the window's width.
func proximity(pos [][]int32) float64 {
	type occ struct{ at, term int32 }
	var all []occ
	present := 0
	for q, ps := range pos {
		if len(ps) > 0 {
			present++
		}
		for _, p := range ps {
			all = append(all, occ{p, int32(q)})
		}
	}
	if present < 2 {
		return 0
	}
	sort.Slice(all, func(a, b int) bool { return all[a].at < all[b].at })
	// The smallest window holding every present term (two pointers).
	count := map[int32]int{}
	have, best := 0, int32(math.MaxInt32)
	for lo, hi := 0, 0; hi < len(all); hi++ {
		if count[all[hi].term]++; count[all[hi].term] == 1 {
			have++
		}
		for have == present {
			if w := all[hi].at - all[lo].at + 1; w < best {
				best = w
			}
			if count[all[lo].term]--; count[all[lo].term] == 0 {
				have--
			}
			lo++
		}
	}
	share := float64(present) / float64(len(pos))
	return share * float64(present) / float64(max(best, int32(present)))
}

// words are the lower-case words of s without stop words, unstemmed.
func words(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		if !terms.Stopword(f) {
			out = append(out, f)
		}
	}
	return out
}

// Terms splits text into index terms (terms.Split): the tokenizer the
// answer_docs read model counts terms with.
func Terms(s string) []string { return terms.Split(s) }

func uniqueTerms(ts []string) []string {
	seen := map[string]bool{}
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// dottedName is a dotted name: "gc.auto", "json.dumps" (terms.DottedName).
var dottedName = terms.DottedName
