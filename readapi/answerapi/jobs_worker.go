package answerapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/projections/answercache"
	"github.com/arr-dev/arr/projections/researchjobs"
	"github.com/arr-dev/arr/readapi/httpx"
)

// Defaults of the research jobs' worker.
const (
	// jobsPoll is how often the worker reads the open jobs.
	jobsPoll = 250 * time.Millisecond
	// jobsAtOnce bounds the jobs one worker runs at a time; one account
	// holds at most answer.MaxRunningJobsPerAccount of them.
	jobsAtOnce = 8
	// jobsOpenRead bounds the open jobs one pass reads.
	jobsOpenRead = 1000
)

// Worker runs the research jobs: each pass it reads the jobs still
// queued or running (the research_jobs read model), claims each it does
// not run by appending ResearchJobStarted at the stream's version (so one
// claimant wins), researches it as POST /api/v1/answer would (the cache
// first, the same synthesis, recorded by AnswerSynthesized and
// AnswerServed), reports its steps (ResearchJobStepped: the sources read,
// the writing begun) and records its end (ResearchJobCompleted or
// ResearchJobFailed). A job running in the read model that this worker
// does not run was left by a process that died: it is claimed again and
// rerun from the start (its answer may come from the cache by then). A
// job canceled while it runs is stopped: its synthesis is cancelled when
// no other asker shares it, and whatever it would append is refused by
// the stream's version.
//
// One worker runs at a time per database (cmd/arr runs it under a lease,
// projections.Exclusive). Safe for concurrent use.
type Worker struct {
	h     *handler
	store commands.Appender
	log   *slog.Logger
	reg   *domain.Registry

	mu      sync.Mutex
	running map[uuid.UUID]runningJob
	wg      sync.WaitGroup
}

// NewWorker returns the research jobs' worker over d.App (built for the
// answer role), appending the jobs' events to store.
func NewWorker(d httpx.Deps, store commands.Appender) (*Worker, error) {
	if store == nil || d.App.Answers.Served == nil || d.App.Queries.ResearchJobs == nil {
		return nil, errors.New("research jobs: the application has no served-answers recorder or research jobs read model (build it for the answer role)")
	}
	if d.App.Now == nil {
		d.App.Now = time.Now
	}
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Worker{h: &handler{app: d.App, d: d, memo: newMemo(1000), resolved: newResolutions(1000), flight: newFlight()}, store: store, log: log,
		reg: domain.NewRegistry(answer.JobEvents()), running: map[uuid.UUID]runningJob{}}, nil
}

// runningJob is a job this worker runs: its account (for the account's
// share) and what stops it.
type runningJob struct {
	account uuid.UUID
	cancel  context.CancelFunc
}

