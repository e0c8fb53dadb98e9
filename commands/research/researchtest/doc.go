// Package researchtest starts the loopback stand-ins the answer service's
// tests research against: a web site of real HTML articles (with
// navigation, sidebars and footers to strip), a search engine that speaks
// SearXNG's JSON API over those articles, and a language model that speaks
// the OpenAI chat-completion format. Each counts the requests it served.
// They are real HTTP servers; nothing in the pipeline is replaced.
package researchtest

// Cleaner registers clean-up work; *testing.T is one, and so is the
// benchmark's own.
type Cleaner interface{ Cleanup(func()) }
