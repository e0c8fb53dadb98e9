// Package webhook sends signed webhook deliveries: a JSON payload POSTed
// to a subscriber's URL, signed per the Standard Webhooks specification
// (webhook-id, webhook-timestamp and webhook-signature headers: HMAC-SHA256
// of "id.timestamp.payload" under the subscriber's whsec_ secret, by the
// specification's own Go library), through the SSRF guard, with a timeout
// and a bound on what is read of the answer; and the retry schedule of
// failed deliveries (exponential, the first retry within 10 seconds, none
// started 24 hours after the first attempt).
//
// A delivery succeeds on a 2xx answer. Redirects are not followed (a
// subscriber's URL is where it receives, not a hint), and the answer's
// body is read only so far (MaxResponseBytes) to keep a slow or huge
// answer from holding the sender.
package webhook
