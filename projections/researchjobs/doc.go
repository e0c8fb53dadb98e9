// Package researchjobs builds rm_research_jobs from the research jobs'
// events (answer.ResearchJob*): every job with its status and, once done,
// its answer (jobs); the progress a job's events stream shows
// (job_events, keyed by the event's log position, the SSE id); and the
// outbox of the jobs' result webhooks (deliveries), which the monitors'
// dispatcher (commands/deliver) sends and whose attempts
// (records.WebhookDeliveryAttempted with a research_job_id) mark them
// done. A rebuild makes the deliveries again as pending; the dispatcher
// reads each delivery's own stream before sending, so none is sent twice.
package researchjobs
