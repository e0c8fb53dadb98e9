// Package webpage fetches web pages for the answer service and extracts
// their main text with a readability port
// (codeberg.org/readeck/go-readability/v2): navigation, headers, footers,
// sidebars and other boilerplate are dropped.
//
// Fetching is bounded: a timeout per page, a size limit (bytes past it are
// not read), at most 5 redirects, http and https only, and only HTML,
// XHTML and plain-text responses. SSRF stance: unless AllowPrivate is set,
// the dialer refuses loopback, private, link-local, unspecified and
// multicast addresses after DNS resolution (so a public name that resolves
// to 127.0.0.1 is refused too); arr's own tests and a local search engine
// on loopback need ARR_ANSWER_FETCH_PRIVATE=allow.
//
// A Fetcher is safe for concurrent use.
package webpage
