// Package webpage fetches web pages for the answer service and extracts
// their text in sections under their headings, built for documentation
// and reference pages as much as for articles: every section, definition
// and table row of the main content is kept.
//
// Extract reads HTML with golang.org/x/net/html. It picks the main
// content (<main>, [role=main], the <article>, Sphinx's div.body or
// div.document, else the body) and drops what is not text of the page:
// nav, page-level header, footer and aside, script, style, form, svg,
// hidden elements, ARIA navigation/banner/contentinfo/search landmarks,
// and classes and ids of boilerplate (Sphinx's sidebar and related bar,
// DocBook's navigation tables, breadcrumbs, tables of contents, "¶"
// permalinks, skip links, cookie banners). Headings h1–h6 build each
// section's heading path; paragraphs are Prose, dt Term, li Item, table
// rows Row ("Header: cell; ..." under a head row), pre Code kept verbatim.
// Inline elements join with the page's own spacing, so words are
// neither glued nor split. Markdown is read by its headings, fences,
// lists and tables; plain text by paragraphs. All text passes
// text.Clean, so no control character comes out. How much of a real
// manual it keeps is measured by scripts/eval/extract.
//
// Fetching is bounded: a timeout per page, a size limit (bytes past it are
// not read), at most 5 redirects, http and https only. Fetch takes only
// HTML, XHTML and plain-text responses with status 200; Get, for callers
// that judge the response themselves (a crawler reading robots.txt and
// sitemaps), returns any status and content type and reads the body only
// of the types its caller asks for.
//
// SSRF stance: unless AllowPrivate is set, the dialer checks every address
// it connects to with a netguard.Guard, after DNS resolution and after
// every redirect, and refuses every address that is not public: every
// block of the IANA IPv4 and IPv6 special-purpose registries (loopback,
// RFC 1918 private use, shared address space 100.64.0.0/10, link-local
// and so cloud metadata endpoints, 192.0.0.0/24, benchmarking 198.18.0.0/15,
// documentation, reserved 240.0.0.0/4, broadcast, unique-local, Teredo,
// ...), multicast, IPv6 outside global unicast, IPv4-mapped, NAT64 and 6to4
// forms of refused IPv4 addresses, and this machine's own interface
// addresses. So a public name that resolves to 127.0.0.1 is refused too.
// The error names the reason and matches ErrRefused. No proxy is used.
// arr's own tests and a local search engine on loopback need
// ARR_ANSWER_FETCH_PRIVATE=allow, which turns the guard off.
//
// A Fetcher is safe for concurrent use.
package webpage
