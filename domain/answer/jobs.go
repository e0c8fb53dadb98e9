package answer

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// The statuses of a research job, as its events leave it.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCanceled  = "canceled"
)

// The steps a running research job reports (ResearchJobStepped.Step).
const (
	// StepSources: the sources the answer will cite by were read.
	StepSources = "sources"
	// StepWriting: the answer's text began.
	StepWriting = "writing"
)

// JobStreamID is the stream of one research job's events.
func JobStreamID(id uuid.UUID) string { return "researchjob-" + id.String() }

// JobFinished reports whether status is a final one.
func JobFinished(status string) bool {
	return status == JobSucceeded || status == JobFailed || status == JobCanceled
}

// ResearchJobRequested: a key asked for an answer to be researched in the
// background (POST /api/v1/research). The job's stream begins with it.
type ResearchJobRequested struct {
	// JobID identifies the job.
	JobID uuid.UUID `json:"job_id"`
	// AccountID is the account the job belongs to.
	AccountID uuid.UUID `json:"account_id"`
	// KeyID is the key that asked (the job's AnswerServed is the key's).
	KeyID uuid.UUID `json:"key_id"`
	// Query is the question as asked, trimmed.
	Query string `json:"query"`
	// Tier is the answer tier asked for.
	Tier Tier `json:"tier"`
	// Mode is the research mode asked for (deep unless asked otherwise).
	Mode Mode `json:"mode"`
	// WebhookURL receives the result (normalized); absent: none.
	WebhookURL string `json:"webhook_url,omitempty"`
	// WebhookSecret is the job's whsec_ signing secret sealed with the
	// account's data key; absent without a webhook.
	WebhookSecret []byte `json:"webhook_secret,omitempty"`
	// RequestedAt is when it was asked (UTC).
	RequestedAt time.Time `json:"requested_at"`
}

// ResearchJobStarted: a worker began an attempt at the job. A job whose
// worker died is started again (Attempt + 1) by the next worker.
type ResearchJobStarted struct {
	// JobID identifies the job.
	JobID uuid.UUID `json:"job_id"`
	// Attempt counts the starts, from 1.
	Attempt int `json:"attempt"`
	// StartedAt is when (UTC).
	StartedAt time.Time `json:"started_at"`
}

// StepSource is a source as a step names it.
type StepSource struct {
	// Title is the source page's title.
	Title string `json:"title"`
	// URL is the source's absolute URL.
	URL string `json:"url"`
}

// ResearchJobStepped: a running attempt reached a step: at most one
// sources and one writing step per attempt.
type ResearchJobStepped struct {
	// JobID identifies the job.
	JobID uuid.UUID `json:"job_id"`
	// Attempt is the attempt that reached the step (ResearchJobStarted's).
	Attempt int `json:"attempt"`
	// Step is sources or writing.
	Step string `json:"step"`
	// Sources are the sources read (the sources step).
	Sources []StepSource `json:"sources,omitempty"`
	// SteppedAt is when (UTC).
	SteppedAt time.Time `json:"stepped_at"`
}

// JobAnswer is a job's answer as it was served: the answer's own fields
// (its AnswerSynthesized), kept with the job so that the job shows it
// after the cache has let it go.
type JobAnswer struct {
	// AnswerID is the answer's AnswerSynthesized.
	AnswerID uuid.UUID `json:"answer_id"`
	// CacheKey is the answer's cache key.
	CacheKey string `json:"cache_key"`
	// Answer is the answer's text with its citation markers.
	Answer string `json:"answer"`
	// Sources are the sources the markers number.
	Sources []Source `json:"sources"`
	// Synthesis says how the answer was written.
	Synthesis Synthesis `json:"synthesis"`
	// SubQuestions are a deep answer's sub-questions.
	SubQuestions []string `json:"sub_questions,omitempty"`
	// Cached is true when the answer came from the cache.
	Cached bool `json:"cached"`
	// SynthesizedAt is when the answer was written (UTC).
	SynthesizedAt time.Time `json:"synthesized_at"`
	// ExpiresAt is when the answer leaves the cache (UTC).
	ExpiresAt time.Time `json:"expires_at"`
}

// ResearchJobCompleted: the job's answer was made (or found in the
// cache); the job succeeded.
type ResearchJobCompleted struct {
	// JobID identifies the job.
	JobID uuid.UUID `json:"job_id"`
	// AccountID is the job's account.
	AccountID uuid.UUID `json:"account_id"`
	// Attempt is the attempt that answered.
	Attempt int `json:"attempt"`
	// Answer is the answer.
	Answer JobAnswer `json:"answer"`
	// CompletedAt is when (UTC).
	CompletedAt time.Time `json:"completed_at"`
}

