package httpx

import (
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
)

// CheckQuery is the rule every JSON route's query string follows: it
// parses (a malformed escape or a semicolon is refused, not dropped), each
// parameter is one of names, and none is given twice. A misspelt
// parameter would otherwise be ignored and a repeated one read as its
// first value, so the caller would get an answer to a question it did not
// ask. Every failure is a 400 invalid_query_parameter whose field is the
// parameter at fault (the first in sorted order when there are several).
// Pure; safe for concurrent use.
func CheckQuery(rawQuery string, names ...string) error {
	return CheckQueryLists(rawQuery, nil, names...)
}

// CheckQueryLists is CheckQuery for a route some of whose parameters are
// lists, each of which (in lists, and among names too) may be given more
// than once (include_domains=a.com&include_domains=b.com); every other
// parameter is given once. Pure; safe for concurrent use.
func CheckQueryLists(rawQuery string, lists []string, names ...string) error {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return domain.Invalid("invalid_query_parameter", "", "the query string cannot be read (%v): separate parameters with & and percent-encode reserved characters", err)
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch {
		case !slices.Contains(names, k):
			takes := "no query parameters"
			if len(names) > 0 {
				takes = "only " + strings.Join(names, ", ")
			}
			return domain.Invalid("invalid_query_parameter", k, "unknown query parameter %q: this route takes %s; see /openapi.json", k, takes)
		case len(q[k]) > 1 && !slices.Contains(lists, k):
			return domain.Invalid("invalid_query_parameter", k, "query parameter %q is given %d times; give it once", k, len(q[k]))
		}
	}
	return nil
}

// Query returns the middleware that applies CheckQuery to a route's
// request, answering a failure with fail (the service's responder).
func Query(fail func(*gin.Context, error), names ...string) gin.HandlerFunc {
	return Handle(fail, func(c *gin.Context) error {
		return CheckQuery(c.Request.URL.RawQuery, names...)
	})
}
