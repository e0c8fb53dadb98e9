package httpx

import (
	"context"
	"errors"
)

// StatusClientClosedRequest is the status a request whose client hung up
// before its answer is logged and measured with: nginx's 499 "client
// closed request". It is never sent (there is no one to send it to): it
// is what the access log and arr_http_requests_total say of the request,
// so that a hang-up is not taken for a server error. Like a 5xx, it
// stays counted against the quota (ratelimit.Served): the work the
// request asked for had started.
const StatusClientClosedRequest = 499

// ClientClosed reports whether the client of the request whose context
// is ctx hung up: net/http cancels a request's context when its
// connection closes (or its HTTP/2 stream is reset), and nothing else in
// the services cancels a request's own context; a deadline that runs out
// is not a hang-up. Safe for concurrent use.
func ClientClosed(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}