// Run runs jobs until ctx ends, then waits for the ones running to stop
// (they are left running in the log, for the next worker to rerun).
func (w *Worker) Run(ctx context.Context) error {
	w.log.Info("research jobs worker running")
	defer w.wg.Wait()
	tick := time.NewTicker(jobsPoll)
	defer tick.Stop()
	for {
		if err := w.pass(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("research jobs pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// pass starts the open jobs this worker does not run, and stops the ones
// it runs that are no longer open (canceled).
func (w *Worker) pass(ctx context.Context) error {
	open, err := w.h.app.Queries.ResearchJobs.Open(ctx, jobsOpenRead)
	if err != nil {
		return err
	}
	w.mu.Lock()
	var mine []uuid.UUID
	for id := range w.running {
		mine = append(mine, id)
	}
	todo := w.fairPick(open)
	w.mu.Unlock()
	// A job this worker runs that has ended in the read model (canceled)
	// is stopped.
	for _, id := range mine {
		st, err := w.h.app.Queries.ResearchJobs.Status(ctx, id)
		if err != nil {
			return err
		}
		if answer.JobFinished(st) {
			w.mu.Lock()
			if rj, ok := w.running[id]; ok {
				rj.cancel()
			}
			w.mu.Unlock()
		}
	}
	for _, id := range todo {
		if err := w.claim(ctx, id); err != nil {
			w.log.Warn("claiming a research job", "job", id, "err", err)
		}
	}
	return nil
}

// fairPick chooses the open jobs to start (w.mu held): one job per account
// in turn, the accounts in the order of their oldest open job, each to
// answer.MaxRunningJobsPerAccount running, all to jobsAtOnce.
func (w *Worker) fairPick(open []researchjobs.OpenJob) []uuid.UUID {
	held := map[uuid.UUID]int{}
	for _, rj := range w.running {
		held[rj.account]++
	}
	var order []uuid.UUID
	queue := map[uuid.UUID][]uuid.UUID{}
	for _, j := range open {
		if _, ok := w.running[j.ID]; ok {
			continue
		}
		if _, ok := queue[j.AccountID]; !ok {
			order = append(order, j.AccountID)
		}
		queue[j.AccountID] = append(queue[j.AccountID], j.ID)
	}
	var todo []uuid.UUID
	for more := true; more && len(w.running)+len(todo) < jobsAtOnce; {
		more = false
		for _, acct := range order {
			if len(w.running)+len(todo) >= jobsAtOnce {
				break
			}
			if len(queue[acct]) == 0 || held[acct] >= answer.MaxRunningJobsPerAccount {
				continue
			}
			todo = append(todo, queue[acct][0])
			queue[acct] = queue[acct][1:]
			held[acct]++
			more = true
		}
	}
	return todo
}

// run is one attempt at a job, as the worker holds it.
type run struct {
	job     answer.Job
	attempt int
	version uint64
	md      commands.Metadata
	steps   map[string]bool
}

// claim appends ResearchJobStarted at the job's version and starts it;
// a job started answer.MaxJobAttempts times already, or whose key or plan
// no longer allows it, is failed instead.
func (w *Worker) claim(ctx context.Context, id uuid.UUID) error {
	j, err := commands.LoadJob(ctx, w.store, w.reg, id)
	if err != nil {
		return err
	}
	if j.Requested == nil || answer.JobFinished(j.Status) {
		return nil // the read model lags
	}
	r := &run{job: j, attempt: j.Attempt + 1, version: j.Version, md: commands.NewMetadata("answer:research-jobs", ""), steps: map[string]bool{}}
	if answer.Abandoned(j.Attempt) {
		r.attempt = j.Attempt
		return w.fail(ctx, r, answer.CodeJobAbandoned, answer.AbandonedMessage(j.Attempt))
	}
	if err := w.authorize(ctx, j.Requested); err != nil {
		r.attempt = j.Attempt
		return w.failWith(ctx, r, err)
	}
	ok, err := w.append(ctx, r, &answer.ResearchJobStarted{JobID: id, Attempt: r.attempt, StartedAt: w.h.app.Now().UTC()})
	if err != nil || !ok {
		return err
	}
	tctx, tcancel := context.WithTimeout(ctx, answer.JobAttemptDeadline)
	rctx, ccancel := context.WithCancelCause(tctx)
	cancel := func() { ccancel(errStopSynthesis); tcancel() }
	w.mu.Lock()
	w.running[id] = runningJob{account: j.Requested.AccountID, cancel: cancel}
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() {
			cancel()
			w.mu.Lock()
			delete(w.running, id)
			w.mu.Unlock()
		}()
		w.research(rctx, ctx, r)
	}()
	return nil
}

// authorize re-checks a job's key and plan as they stand now (the
// identity read model): a key revoked since the job was asked for, or an
// account no longer on a plan that allows its mode, ends the job.
func (w *Worker) authorize(ctx context.Context, q *answer.ResearchJobRequested) error {
	ids := w.h.app.Queries.Identities
	if ids == nil {
		return nil
	}
	k, err := ids.Key(ctx, q.KeyID)
	var de *domain.Error
	if errors.As(err, &de) && de.Kind == domain.ErrNotFound || err == nil && k.RevokedAt != nil {
		return domain.Forbidden(answer.CodeJobKeyRevoked, "the API key that asked for this research job was revoked before it ended; the job is not run")
	}
	if err != nil {
		return err
	}
	acct, err := ids.Account(ctx, q.AccountID)
	if err != nil {
		return err
	}
	return answer.Request{Tier: q.Tier, Mode: q.Mode}.Authorize(acct.Plan)
}

// failWith records err as r's job's failure, its code and message as the
// answer route would say them.
func (w *Worker) failWith(ctx context.Context, r *run, err error) error {
	p := httpx.ProblemOf(err)
	var de *domain.Error
	if errors.As(err, &de) {
		p.Code, p.Message = de.Code, de.Message
	}
	if p.Status >= 500 && !errors.As(err, &de) {
		w.log.Warn("research job failed", "job", r.job.Requested.JobID, "err", err)
	}
	return w.fail(ctx, r, p.Code, p.Message)
}

// fail appends ResearchJobFailed to r's job.
func (w *Worker) fail(ctx context.Context, r *run, code, msg string) error {
	q := r.job.Requested
	_, err := w.append(ctx, r, &answer.ResearchJobFailed{JobID: q.JobID, AccountID: q.AccountID, Attempt: r.attempt,
		Code: code, Message: msg, FailedAt: w.h.app.Now().UTC()})
	if err != nil {
		return fmt.Errorf("recording research job %s's failure: %w", q.JobID, err)
	}
	return nil
}

// append appends e to r's job at r's version; false when the stream moved
// (the job was canceled, or another worker holds it).
func (w *Worker) append(ctx context.Context, r *run, e domain.Event) (bool, error) {
	ok, err := commands.AppendJobEvent(ctx, w.store, r.md, r.job.Requested.JobID, r.version, e)
	if ok {
		r.version++
	}
	return ok, err
}

// research answers r's job under ctx (canceled with the job, ended at
// the attempt's deadline) and records its end; shutdown (process ends)
// leaves it running for the next worker.
func (w *Worker) research(ctx, process context.Context, r *run) {
	q := r.job.Requested
	a, cached, err := w.answer(ctx, r)
	if process.Err() != nil {
		return // shutting down: the next worker reruns it
	}
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	// The end is recorded even if the job was canceled meanwhile: the
	// stream's version refuses it then.
	ctx = context.WithoutCancel(ctx)
	switch {
	case timedOut:
		err = w.fail(ctx, r, answer.CodeJobTimeout, fmt.Sprintf("the research job's attempt ran past its deadline (%s) and was stopped: ask again, perhaps with mode=quick", answer.JobAttemptDeadline))
	case errors.Is(err, context.Canceled):
		return // canceled
	case err != nil:
		err = w.failWith(ctx, r, err)
	default:
		if aerr := w.authorize(ctx, q); aerr != nil {
			err = w.failWith(ctx, r, aerr)
			break
		}
		err = w.complete(ctx, r, a, cached)
	}
	if err != nil {
		w.log.Warn("recording a research job's end", "job", q.JobID, "err", err)
	}
}

// complete records r's job's answer and the answer served.
func (w *Worker) complete(ctx context.Context, r *run, a answercache.CachedAnswer, cached bool) error {
	q := r.job.Requested
	now := w.h.app.Now().UTC()
	done := &answer.ResearchJobCompleted{JobID: q.JobID, AccountID: q.AccountID, Attempt: r.attempt, CompletedAt: now,
		Answer: answer.JobAnswer{AnswerID: a.AnswerID, CacheKey: a.CacheKey, Answer: a.Answer, Sources: withSnippets(a.Answer, a.Sources),
			Synthesis: a.Synthesis, SubQuestions: a.SubQuestions, Cached: cached, SynthesizedAt: a.SynthesizedAt, ExpiresAt: a.ExpiresAt}}
	ok, err := w.append(ctx, r, done)
	if err != nil || !ok {
		return err
	}
	w.h.app.Answers.Served.Record(answer.AnswerServed{AccountID: q.AccountID, KeyID: q.KeyID, CacheKey: a.CacheKey, AnswerID: a.AnswerID,
		Tier: q.Tier, Mode: q.Mode, Cached: cached, ServedAt: now})
	return nil
}

// answer is the job's answer: from the cache, or synthesized, its steps
// recorded as they come.
func (w *Worker) answer(ctx context.Context, r *run) (answercache.CachedAnswer, bool, error) {
	q := r.job.Requested
	req, err := answer.ParseRequest(q.Query, true, string(q.Tier), string(q.Mode))
	if err != nil {
		return answercache.CachedAnswer{}, false, err
	}
	if gen := w.h.app.Answers.Generation; gen != nil {
		if req.Generation, err = gen(ctx); err != nil {
			return answercache.CachedAnswer{}, false, err
		}
	}
	a, err := w.h.lookup(ctx, req.CacheKey())
	if err == nil {
		return a, true, nil
	}
	if !errors.Is(err, answercache.ErrNoCachedAnswer) {
		return a, false, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a, err = w.h.synthesize(ctx, req, r.md, func(p progress) { w.step(ctx, r, p, cancel) })
	return a, false, err
}

// step records the first sources and the first delta of an attempt; a
// stream that moved (the job was canceled) stops it.
func (w *Worker) step(ctx context.Context, r *run, p progress, cancel context.CancelFunc) {
	ev := &answer.ResearchJobStepped{JobID: r.job.Requested.JobID, Attempt: r.attempt, SteppedAt: w.h.app.Now().UTC()}
	switch p.name {
	case eventSources:
		ev.Step = answer.StepSources
		var srcs []answer.Source
		if err := json.Unmarshal(p.data, &srcs); err == nil {
			for _, s := range srcs {
				ev.Sources = append(ev.Sources, answer.StepSource{Title: s.Title, URL: s.URL})
			}
		}
	case eventDelta:
		ev.Step = answer.StepWriting
	default:
		return
	}
	if r.steps[ev.Step] {
		return
	}
	r.steps[ev.Step] = true
	ok, err := w.append(ctx, r, ev)
	if err != nil {
		w.log.Warn("recording a research job's step", "job", ev.JobID, "err", err)
		return
	}
	if !ok {
		cancel()
	}
}
