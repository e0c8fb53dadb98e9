package researchjobs

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections"
)

// Projection builds rm_research_jobs.
type Projection struct{}

// Name is the projection's name and checkpoint key.
const Name = "research_jobs"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE jobs (
    job_id        uuid        PRIMARY KEY,
    account_id    uuid        NOT NULL,
    key_id        uuid        NOT NULL,
    query         text        NOT NULL,
    tier          text        NOT NULL,
    mode          text        NOT NULL,
    webhook_url   text,
    status        text        NOT NULL,
    attempt       integer     NOT NULL DEFAULT 0,
    requested_at  timestamptz NOT NULL,
    started_at    timestamptz,
    finished_at   timestamptz,
    answer        jsonb,
    error_code    text,
    error_message text,
    position      bigint      NOT NULL
);
CREATE TABLE job_events (
    job_id   uuid   NOT NULL,
    position bigint NOT NULL,
    name     text   NOT NULL,
    data     jsonb  NOT NULL,
    PRIMARY KEY (job_id, position)
);
CREATE TABLE deliveries (
    delivery_id     uuid        PRIMARY KEY,
    job_id          uuid        NOT NULL,
    account_id      uuid        NOT NULL,
    payload         jsonb       NOT NULL,
    status          text        NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    position        bigint      NOT NULL
);
`

// deferredDDL indexes the worker's and the dispatcher's reads.
const deferredDDL = `
CREATE INDEX jobs_open ON jobs (requested_at) WHERE status IN ('queued', 'running');
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
`

// Spec implements projections.Projection.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, DeferredDDL: deferredDDL, Handlers: []projections.Handler{
		projections.On(requested), projections.On(started), projections.On(stepped), projections.On(completed),
		projections.On(failed), projections.On(canceled), projections.On(attempted),
	}}
}

// The names of a job's progress events (job_events.name, the SSE event).
const (
	EventQueued  = "queued"
	EventStarted = "started"
)

func addEvent(ctx context.Context, tx pgx.Tx, e projections.Event, job uuid.UUID, name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO job_events (job_id, position, name, data) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING`, job, int64(e.Position), name, b)
	return err
}

func requested(ctx context.Context, tx pgx.Tx, e projections.Event, v *answer.ResearchJobRequested) error {
	var hook *string
	if v.WebhookURL != "" {
		hook = &v.WebhookURL
	}
	if _, err := tx.Exec(ctx, `INSERT INTO jobs (job_id, account_id, key_id, query, tier, mode, webhook_url, status, requested_at, position)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8, $9) ON CONFLICT (job_id) DO NOTHING`,
		v.JobID, v.AccountID, v.KeyID, v.Query, string(v.Tier), string(v.Mode), hook, v.RequestedAt, int64(e.Position)); err != nil {
		return eventError(e, err)
	}
	return eventError(e, addEvent(ctx, tx, e, v.JobID, EventQueued, map[string]any{"status": answer.JobQueued, "at": v.RequestedAt}))
}

// open is the condition of a row still queued or running: a final
// state is never left (a worker's late event after a cancel is ignored).
const open = ` AND status IN ('queued', 'running')`

func started(ctx context.Context, tx pgx.Tx, e projections.Event, v *answer.ResearchJobStarted) error {
	tag, err := tx.Exec(ctx, `UPDATE jobs SET status = 'running', attempt = $2, started_at = $3, position = $4 WHERE job_id = $1`+open,
		v.JobID, v.Attempt, v.StartedAt, int64(e.Position))
	if err != nil || tag.RowsAffected() == 0 {
		return eventError(e, err)
	}
	return eventError(e, addEvent(ctx, tx, e, v.JobID, EventStarted, map[string]any{"status": answer.JobRunning, "attempt": v.Attempt, "at": v.StartedAt}))
}

func stepped(ctx context.Context, tx pgx.Tx, e projections.Event, v *answer.ResearchJobStepped) error {
	data := map[string]any{"attempt": v.Attempt, "at": v.SteppedAt}
	if v.Step == answer.StepSources {
		srcs := v.Sources
		if srcs == nil {
			srcs = []answer.StepSource{}
		}
		data["sources"] = srcs
	}
	return eventError(e, addEvent(ctx, tx, e, v.JobID, v.Step, data))
}

