package parcels

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// WebhookID is a delivery's webhook-id: msg_ and the hex of its id, the
// same on every attempt.
func WebhookID(id uuid.UUID) string { return "msg_" + hex.EncodeToString(id[:]) }

// Delivery is one webhook delivery of a monitor, with its attempts.
type Delivery struct {
	ID            uuid.UUID       `json:"id"`
	WebhookID     string          `json:"webhook_id"`
	MonitorID     uuid.UUID       `json:"monitor_id"`
	Type          string          `json:"type"`
	Status        string          `json:"status"`
	CreatedAt     time.Time       `json:"created_at"`
	AttemptCount  int             `json:"attempt_count"`
	NextAttemptAt *time.Time      `json:"next_attempt_at"`
	Payload       json.RawMessage `json:"payload"`
	Attempts      []Attempt       `json:"attempts"`
}

// Attempt is one attempt of a delivery.
type Attempt struct {
	Attempt     int       `json:"attempt"`
	AttemptedAt time.Time `json:"attempted_at"`
	// Status is the subscriber's HTTP status; 0 when none came.
	Status     int    `json:"status"`
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
	Outcome    string `json:"outcome"`
}

// Deliveries returns a page of a monitor's deliveries, newest first, with
// their attempts (status "" is every status), and how many there are. The
// caller checks that the monitor is the account's.
func (q *Queries) Deliveries(ctx context.Context, monitor uuid.UUID, status string, limit, offset int) ([]Delivery, int, error) {
	const where = `FROM rm_parcels.deliveries WHERE monitor_id = $1 AND ($2 = '' OR status = $2)`
	var total int
	if err := q.pool.QueryRow(ctx, `SELECT count(*) `+where, monitor, status).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting deliveries: %w", err)
	}
	rows, err := q.pool.Query(ctx, `SELECT d.delivery_id, d.monitor_id, d.type, d.status, d.created_at, d.attempts, d.next_attempt_at, d.payload::text,
		coalesce((SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'attempted_at', a.attempted_at, 'status', a.status, 'error', a.error,
			'duration_ms', a.duration_ms, 'outcome', a.outcome) ORDER BY a.attempt) FROM rm_parcels.delivery_attempts a WHERE a.delivery_id = d.delivery_id), '[]')::text
		FROM (SELECT * `+where+` ORDER BY created_at DESC, delivery_id LIMIT $3 OFFSET $4) d ORDER BY d.created_at DESC, d.delivery_id`,
		monitor, status, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("listing deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Delivery, error) {
		var d Delivery
		var payload, attempts string
		if err := r.Scan(&d.ID, &d.MonitorID, &d.Type, &d.Status, &d.CreatedAt, &d.AttemptCount, &d.NextAttemptAt, &payload, &attempts); err != nil {
			return d, err
		}
		d.WebhookID, d.Payload, d.CreatedAt = WebhookID(d.ID), json.RawMessage(payload), d.CreatedAt.UTC()
		if err := json.Unmarshal([]byte(attempts), &d.Attempts); err != nil {
			return d, fmt.Errorf("delivery %s's attempts: %w", d.ID, err)
		}
		return d, nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("listing deliveries: %w", err)
	}
	if out == nil {
		out = []Delivery{}
	}
	return out, total, nil
}

// Due is a delivery whose next attempt is due.
type Due struct {
	ID        uuid.UUID
	MonitorID uuid.UUID
	AccountID uuid.UUID
	Payload   []byte
}

// DueDeliveries returns at most limit pending deliveries due at now,
// the longest due first.
func (q *Queries) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]Due, error) {
	rows, err := q.pool.Query(ctx, `SELECT delivery_id, monitor_id, account_id, payload::text FROM rm_parcels.deliveries
		WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, delivery_id LIMIT $2`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Due, error) {
		var d Due
		var payload string
		err := r.Scan(&d.ID, &d.MonitorID, &d.AccountID, &payload)
		d.Payload = []byte(payload)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	return out, nil
}

// FailingSince returns when a monitor's current run of failures began:
// its first failed attempt after its last delivered one; false when its
// last attempt succeeded or it has made none.
func (q *Queries) FailingSince(ctx context.Context, monitor uuid.UUID) (time.Time, bool, error) {
	var since *time.Time
	err := q.pool.QueryRow(ctx, `SELECT min(attempted_at) FROM rm_parcels.delivery_attempts
		WHERE monitor_id = $1 AND outcome <> 'delivered'
		  AND attempted_at > coalesce((SELECT max(attempted_at) FROM rm_parcels.delivery_attempts WHERE monitor_id = $1 AND outcome = 'delivered'), '-infinity')`,
		monitor).Scan(&since)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("monitor %s's failures: %w", monitor, err)
	}
	if since == nil {
		return time.Time{}, false, nil
	}
	return since.UTC(), true, nil
}
