package answerdocs

// CandidateSQL is Candidates' statement, for the tests that EXPLAIN it.
const CandidateSQL = candidateSQL
