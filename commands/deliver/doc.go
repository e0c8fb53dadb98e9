// Package deliver sends the list monitors' webhooks: the dispatcher reads
// the due deliveries from the outbox (the parcels read model, where a
// completed load's transaction adds them), signs each per the Standard
// Webhooks specification with its monitor's secret, POSTs it, and records
// every attempt as a records.WebhookDeliveryAttempted event.
//
// At least once, never again once done: a delivery's attempts are the
// events of its own stream, and attempt n is appended only at the
// stream's version n-1. Before each attempt the dispatcher reads that
// stream, not the read model: a delivery whose stream holds a delivered
// or failed attempt is never sent again, however far the read model lags
// and however often it is rebuilt. A process killed after a subscriber
// answered but before the attempt was appended sends it again, with the
// same webhook-id (the subscriber drops repeats by it); nothing else is
// sent twice.
//
// Retries follow webhook.NextAttempt (5 s, 30 s, 3 min, 18 min, 1 h 48
// min, then every 10 h; none after 24 h). A monitor whose attempts have
// failed without a success in between for Config.DisableAfter (3 days)
// is disabled (records.MonitorDisabled) and its account is mailed.
//
// One dispatcher runs at a time per database: cmd/arr runs it under a
// lease (projections.Exclusive), and another process's dispatcher takes
// over when the lease's holder dies or is cut off.
package deliver
