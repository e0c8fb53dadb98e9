package answerapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/projections/researchjobs"
	"github.com/arr-dev/arr/readapi/httpx"
)

// jobsEventsPoll is how often a job's events stream reads its new events;
// jobsEventsBound ends a stream that has watched this long (the client
// resumes it with Last-Event-ID).
const (
	jobsEventsPoll  = 200 * time.Millisecond
	jobsEventsBound = 15 * time.Minute
)

// jobs serves /api/v1/research: POST (counted as an answer call) and,
// on routes that count against no limit, GET, GET …/events and DELETE.
type jobs struct {
	h *handler
	// streams counts each key's open events streams (this process's).
	streams *streamCount
}

// jobsStreamsPerKey bounds one key's concurrent events streams.
const jobsStreamsPerKey = 8

// streamCount counts open streams per key. Safe for concurrent use.
type streamCount struct {
	mu sync.Mutex
	n  map[uuid.UUID]int
}

// acquire takes one of key's streams; false when it holds the most.
func (s *streamCount) acquire(key uuid.UUID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[key] >= jobsStreamsPerKey {
		return false
	}
	s.n[key]++
	return true
}

// release gives back one of key's streams.
func (s *streamCount) release(key uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[key]--; s.n[key] <= 0 {
		delete(s.n, key)
	}
}

// jobBody is the body of POST /api/v1/research.
type jobBody struct {
	Q          *string `json:"q"`
	Tier       string  `json:"tier"`
	Mode       string  `json:"mode"`
	WebhookURL *string `json:"webhook_url"`
}

// createdJob is the 202 body: the job, and its webhook's signing secret
// (shown once).
type createdJob struct {
	researchjobs.Job
	WebhookSecret *string `json:"webhook_secret"`
}

// parseJobBody reads POST /api/v1/research's body: mode defaults to deep.
func parseJobBody(c *gin.Context) (answer.Request, string, error) {
	raw, err := httpx.ReadJSON(c.Request.Body)
	if err != nil {
		return answer.Request{}, "", err
	}
	var b jobBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		if f := httpx.UnknownField(err); f != "" {
			return answer.Request{}, "", domain.Invalid("unknown_field", f, "unknown field %q: the body takes only q, tier, mode and webhook_url; see /openapi.json", f)
		}
		return answer.Request{}, "", domain.Invalid("invalid_json", "", "the body must be a JSON object like {\"q\":\"…\",\"mode\":\"deep\",\"webhook_url\":\"https://…\"}: %v", err)
	}
	q, mode := "", b.Mode
	if b.Q != nil {
		q = *b.Q
	}
	if strings.TrimSpace(mode) == "" {
		mode = string(answer.Deep)
	}
	req, err := answer.ParseRequest(q, b.Q != nil, b.Tier, mode)
	hook := ""
	if b.WebhookURL != nil {
		if hook = *b.WebhookURL; strings.TrimSpace(hook) == "" {
			return req, "", domain.Invalid("invalid_webhook_url", "webhook_url", "webhook_url is empty: leave it out, or give the absolute http(s) URL the result is POSTed to")
		}
	}
	return req, hook, err
}

// create is POST /api/v1/research.
func (j *jobs) create(c *gin.Context) error {
	req, hook, err := parseJobBody(c)
	if err != nil {
		return err
	}
	p, _ := httpx.PrincipalOf(c)
	if err := req.Authorize(p.Plan); err != nil {
		return err
	}
	ctx := c.Request.Context()
	app := j.h.app
	open, err := app.Queries.ResearchJobs.OpenCount(ctx, p.AccountID)
	if err != nil {
		return err
	}
	if err := answer.CheckOpenJobs(open); err != nil {
		return err
	}
	res, err := app.Commands.RequestResearchJob.Handle(ctx, commands.RequestResearchJob{AccountID: p.AccountID, KeyID: p.KeyID,
		Request: req, WebhookURL: hook, Metadata: httpx.CommandMetadata(c, "key:"+p.KeyID.String())})
	if err != nil {
		return err
	}
	if app.WaitFor != nil {
		if err := app.WaitFor(ctx, researchjobs.Name, res.Position); err != nil {
			return fmt.Errorf("waiting for the research jobs: %w", err)
		}
	}
	job, ok, err := app.Queries.ResearchJobs.Get(ctx, p.AccountID, res.JobID)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("research job %s is not in the read model after its position", res.JobID)
	}
	out := createdJob{Job: job}
	if res.WebhookSecret != "" {
		out.WebhookSecret = &res.WebhookSecret
	}
	c.Header("Location", "/api/v1/research/"+res.JobID.String())
	c.JSON(http.StatusAccepted, out)
	return nil
}