func completed(ctx context.Context, tx pgx.Tx, e projections.Event, v *answer.ResearchJobCompleted) error {
	b, err := json.Marshal(v.Answer)
	if err != nil {
		return eventError(e, err)
	}
	tag, err := tx.Exec(ctx, `UPDATE jobs SET status = 'succeeded', finished_at = $2, answer = $3, position = $4 WHERE job_id = $1`+open,
		v.JobID, v.CompletedAt, b, int64(e.Position))
	if err != nil || tag.RowsAffected() == 0 {
		return eventError(e, err)
	}
	return eventError(e, finished(ctx, tx, e, v.JobID, v.CompletedAt))
}

func failed(ctx context.Context, tx pgx.Tx, e projections.Event, v *answer.ResearchJobFailed) error {
	tag, err := tx.Exec(ctx, `UPDATE jobs SET status = 'failed', finished_at = $2, error_code = $3, error_message = $4, position = $5
		WHERE job_id = $1`+open, v.JobID, v.FailedAt, v.Code, v.Message, int64(e.Position))
	if err != nil || tag.RowsAffected() == 0 {
		return eventError(e, err)
	}
	return eventError(e, finished(ctx, tx, e, v.JobID, v.FailedAt))
}

func canceled(ctx context.Context, tx pgx.Tx, e projections.Event, v *answer.ResearchJobCanceled) error {
	tag, err := tx.Exec(ctx, `UPDATE jobs SET status = 'canceled', finished_at = $2, position = $3 WHERE job_id = $1`+open,
		v.JobID, v.CanceledAt, int64(e.Position))
	if err != nil || tag.RowsAffected() == 0 {
		return eventError(e, err)
	}
	return eventError(e, addEvent(ctx, tx, e, v.JobID, answer.JobCanceled, map[string]any{"status": answer.JobCanceled, "at": v.CanceledAt}))
}

// finished records the final progress event of a job that succeeded or
// failed and, when it has a webhook, its delivery: the job as GET shows
// it, in a Standard Webhooks envelope.
func finished(ctx context.Context, tx pgx.Tx, e projections.Event, id uuid.UUID, at time.Time) error {
	j, ok, err := get(ctx, tx, "jobs", `job_id = $1`, id)
	if err != nil || !ok {
		return err
	}
	if err := addEvent(ctx, tx, e, id, j.Status, map[string]any{"status": j.Status, "at": at}); err != nil {
		return err
	}
	if j.WebhookURL == nil {
		return nil
	}
	payload, err := json.Marshal(Payload{Type: "research_job." + j.Status, Timestamp: at.UTC(), Data: j})
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO deliveries (delivery_id, job_id, account_id, payload, status, next_attempt_at, position)
		VALUES ($1, $1, $2, $3, 'pending', $4, $5) ON CONFLICT (delivery_id) DO NOTHING`, id, j.accountID, payload, at, int64(e.Position))
	return err
}

// Payload is a job's webhook body: type research_job.succeeded or
// research_job.failed, and the job as GET /api/v1/research/{id} shows it.
type Payload struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      Job       `json:"data"`
}

// WebhookID is a delivery's webhook-id: msg_ and the job id's hex (the
// same on every attempt, and after a rebuild).
func WebhookID(id uuid.UUID) string { return "msg_" + hex.EncodeToString(id[:]) }

func attempted(ctx context.Context, tx pgx.Tx, e projections.Event, v *records.WebhookDeliveryAttempted) error {
	if v.ResearchJobID == nil {
		return nil // a monitor's (projections/parcels)
	}
	status := "pending"
	if v.Outcome != records.OutcomeRetrying {
		status = v.Outcome
	}
	_, err := tx.Exec(ctx, `UPDATE deliveries SET status = $2, attempts = greatest(attempts, $3::integer), last_attempt_at = $4,
		next_attempt_at = $5, position = $6 WHERE delivery_id = $1`, v.DeliveryID, status, v.Attempt, v.AttemptedAt, v.NextAttemptAt, int64(e.Position))
	return eventError(e, err)
}

// eventError names e's position in err, if there is one.
func eventError(e projections.Event, err error) error {
	if err != nil {
		return fmt.Errorf("event %d: %w", e.Position, err)
	}
	return nil
}
