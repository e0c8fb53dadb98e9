// Package spend enforces the limits of gateway keys: a key's budget per
// period, its account's shared budget, requests and tokens per minute, the
// models it may use and its expiry.
//
// Guard.Admit is called before any upstream call, with the most the
// request can cost (its output cap, or the model's context bound, at the
// price of the dearest model it may fail over to) and the most tokens it
// can use. In one PostgreSQL transaction it locks the counters of every
// limit of the key in a fixed order, checks that each stays within its
// limit with what ended requests used plus what requests in flight have
// reserved plus this request's maximum, and reserves it in all of them, or
// in none. When the request ends, settle replaces the reservation by the
// real cost and tokens (zero for a failure that cost nothing). So a
// budget is never exceeded by an admitted request whose upstream reports
// usage within the bounds it was reserved for, whatever the number of
// concurrent requests and processes; LiteLLM, by contrast, checks spend
// before the call and adds it after, so every request in flight when the
// budget runs out goes through.
//
// Crossing 50, 80 and 100 percent of a budget appends a
// usage.BudgetThresholdCrossed once per budget, period and threshold (its
// stream takes one event) and mails the account.
//
// Counters live in the spend_counters table (migration 00042), not in
// Redis even when REDIS_URL is set: a budget's spend is money, which a
// cache may lose, and one transaction over the key's and the account's
// counters is what keeps them exact together. Everything here is safe for
// concurrent use.
package spend
