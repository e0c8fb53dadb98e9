package spend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/eventstore"
)

// thresholds records and mails each budget threshold the settled request
// crossed: its use went from after-actual to after. The event's stream
// takes one event, so a threshold is recorded (and mailed) once per
// budget and period even if concurrent settles of several processes both
// see it crossed (a budget lowered mid-period, say).
func (g *Guard) thresholds(ctx context.Context, caller complete.Caller, asks []ask, after []int64) {
	for i, a := range asks {
		if a.kind != kindBudget && a.kind != kindAccountBudget {
			continue
		}
		for _, pct := range account.Crossed(account.MicroUSD(after[i]-a.actual), account.MicroUSD(after[i]), account.MicroUSD(a.limit)) {
			e := &usage.BudgetThresholdCrossed{AccountID: caller.AccountID, Scope: "account", Period: a.period, PeriodStart: a.start.UTC(),
				ThresholdPercent: pct, SpentMicroUSD: after[i], BudgetMicroUSD: a.limit, CrossedAt: g.cfg.Clock().UTC()}
			id := caller.AccountID
			if a.kind == kindBudget {
				key := caller.KeyID
				e.KeyID, e.Scope, id = &key, "key", key
			}
			if err := g.record(ctx, e, id); err != nil {
				g.cfg.Logger.Error("recording a budget threshold failed", "scope", e.Scope, "id", id, "threshold", pct, "err", err)
				continue
			}
			// Mail off the request's path: an SMTP server's delay is not the caller's.
			go func() {
				mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				g.mail(mctx, caller, e)
			}()
		}
	}
}

// errRecorded says the threshold's stream already holds its event.
var errRecorded = errors.New("already recorded")

// record appends e to its own stream, which must be empty.
func (g *Guard) record(ctx context.Context, e *usage.BudgetThresholdCrossed, id uuid.UUID) error {
	evs, err := eventstore.EncodeAll(commands.NewMetadata("gateway:spend", ""), e)
	if err != nil {
		return err
	}
	stream := usage.ThresholdStreamID(e.Scope, id, e.Period, e.PeriodStart, e.ThresholdPercent)
	_, err = g.cfg.Store.Append(ctx, stream, eventstore.NoStream(), evs...)
	if errors.Is(err, domain.ErrConcurrency) || errors.Is(err, domain.ErrConflict) {
		return errRecorded
	}
	return err
}

// mail tells the account that a budget crossed a threshold.
func (g *Guard) mail(ctx context.Context, caller complete.Caller, e *usage.BudgetThresholdCrossed) {
	if g.cfg.Mailer == nil || caller.Email == "" {
		return
	}
	whose := "Your account's shared budget"
	if e.Scope == "key" {
		whose = fmt.Sprintf("The budget of your gateway key %s", caller.KeyID)
	}
	subject := fmt.Sprintf("arr: %d%% of a gateway budget spent", e.ThresholdPercent)
	body := fmt.Sprintf("%s has reached %d%% for the %s that began %s: $%s spent of $%s.\n",
		whose, e.ThresholdPercent, e.Period, e.PeriodStart.Format("2006-01-02"),
		account.MicroUSD(e.SpentMicroUSD).USD(), account.MicroUSD(e.BudgetMicroUSD).USD())
	if e.ThresholdPercent >= 100 {
		body += "Requests that could cost more than what is left are refused (429 budget_exceeded) until the period ends or the budget is raised.\n"
	}
	if err := g.cfg.Mailer.Send(ctx, caller.Email, subject, body); err != nil {
		g.cfg.Logger.Warn("mailing a budget threshold failed", "threshold", e.ThresholdPercent, "err", err)
	}
}
