// Package research is the answer service's pipeline: search, read, rank,
// write. Quick mode searches the question once, fetches the top results
// concurrently, extracts their main text, splits it into passages, ranks the
// passages against the question (BM25) and has a language model write an
// answer that cites the passages' sources with [n]. Deep mode (Pro) first
// plans sub-questions, searches and reads for each, and writes one answer
// across all, preferring sources that several searches found.
//
// Every [n] of a written answer is checked against the sources; markers
// that refer to nothing are dropped and only cited sources are returned.
// When no language model answers, the answer is extractive: the
// best-ranked sentences, each with its marker. Each cited source carries
// the snippet of its passages the answer used.
//
// A follow-up is made self-contained before research (Resolve): the
// language model rewrites it against the conversation, or, without one,
// answer.ResolveFollowUp's rule applies; research runs for the result.
//
// Bounds (each a Config field with this default): quick mode reads at most
// 5 sources (pro tier 8) and gives up after 45 s; deep mode runs at most 4
// searches (the question and up to 3 sub-questions), reads at most 10
// sources (pro 14) and gives up on further searching after 60 s of its
// 120 s total.
//
// A Researcher is safe for concurrent use.
package research
