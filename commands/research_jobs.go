package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/netguard"
	"github.com/arr-dev/arr/adapters/webhook"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/eventstore"
)

// RequestResearchJob asks for an answer to be researched in the
// background: the question (checked: answer.ParseRequest, and
// Authorize against the key's plan by the caller) and an optional webhook.
type RequestResearchJob struct {
	AccountID, KeyID uuid.UUID
	Request          answer.Request
	WebhookURL       string
	Metadata         eventstore.Metadata
}

// RequestedJob is the result of RequestResearchJob. WebhookSecret is the
// job's whsec_ signing secret in clear: shown once, at creation (empty
// without a webhook).
type RequestedJob struct {
	JobID         uuid.UUID
	WebhookURL    string
	WebhookSecret string
	Event         answer.ResearchJobRequested
	Position      uint64
}

// RequestResearchJobHandler handles RequestResearchJob: it checks the
// webhook URL as a monitor's is (checkWebhookURL: the SSRF guard unless
// private webhooks are allowed), makes and seals the job's signing secret
// with the account's data key, and records ResearchJobRequested.
type RequestResearchJobHandler struct {
	store        Appender
	keys         ContactKeys
	clock        Clock
	allowPrivate bool
	guard        *netguard.Guard
}

// NewRequestResearchJobHandler refuses nil dependencies.
func NewRequestResearchJobHandler(store Appender, keys ContactKeys, clock Clock, allowPrivate bool) (*RequestResearchJobHandler, error) {
	if store == nil || keys == nil || clock == nil {
		return nil, errors.New("request research job: nil dependency")
	}
	return &RequestResearchJobHandler{store: store, keys: keys, clock: clock, allowPrivate: allowPrivate, guard: netguard.New(netguard.Config{})}, nil
}

// Handle records the job.
func (h *RequestResearchJobHandler) Handle(ctx context.Context, c RequestResearchJob) (out RequestedJob, err error) {
	defer func() {
		if err != nil && !errors.As(err, new(*domain.Error)) {
			err = fmt.Errorf("request research job: %w", err)
		}
	}()
	ev := answer.ResearchJobRequested{JobID: uuid.New(), AccountID: c.AccountID, KeyID: c.KeyID, Query: c.Request.Query,
		Tier: c.Request.Tier, Mode: c.Request.Mode, RequestedAt: h.clock().UTC()}
	if c.WebhookURL != "" {
		target, err := checkWebhookURL(h.guard, h.allowPrivate, c.WebhookURL)
		if err != nil {
			var de *domain.Error
			if errors.As(err, &de) {
				return out, domain.Invalid("invalid_webhook_url", "webhook_url", "%s", strings.Replace(de.Message, "url", "webhook_url", 1))
			}
			return out, err
		}
		secret, err := webhook.NewSecret()
		if err != nil {
			return out, err
		}
		sealer, err := h.keys.Sealer(ctx, c.AccountID)
		if err != nil {
			return out, err
		}
		if ev.WebhookSecret, err = sealer.Seal([]byte(secret)); err != nil {
			return out, fmt.Errorf("sealing the job's secret: %w", err)
		}
		ev.WebhookURL, out.WebhookURL, out.WebhookSecret = target, target, secret
	}
	ne, err := eventstore.EncodeAll(c.Metadata, &ev)
	if err != nil {
		return out, err
	}
	res, err := h.store.Append(ctx, answer.JobStreamID(ev.JobID), eventstore.NoStream(), ne...)
	if err != nil {
		return out, err
	}
	out.JobID, out.Event, out.Position = ev.JobID, ev, res.LastPosition
	return out, nil
}

// CancelResearchJob cancels one of an account's research jobs.
type CancelResearchJob struct {
	AccountID, JobID uuid.UUID
	Metadata         eventstore.Metadata
}

// CancelResearchJobHandler handles CancelResearchJob from the job's
// stream: a queued or running job gets ResearchJobCanceled; a canceled
// one is left as it is (cancel is idempotent); a finished one is a
// conflict (research_job_finished). Another account's job reads as
// missing.
type CancelResearchJobHandler struct {
	store Appender
	clock Clock
	reg   *domain.Registry
}

// NewCancelResearchJobHandler refuses nil dependencies.
func NewCancelResearchJobHandler(store Appender, clock Clock) (*CancelResearchJobHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("cancel research job: nil dependency")
	}
	return &CancelResearchJobHandler{store: store, clock: clock, reg: domain.NewRegistry(answer.JobEvents())}, nil
}

// ErrJobNotFound is the error of a job the account does not have.
func ErrJobNotFound(id uuid.UUID) error {
	return domain.NotFound("research_job_not_found", "no research job %s in this account", id)
}

// Handle cancels the job; it returns the position to wait for (0 when
// nothing was appended).
func (h *CancelResearchJobHandler) Handle(ctx context.Context, c CancelResearchJob) (uint64, error) {
	for range 3 {
		j, err := LoadJob(ctx, h.store, h.reg, c.JobID)
		if err != nil {
			return 0, err
		}
		if j.Requested == nil || j.Requested.AccountID != c.AccountID {
			return 0, ErrJobNotFound(c.JobID)
		}
		switch j.Status {
		case answer.JobCanceled:
			return 0, nil
		case answer.JobSucceeded, answer.JobFailed:
			return 0, domain.Conflict("research_job_finished", "research job %s has already %s; there is nothing to cancel", c.JobID, j.Status)
		}
		ne, err := eventstore.EncodeAll(c.Metadata, &answer.ResearchJobCanceled{JobID: c.JobID, AccountID: c.AccountID, CanceledAt: h.clock().UTC()})
		if err != nil {
			return 0, err
		}
		res, err := h.store.Append(ctx, answer.JobStreamID(c.JobID), eventstore.Exact(j.Version), ne...)
		if errors.Is(err, domain.ErrConcurrency) {
			continue // the worker moved it meanwhile: decide again
		}
		if err != nil {
			return 0, fmt.Errorf("cancel research job %s: %w", c.JobID, err)
		}
		return res.LastPosition, nil
	}
	return 0, domain.Conflict("research_job_busy", "research job %s changed while it was being canceled; try again", c.JobID)
}

// LoadJob folds a research job's stream (answer.Job; its Requested is nil
// when there is no such job).
func LoadJob(ctx context.Context, store StreamReader, reg *domain.Registry, id uuid.UUID) (answer.Job, error) {
	evs, err := store.ReadStream(ctx, answer.JobStreamID(id), eventstore.ReadStreamOptions{Limit: 1000})
	if err != nil {
		return answer.Job{}, fmt.Errorf("reading research job %s: %w", id, err)
	}
	var j answer.Job
	for _, e := range evs {
		p, err := reg.Decode(e.Type, e.SchemaVersion, e.Data)
		if err != nil {
			return j, fmt.Errorf("reading research job %s: %w", id, err)
		}
		j.Apply(p, e.StreamVersion)
	}
	return j, nil
}

// AppendJobEvent appends e to a research job's stream at its version
// (the stream's last StreamVersion); false when the stream moved (the job
// was canceled, or another worker holds it). The research jobs' worker
// records its claims, steps and ends through it.
func AppendJobEvent(ctx context.Context, store Appender, md Metadata, job uuid.UUID, version uint64, e domain.Event) (bool, error) {
	ne, err := eventstore.EncodeAll(md, e)
	if err != nil {
		return false, err
	}
	_, err = store.Append(ctx, answer.JobStreamID(job), eventstore.Exact(version), ne...)
	if errors.Is(err, domain.ErrConcurrency) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("recording research job %s: %w", job, err)
	}
	return true, nil
}
