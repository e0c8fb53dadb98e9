// Package text holds the one rule for text that callers put into events:
// questions, names, notes, list cells and headers, e-mail addresses, URLs,
// chat metadata. Such text is valid UTF-8, holds no NUL and no other
// control character than tab and newline, and fits a length cap. Every
// entry point checks it once, with Check, before the text can become an
// event; a violation is a domain validation error (HTTP 400) whose stable
// code names the field ("name_control_character"). Text arr did not get
// from a caller but from the world (fetched pages, model output) is made
// to fit with Clean instead of being refused.
package text
