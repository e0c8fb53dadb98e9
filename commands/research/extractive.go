package research

// The extractive writer answers without a language model: it picks the
// sentences of the selected passages that answer the question, not those
// that merely share its words. It is a pipeline of five stages, each a
// function with its inputs and outputs:
//
//  1. question analysis (analyseQuestion): the kind of answer wanted, the
//     key terms, the names asked about and, for a comparison, its sides;
//  2. candidate sentences (candidateSentences): the passages' prose cut
//     into sentences; a sentence that opens with a pronoun ("This", "It",
//     "These") brings the sentence before it, so "this" has its referent;
//     the first sentence of a term's description carries the term;
//  3. features (termWeights, scoreCandidates): each sentence scores by
//     the rules of the features table, each with its weight: the
//     weighted share of the question's key terms it holds (a term it
//     lacks counts at half weight when its neighbour in the same passage
//     holds it, a setting's description followed by "The default is
//     4.", and at contextWeight when its heading does), raised by how
//     close together they stand; a cue of the answer's type (a number or
//     a unit for "what is the default / how many", a definition for
//     "what is", an instruction for "how do I", a contrast for "what is
//     the difference", an exception for "which error"); its passage's
//     rank; its length; a compared side as its subject; the entry of an
//     API the question names; a version note. Code, markup and
//     navigation score below every threshold: they never become prose;
//  4. selection (selectSentences): when the best sentence holds too
//     little of the question, nothing (the answer says the sources do not
//     answer it and cites nothing); else up to 5 sentences by maximal
//     marginal relevance (no two saying the same);
//  5. tidying (tidyAnswer): the chosen sentences as prose, none twice,
//     each cited to its source, the one that answers most directly
//     first (leadFirst: by the lead features, whose weights are fitted
//     on the evaluation's tune and training questions).

// Chosen is one sentence of an extractive answer.
type Chosen struct {
	Passage  string
	Sentence int
	Source   int
}

// extractive writes the answer to question from the sources' passages; ""
// when they do not answer it.
//
// Key terms weigh by their rarity in idx, the passages ranked (a word
// every page uses, like "python" in Python's manual, hardly counts).
//
// A non-nil log receives the candidates' feature values.
func extractive(question string, srcs []numbered, idx *Index, log *featureLog) (string, []Chosen) {
	q := analyseQuestion(question)
	if len(q.key) == 0 {
		return "", nil
	}
	cands := candidateSentences(srcs, q)
	if len(cands) == 0 {
		return "", nil
	}
	weight := termWeights(q.key, cands, idx)
	q.subject = q.subject.distinct(weight, cands)
	q.subject.markAbout(cands)
	q.subject = q.subject.withRefs(cands)
	q.relation, q.weight = relationTerms(q), weight
	scoreCandidates(cands, q, weight)
	l := newLeader(q, weight)
	log.write(question, cands, l)
	chosen := leadFirst(cands, selectSentences(cands, q), l.score)
	if len(chosen) == 0 {
		return "", nil
	}
	return tidyAnswer(cands, chosen)
}
