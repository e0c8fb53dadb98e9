// Package crawl walks web sites for the answer service's local index: from
// seed URLs it follows links (a[href] of HTML pages) breadth-first to a
// depth, visits at most a limit of URLs in all, optionally stays on each
// seed's site (scheme, host and port), respects robots.txt for every URL it
// fetches, and reads sitemaps (<urlset>, following <sitemapindex>) given as
// seeds. It yields one Result per URL: a readable page (its final URL after
// redirects, content type and body), or why the URL was skipped or failed.
// It indexes nothing itself.
//
// URLs are compared in Canonical form: fragments dropped, relative links
// resolved, scheme and host lower case, default ports dropped; mailto:,
// javascript: and every other non-http(s) link is ignored. Every fetch,
// robots.txt included, goes through the Getter, which bounds it (the
// webpage.Fetcher: a timeout, a size limit, at most 5 redirects, the
// address guard).
//
// The crawl is sequential: one request at a time. A Crawler is safe for
// concurrent use; each Crawl has its own state (robots.txt cache, visited
// URLs).
package crawl
