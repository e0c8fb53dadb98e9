// Package terms splits the local index's text into index terms: the one
// tokenizer the answer_docs read model's search structures (term
// statistics, tsvectors) and passage scoring (research.Index) share, so a
// term counted by the projection is the term a query looks up.
package terms
