// Package answer holds the rules of the answer service that need no I/O:
// what a valid question is and how it is normalized into a cache key, the
// tiers and modes and which plans may use them, how [n] citation markers are
// checked against the sources and which text of the answer each supports
// (CitationSpans, in code points), the snippet of a source the answer
// used (Snippet), a conversation's earlier turns and the extractive rule
// that makes a follow-up self-contained (CheckMessages, ResolveFollowUp),
// and the events AnswerSynthesized and AnswerServed.
//
// Values here are plain data, safe to share once built.
package answer
