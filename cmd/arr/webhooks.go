package main

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/webhook"
	"github.com/arr-dev/arr/cmd/arr/internal/lifecycle"
	"github.com/arr-dev/arr/commands/deliver"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/parcels"
)

// addDispatcher adds the list monitors' webhook dispatcher to a process
// with the records role (which holds the master key that opens the
// monitors' secrets). Every such process runs one; its lease lets one of
// them send at a time.
func (p *process) addDispatcher(s *system, version string) error {
	if s.keys == nil {
		return nil
	}
	q := parcels.NewQueries(s.pool)
	d, err := deliver.New(deliver.Config{
		Store: s.store, Outbox: outbox{q},
		Sender: webhook.New(webhook.Config{AllowPrivate: s.cfg.WebhookPrivate == "allow", UserAgent: "arr-webhooks/" + version}),
		OpenSecret: func(ctx context.Context, account uuid.UUID, sealed []byte) (string, error) {
			o, err := s.keys.Opener(ctx, account)
			if err != nil {
				return "", err
			}
			b, err := o.Open(sealed)
			return string(b), err
		},
		Mailer: s.app.Mailer,
		AccountEmail: func(ctx context.Context, account uuid.UUID) (string, error) {
			a, err := s.app.Queries.Identities.Account(ctx, account)
			return a.Email, err
		},
		Clock: s.now, Logger: s.log, DisableAfter: s.cfg.MonitorDisableAfter,
	})
	if err != nil {
		return err
	}
	p.group.Add(lifecycle.Intake, lifecycle.Component{Name: "webhook dispatcher", Run: projections.Exclusive(s.pool, s.log, "webhook dispatcher", d.Run)})
	return nil
}

// outbox reads the deliveries for the dispatcher.
type outbox struct{ q *parcels.Queries }

func (o outbox) Due(ctx context.Context, now time.Time, limit int) ([]deliver.Due, error) {
	ds, err := o.q.DueDeliveries(ctx, now, limit)
	if err != nil {
		return nil, err
	}
	out := make([]deliver.Due, len(ds))
	for i, d := range ds {
		out[i] = deliver.Due{ID: d.ID, WebhookID: parcels.WebhookID(d.ID), MonitorID: d.MonitorID, AccountID: d.AccountID, Payload: d.Payload}
	}
	return out, nil
}

func (o outbox) FailingSince(ctx context.Context, monitor uuid.UUID) (time.Time, bool, error) {
	return o.q.FailingSince(ctx, monitor)
}
