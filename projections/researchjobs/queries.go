package researchjobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/projections"
)

// Job is a research job as its account sees it (GET
// /api/v1/research/{id}, and the data of its webhook).
type Job struct {
	ID          uuid.UUID   `json:"id"`
	Status      string      `json:"status"`
	Query       string      `json:"query"`
	Tier        answer.Tier `json:"tier"`
	Mode        answer.Mode `json:"mode"`
	WebhookURL  *string     `json:"webhook_url"`
	Attempts    int         `json:"attempts"`
	RequestedAt time.Time   `json:"requested_at"`
	StartedAt   *time.Time  `json:"started_at"`
	FinishedAt  *time.Time  `json:"finished_at"`
	// Answer is the answer, as POST /api/v1/answer returns it, once the
	// job succeeded; null before and otherwise.
	Answer *Answer `json:"answer"`
	// Error is why the job failed; null otherwise.
	Error *JobError `json:"error"`

	accountID uuid.UUID
}

// JobError is a failed job's error.
type JobError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Answer is the answer object of POST /api/v1/answer.
type Answer struct {
	Query         string            `json:"query"`
	ResolvedQuery string            `json:"resolved_query"`
	Answer        string            `json:"answer"`
	Citations     []answer.Citation `json:"citations"`
	Sources       []answer.Source   `json:"sources"`
	Tier          answer.Tier       `json:"tier"`
	Mode          answer.Mode       `json:"mode"`
	Cached        bool              `json:"cached"`
	Synthesis     string            `json:"synthesis"`
	SubQuestions  []string          `json:"sub_questions,omitempty"`
	AnswerID      string            `json:"answer_id"`
	SynthesizedAt time.Time         `json:"synthesized_at"`
	ExpiresAt     time.Time         `json:"expires_at"`
}

// answerOf is a job's answer object.
func answerOf(j *Job, a answer.JobAnswer) *Answer {
	srcs := a.Sources
	if srcs == nil {
		srcs = []answer.Source{}
	}
	return &Answer{Query: j.Query, ResolvedQuery: j.Query, Answer: a.Answer, Citations: answer.CitationSpans(a.Answer), Sources: srcs,
		Tier: j.Tier, Mode: j.Mode, Cached: a.Cached, Synthesis: string(a.Synthesis), SubQuestions: a.SubQuestions,
		AnswerID: a.AnswerID.String(), SynthesizedAt: a.SynthesizedAt, ExpiresAt: a.ExpiresAt}
}

type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const jobColumns = `job_id, account_id, status, query, tier, mode, webhook_url, attempt, requested_at, started_at, finished_at,
	answer, error_code, error_message`

func get(ctx context.Context, db rowQuerier, table, where string, args ...any) (Job, bool, error) {
	var j Job
	var raw []byte
	var code, msg *string
	err := db.QueryRow(ctx, `SELECT `+jobColumns+` FROM `+table+` WHERE `+where, args...).Scan(&j.ID, &j.accountID, &j.Status, &j.Query,
		&j.Tier, &j.Mode, &j.WebhookURL, &j.Attempts, &j.RequestedAt, &j.StartedAt, &j.FinishedAt, &raw, &code, &msg)
	if errors.Is(err, pgx.ErrNoRows) {
		return Job{}, false, nil
	}
	if err != nil {
		return Job{}, false, fmt.Errorf("loading research job: %w", err)
	}
	if raw != nil {
		var a answer.JobAnswer
		if err := json.Unmarshal(raw, &a); err != nil {
			return Job{}, false, fmt.Errorf("reading research job %s's answer: %w", j.ID, err)
		}
		j.Answer = answerOf(&j, a)
	}
	if code != nil {
		j.Error = &JobError{Code: *code}
		if msg != nil {
			j.Error.Message = *msg
		}
	}
	return j, true, nil
}

// Queries reads the research jobs read model. Safe for concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries over rm_research_jobs.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }

// Get returns one of an account's jobs; false when the account has none
// of that id (another account's reads as missing).
func (q *Queries) Get(ctx context.Context, account, id uuid.UUID) (Job, bool, error) {
	return get(ctx, q.pool, "rm_research_jobs.jobs", `job_id = $1 AND account_id = $2`, id, account)
}

// Event is one progress event of a job.
type Event struct {
	// Position is its event's log position: the SSE id.
	Position int64
	Name     string
	Data     json.RawMessage
}

// Events returns a job's progress events after position after, oldest
// first, at most limit.
func (q *Queries) Events(ctx context.Context, id uuid.UUID, after int64, limit int) ([]Event, error) {
	rows, err := q.pool.Query(ctx, `SELECT position, name, data FROM rm_research_jobs.job_events
		WHERE job_id = $1 AND position > $2 ORDER BY position LIMIT $3`, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading research job %s's events: %w", id, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Event])
	if err != nil {
		return nil, fmt.Errorf("reading research job %s's events: %w", id, err)
	}
	return out, nil
}

// OpenJob is a queued or running job, for the worker.
type OpenJob struct {
	ID        uuid.UUID
	Status    string
	AccountID uuid.UUID
}

// Open returns at most limit jobs still queued or running, oldest first.
func (q *Queries) Open(ctx context.Context, limit int) ([]OpenJob, error) {
	rows, err := q.pool.Query(ctx, `SELECT job_id, status, account_id FROM rm_research_jobs.jobs WHERE status IN ('queued', 'running')
		ORDER BY requested_at, job_id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing open research jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[OpenJob])
	if err != nil {
		return nil, fmt.Errorf("listing open research jobs: %w", err)
	}
	return out, nil
}

// OpenCount counts an account's jobs still queued or running.
func (q *Queries) OpenCount(ctx context.Context, account uuid.UUID) (int, error) {
	var n int
	err := q.pool.QueryRow(ctx, `SELECT count(*) FROM rm_research_jobs.jobs WHERE account_id = $1 AND status IN ('queued', 'running')`, account).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting account %s's open research jobs: %w", account, err)
	}
	return n, nil
}

// Status returns a job's status ("" when there is none).
func (q *Queries) Status(ctx context.Context, id uuid.UUID) (string, error) {
	var s string
	err := q.pool.QueryRow(ctx, `SELECT status FROM rm_research_jobs.jobs WHERE job_id = $1`, id).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("loading research job %s's status: %w", id, err)
	}
	return s, nil
}

// DueDelivery is a job's webhook delivery whose next attempt is due.
type DueDelivery struct {
	ID, JobID, AccountID uuid.UUID
	Payload              []byte
}

// DueDeliveries returns at most limit pending deliveries due at now.
func (q *Queries) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]DueDelivery, error) {
	rows, err := q.pool.Query(ctx, `SELECT delivery_id, job_id, account_id, payload::text FROM rm_research_jobs.deliveries
		WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $2`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("reading research jobs' due deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[DueDelivery])
	if err != nil {
		return nil, fmt.Errorf("reading research jobs' due deliveries: %w", err)
	}
	return out, nil
}
