package answerdocs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/answer/terms"
)

// TestAtkAnswerDocsWideQueryUnbounded: a question within the 500
// characters answer.MaxQuestionChars allows can hold ~75 distinct words
// each held by fewer than MatchCap passages. candidateQuery makes every
// one of them a picking term (OR-ed: up to 75 × 5,000 matched passages)
// and scores every match with one ts_rank per term (75 calls a row)
// before the LIMIT: the work of one search grows with terms × matches.
// Measured by hand on arr_bench_rs_10k (186,595 passages): such a 499-char
// question of 75 words of df 2,000-5,000 ran out of the 5 s timeout twice
// (503, a PostgreSQL core busy for 5 s), where an ordinary question took
// 106-140 ms. The statement should be bounded whatever the question.
func TestAtkAnswerDocsWideQueryUnbounded(t *testing.T) {
	s := terms.Stats{Passages: 186595, DF: map[string]int64{}}
	var qt []string
	for i := range 75 {
		w := fmt.Sprintf("word%02d", i)
		qt = append(qt, w)
		s.DF[w] = 4000
	}
	sql, args := candidateQuery(qt, s, 300)
	arms := strings.Count(args[0].(string), "|") + 1
	ranks := strings.Count(sql, "ts_rank(")
	if arms > 8 || ranks > 8 {
		t.Fatalf("a 75-word question: the candidate statement ORs %d picking terms (up to %d matched passages) and scores each match with %d ts_rank calls", arms, arms*4000, ranks)
	}
}