// jobID reads the route's id: a UUID.
func jobID(c *gin.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil || len(c.Param("id")) != 36 {
		return uuid.Nil, domain.Invalid("invalid_research_job_id", "id", "the research job id must be the id POST /api/v1/research returned (a UUID)")
	}
	return id, nil
}

// load is one of the caller's jobs; another account's reads as missing.
func (j *jobs) load(c *gin.Context) (researchjobs.Job, error) {
	id, err := jobID(c)
	if err != nil {
		return researchjobs.Job{}, err
	}
	p, _ := httpx.PrincipalOf(c)
	job, ok, err := j.h.app.Queries.ResearchJobs.Get(c.Request.Context(), p.AccountID, id)
	if err != nil {
		return job, err
	}
	if !ok {
		return job, commands.ErrJobNotFound(id)
	}
	return job, nil
}

// get is GET /api/v1/research/{id}.
func (j *jobs) get(c *gin.Context) error {
	job, err := j.load(c)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, job)
	return nil
}

// cancel is DELETE /api/v1/research/{id}: 200 with the job canceled (a
// job canceled before is answered the same), 409 research_job_finished
// when it had succeeded or failed.
func (j *jobs) cancel(c *gin.Context) error {
	job, err := j.load(c)
	if err != nil {
		return err
	}
	p, _ := httpx.PrincipalOf(c)
	ctx := c.Request.Context()
	pos, err := j.h.app.Commands.CancelResearchJob.Handle(ctx, commands.CancelResearchJob{AccountID: p.AccountID, JobID: job.ID,
		Metadata: httpx.CommandMetadata(c, "key:"+p.KeyID.String())})
	if err != nil {
		return err
	}
	if pos > 0 && j.h.app.WaitFor != nil {
		if err := j.h.app.WaitFor(ctx, researchjobs.Name, pos); err != nil {
			return fmt.Errorf("waiting for the research jobs: %w", err)
		}
	}
	return j.get(c)
}

// lastEventID is where a resumed stream goes on from: the Last-Event-ID
// header (an event's id, its log position); 0 from the start.
func lastEventID(c *gin.Context) (int64, error) {
	v := strings.TrimSpace(c.GetHeader("Last-Event-ID"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, domain.Invalid("invalid_last_event_id", "Last-Event-ID", "Last-Event-ID must be the id of an event this stream sent (a non-negative integer)")
	}
	return n, nil
}

// events is GET /api/v1/research/{id}/events: the job's progress as
// server-sent events (queued, started, sources, writing, then succeeded,
// failed or canceled), each with its id; then done, whose data is the job
// as GET shows it, and the stream ends. Last-Event-ID resumes after that
// event.
func (j *jobs) events(c *gin.Context) error {
	job, err := j.load(c)
	if err != nil {
		return err
	}
	after, err := lastEventID(c)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	s := &sse{c: c}
	p, _ := httpx.PrincipalOf(c)
	if !j.streams.acquire(p.KeyID) {
		return domain.RateLimited(answer.CodeStreamsLimit, "this key has %d research events streams open, the most it may hold at once: close one, or poll GET /api/v1/research/{id}", jobsStreamsPerKey)
	}
	defer j.streams.release(p.KeyID)
	deadline := time.NewTimer(jobsEventsBound)
	defer deadline.Stop()
	tick := time.NewTicker(jobsEventsPoll)
	defer tick.Stop()
	for {
		// The key first: a key revoked since the stream opened ends it.
		if err := httpx.Reauthenticate(ctx, c); err != nil {
			if !s.started {
				return err
			}
			s.fail(err)
			return nil
		}
		// The status next: events read after a final status hold every
		// event up to it.
		now, ok, err := j.h.app.Queries.ResearchJobs.Get(ctx, p.AccountID, job.ID)
		if err != nil || !ok {
			if !s.started {
				return err
			}
			return nil
		}
		evs, err := j.h.app.Queries.ResearchJobs.Events(ctx, job.ID, after, 100)
		if err != nil {
			if !s.started {
				return err
			}
			return nil
		}
		for _, e := range evs {
			s.start()
			_, _ = fmt.Fprintf(c.Writer, "id: %d\nevent: %s\ndata: %s\n\n", e.Position, e.Name, e.Data)
			c.Writer.Flush()
			after = e.Position
		}
		if len(evs) == 0 && answer.JobFinished(now.Status) {
			s.sendJSON(eventDone, now)
			return nil
		}
		if len(evs) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			return nil
		case <-tick.C:
		}
	}
}