// ResearchJobFailed: the job could not be answered; it is over.
type ResearchJobFailed struct {
	// JobID identifies the job.
	JobID uuid.UUID `json:"job_id"`
	// AccountID is the job's account.
	AccountID uuid.UUID `json:"account_id"`
	// Attempt is the attempt that failed.
	Attempt int `json:"attempt"`
	// Code is the error's code, as the answer route would say it.
	Code string `json:"code"`
	// Message is the error's message, as the answer route would say it.
	Message string `json:"message"`
	// FailedAt is when (UTC).
	FailedAt time.Time `json:"failed_at"`
}

// ResearchJobCanceled: the job's account canceled it before it ended.
type ResearchJobCanceled struct {
	// JobID identifies the job.
	JobID uuid.UUID `json:"job_id"`
	// AccountID is the job's account.
	AccountID uuid.UUID `json:"account_id"`
	// CanceledAt is when (UTC).
	CanceledAt time.Time `json:"canceled_at"`
}

func (ResearchJobRequested) EventType() string  { return "ResearchJobRequested" }
func (ResearchJobRequested) SchemaVersion() int { return 1 }
func (ResearchJobStarted) EventType() string    { return "ResearchJobStarted" }
func (ResearchJobStarted) SchemaVersion() int   { return 1 }
func (ResearchJobStepped) EventType() string    { return "ResearchJobStepped" }
func (ResearchJobStepped) SchemaVersion() int   { return 1 }
func (ResearchJobCompleted) EventType() string  { return "ResearchJobCompleted" }
func (ResearchJobCompleted) SchemaVersion() int { return 1 }
func (ResearchJobFailed) EventType() string     { return "ResearchJobFailed" }
func (ResearchJobFailed) SchemaVersion() int    { return 1 }
func (ResearchJobCanceled) EventType() string   { return "ResearchJobCanceled" }
func (ResearchJobCanceled) SchemaVersion() int  { return 1 }

// JobEvents lists constructors for the research jobs' events.
func JobEvents() []func() domain.Event {
	return []func() domain.Event{
		func() domain.Event { return &ResearchJobRequested{} },
		func() domain.Event { return &ResearchJobStarted{} },
		func() domain.Event { return &ResearchJobStepped{} },
		func() domain.Event { return &ResearchJobCompleted{} },
		func() domain.Event { return &ResearchJobFailed{} },
		func() domain.Event { return &ResearchJobCanceled{} },
	}
}

// Job is a research job's state, folded from its stream's events (Apply):
// what the commands and the worker decide on.
type Job struct {
	Requested *ResearchJobRequested
	Status    string
	Attempt   int
	// Version is the stream's version after the last event applied.
	Version uint64
}

// Apply folds one event of the job's stream, at stream version v.
func (j *Job) Apply(e domain.Event, v uint64) {
	j.Version = v
	switch x := e.(type) {
	case *ResearchJobRequested:
		j.Requested, j.Status = x, JobQueued
	case *ResearchJobStarted:
		j.Status, j.Attempt = JobRunning, x.Attempt
	case *ResearchJobCompleted:
		j.Status = JobSucceeded
	case *ResearchJobFailed:
		j.Status = JobFailed
	case *ResearchJobCanceled:
		j.Status = JobCanceled
	}
}

// The research jobs' limits.
const (
	// MaxOpenJobsPerAccount bounds an account's jobs queued or running at
	// once: POST /api/v1/research past it is refused (429
	// research_jobs_open_limit) until one ends.
	MaxOpenJobsPerAccount = 10
	// MaxRunningJobsPerAccount bounds the jobs of one account a worker
	// runs at once: the other slots are left to the other accounts.
	MaxRunningJobsPerAccount = 4
	// MaxJobAttempts bounds the starts of a job: a job whose worker died
	// this many times is given up (ResearchJobFailed
	// research_job_abandoned) rather than started again.
	MaxJobAttempts = 4
	// JobAttemptDeadline bounds one attempt: past it the attempt is
	// stopped and the job failed (research_job_timeout).
	JobAttemptDeadline = 10 * time.Minute
)

// The codes of the research jobs' own refusals and failures.
const (
	CodeJobsOpenLimit = "research_jobs_open_limit"
	CodeJobAbandoned  = "research_job_abandoned"
	CodeJobTimeout    = "research_job_timeout"
	CodeJobKeyRevoked = "key_revoked"
	CodeStreamsLimit  = "research_streams_limit"
)

// CheckOpenJobs refuses one more job to an account that has open jobs
// queued or running.
func CheckOpenJobs(open int) error {
	if open < MaxOpenJobsPerAccount {
		return nil
	}
	return domain.RateLimited(CodeJobsOpenLimit, "this account has %d research jobs queued or running, the most it may have at once: wait for one to end (GET /api/v1/research/{id}) or cancel one (DELETE) before asking for another", open)
}

// Abandoned reports whether a job started attempts times is given up
// instead of started again.
func Abandoned(attempts int) bool { return attempts >= MaxJobAttempts }

// AbandonedMessage is the message of a job given up.
func AbandonedMessage(attempts int) string {
	return fmt.Sprintf("the research job was started %d times and its worker stopped each time before it ended; it is given up: ask again, perhaps in other words", attempts)
}
