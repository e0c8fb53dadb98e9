package main

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/webhook"
	"github.com/arr-dev/arr/cmd/arr/internal/lifecycle"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/deliver"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/researchjobs"
	"github.com/arr-dev/arr/readapi/answerapi"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/httpx"
)

// addResearchJobs adds the research jobs' worker and the dispatcher of
// their webhooks (the monitors' dispatcher, commands/deliver, over the
// research jobs' outbox) to a process with the answer role, each under a
// lease: one of each runs at a time per database.
func (p *process) addResearchJobs(s *system, version string) error {
	w, err := answerapi.NewWorker(httpx.Deps{App: s.app, Logger: s.log, Version: version}, s.store)
	if err != nil {
		return err
	}
	p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "research jobs", Run: projections.Exclusive(s.pool, s.log, "research jobs", w.Run)})
	if s.keys == nil {
		return nil
	}
	open := func(ctx context.Context, account uuid.UUID, sealed []byte) (string, error) {
		o, err := s.keys.Opener(ctx, account)
		if err != nil {
			return "", err
		}
		b, err := o.Open(sealed)
		return string(b), err
	}
	d, err := deliver.New(deliver.Config{
		Store: s.store, Outbox: jobsOutbox{s.app.Queries.ResearchJobs},
		Sender:     webhook.New(webhook.Config{AllowPrivate: s.cfg.WebhookPrivate == "allow", UserAgent: "arr-webhooks/" + version}),
		Targets:    jobTargets{store: s.store, open: open, reg: domain.NewRegistry(answer.JobEvents())},
		OpenSecret: open, Clock: s.now, Logger: s.log,
	})
	if err != nil {
		return err
	}
	p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "research webhook dispatcher",
		Run: projections.Exclusive(s.pool, s.log, "research webhook dispatcher", d.Run)})
	return nil
}

// jobsOutbox reads the research jobs' deliveries for the dispatcher.
type jobsOutbox struct{ q app.ResearchJobs }

func (o jobsOutbox) Due(ctx context.Context, now time.Time, limit int) ([]deliver.Due, error) {
	ds, err := o.q.DueDeliveries(ctx, now, limit)
	if err != nil {
		return nil, err
	}
	out := make([]deliver.Due, len(ds))
	for i, d := range ds {
		job := d.JobID
		out[i] = deliver.Due{ID: d.ID, WebhookID: researchjobs.WebhookID(d.ID), AccountID: d.AccountID, Payload: d.Payload, ResearchJobID: &job}
	}
	return out, nil
}

// FailingSince: a job's delivery disables nothing.
func (jobsOutbox) FailingSince(context.Context, uuid.UUID) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

// jobTargets reads a job's webhook URL and sealed secret from its stream
// (not the read model), as the dispatcher reads a monitor's.
type jobTargets struct {
	store commands.StreamReader
	open  func(ctx context.Context, account uuid.UUID, sealed []byte) (string, error)
	reg   *domain.Registry
}

func (t jobTargets) Target(ctx context.Context, x deliver.Due) (deliver.Target, bool, error) {
	if x.ResearchJobID == nil {
		return deliver.Target{}, false, nil
	}
	j, err := commands.LoadJob(ctx, t.store, t.reg, *x.ResearchJobID)
	if err != nil {
		return deliver.Target{}, false, err
	}
	if j.Requested == nil || j.Requested.WebhookURL == "" || (j.Status != answer.JobSucceeded && j.Status != answer.JobFailed) {
		return deliver.Target{}, false, nil
	}
	secret, err := t.open(ctx, j.Requested.AccountID, j.Requested.WebhookSecret)
	if err != nil {
		return deliver.Target{}, false, err
	}
	return deliver.Target{URL: j.Requested.WebhookURL, Secret: secret, AccountID: j.Requested.AccountID}, true, nil
}
