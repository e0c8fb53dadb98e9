// Package answercache is the answer service's cache of synthesized
// answers, a read model of AnswerSynthesized events, and its Lookup query.
package answercache
