package deliver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/arr-dev/arr/adapters/webhook"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore"
)

// Defaults of Config.
const (
	DefaultPoll         = time.Second
	DefaultDisableAfter = 72 * time.Hour
	DefaultWorkers      = 8
	// batch is how many due deliveries one pass takes.
	batch = 100
)

// Due is a delivery whose next attempt is due.
type Due struct {
	ID        uuid.UUID
	WebhookID string
	MonitorID uuid.UUID
	AccountID uuid.UUID
	Payload   []byte
	// ResearchJobID is the research job whose result this delivery
	// carries; nil for a monitor's (Config.Targets says where it goes).
	ResearchJobID *uuid.UUID
}

// Target is where, and signed with what, one delivery is sent.
type Target struct {
	URL, Secret string
	AccountID   uuid.UUID
}

// Targets finds the target of deliveries that are not a monitor's (a
// research job's result): false when the delivery is no longer to be sent.
type Targets interface {
	Target(ctx context.Context, x Due) (Target, bool, error)
}

// Outbox reads the deliveries' read model.
type Outbox interface {
	// Due returns at most limit pending deliveries due at now.
	Due(ctx context.Context, now time.Time, limit int) ([]Due, error)
	// FailingSince is when a monitor's current run of failed attempts
	// began; false when there is none.
	FailingSince(ctx context.Context, monitor uuid.UUID) (time.Time, bool, error)
}

// Sender makes one attempt; *webhook.Sender is one.
type Sender interface {
	Send(ctx context.Context, target, secret string, m webhook.Message) (webhook.Attempt, error)
}

// Mailer sends one e-mail.
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// Config configures a Dispatcher.
type Config struct {
	// Store is the event log; required.
	Store commands.Appender
	// Outbox; required.
	Outbox Outbox
	// Sender; required.
	Sender Sender
	// Targets, when set, sends every delivery to the target it names
	// instead of its monitor's (a research job's deliveries); monitors
	// are neither read nor disabled then.
	Targets Targets
	// OpenSecret opens a monitor's sealed secret with its account's data
	// key; required.
	OpenSecret func(ctx context.Context, account uuid.UUID, sealed []byte) (string, error)
	// Mailer and AccountEmail tell an account its monitor was disabled;
	// either nil mails nothing.
	Mailer       Mailer
	AccountEmail func(ctx context.Context, account uuid.UUID) (string, error)
	// Clock; default time.Now.
	Clock func() time.Time
	// Logger; default slog.Default.
	Logger *slog.Logger
	// Poll is how often the outbox is read. Default DefaultPoll.
	Poll time.Duration
	// DisableAfter: a monitor failing this long is disabled. Default
	// DefaultDisableAfter.
	DisableAfter time.Duration
	// Workers bounds the attempts in flight. Default DefaultWorkers.
	Workers int
}

// Dispatcher sends due deliveries.
type Dispatcher struct {
	cfg Config
	reg *domain.Registry
	// succeeded holds, per monitor, when this process last recorded a
	// delivery of it: the read model FailingSince reads may not have
	// applied that attempt yet.
	mu        sync.Mutex
	succeeded map[uuid.UUID]time.Time
}

// New checks cfg and returns a Dispatcher.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Store == nil || cfg.Outbox == nil || cfg.Sender == nil || cfg.OpenSecret == nil {
		return nil, errors.New("webhook dispatcher: nil dependency")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.DisableAfter <= 0 {
		cfg.DisableAfter = DefaultDisableAfter
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	return &Dispatcher{cfg: cfg, reg: domain.NewRegistry(records.Events()), succeeded: map[uuid.UUID]time.Time{}}, nil
}

// Run dispatches until ctx ends: a pass every Poll. Run it in one
// process at a time (cmd/arr wraps it in projections.Exclusive).
func (d *Dispatcher) Run(ctx context.Context) error {
	d.cfg.Logger.Info("webhook dispatcher running")
	tick := time.NewTicker(d.cfg.Poll)
	defer tick.Stop()
	for {
		if err := d.Pass(ctx); err != nil && ctx.Err() == nil {
			d.cfg.Logger.Warn("webhook dispatch pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Pass attempts every delivery due now (at most one batch), Workers at a
// time, and returns when all are recorded.
func (d *Dispatcher) Pass(ctx context.Context) error {
	due, err := d.cfg.Outbox.Due(ctx, d.cfg.Clock(), batch)
	if err != nil {
		return err
	}
	g := errgroup.Group{}
	g.SetLimit(d.cfg.Workers)
	for _, x := range due {
		g.Go(func() error {
			if err := d.attempt(ctx, x); err != nil && ctx.Err() == nil {
				d.cfg.Logger.Warn("webhook delivery", "delivery", x.ID, "monitor", x.MonitorID, "err", err)
			}
			return nil
		})
	}
	return g.Wait()
}

// history is what a delivery's stream says of it.
type history struct {
	attempts int
	version  uint64
	first    time.Time
	done     bool
	next     *time.Time
}

func (d *Dispatcher) history(ctx context.Context, id uuid.UUID) (history, error) {
	evs, err := d.cfg.Store.ReadStream(ctx, records.DeliveryStreamID(id), eventstore.ReadStreamOptions{Limit: 1000})
	if err != nil {
		return history{}, fmt.Errorf("reading delivery %s: %w", id, err)
	}
	var h history
	for _, e := range evs {
		p, err := d.reg.Decode(e.Type, e.SchemaVersion, e.Data)
		if err != nil {
			return h, fmt.Errorf("reading delivery %s: %w", id, err)
		}
		a, ok := p.(*records.WebhookDeliveryAttempted)
		if !ok {
			continue
		}
		if h.attempts == 0 {
			h.first = a.AttemptedAt
		}
		h.attempts, h.version, h.next = a.Attempt, e.StreamVersion, a.NextAttemptAt
		h.done = a.Outcome != records.OutcomeRetrying
	}
	return h, nil
}

// monitor is what a monitor's stream says of it.
type monitor struct {
	created *records.MonitorCreated
	stopped bool
	version uint64
}

func (d *Dispatcher) monitor(ctx context.Context, id uuid.UUID) (monitor, error) {
	evs, err := d.cfg.Store.ReadStream(ctx, records.MonitorStreamID(id), eventstore.ReadStreamOptions{Limit: 1000})
	if err != nil {
		return monitor{}, fmt.Errorf("reading monitor %s: %w", id, err)
	}
	var m monitor
	for _, e := range evs {
		p, err := d.reg.Decode(e.Type, e.SchemaVersion, e.Data)
		if err != nil {
			return m, fmt.Errorf("reading monitor %s: %w", id, err)
		}
		m.version = e.StreamVersion
		switch v := p.(type) {
		case *records.MonitorCreated:
			m.created = v
		case *records.MonitorDeleted, *records.MonitorDisabled:
			m.stopped = true
		}
	}
	return m, nil
}

// attempt makes the next attempt of x, if its stream says one is due.
func (d *Dispatcher) attempt(ctx context.Context, x Due) error {
	h, err := d.history(ctx, x.ID)
	if err != nil {
		return err
	}
	now := d.cfg.Clock()
	if h.done || (h.next != nil && h.next.After(now)) {
		return nil // the read model has not caught up with the log yet
	}
	t, m, ok, err := d.target(ctx, x)
	if err != nil || !ok {
		return err
	}
	a, err := d.cfg.Sender.Send(ctx, t.URL, t.Secret, webhook.Message{ID: x.WebhookID, At: now, Payload: x.Payload})
	if err != nil {
		return err
	}
	if h.attempts == 0 {
		h.first = now
	}
	ev := &records.WebhookDeliveryAttempted{DeliveryID: x.ID, MonitorID: x.MonitorID, ResearchJobID: x.ResearchJobID, AccountID: t.AccountID,
		Attempt: h.attempts + 1, AttemptedAt: now.UTC(), Status: a.Status, Error: a.Error, DurationMS: a.Duration.Milliseconds(),
		Outcome: records.OutcomeDelivered}
	if !a.OK() {
		ev.Outcome = records.OutcomeFailed
		if next, ok := webhook.NextAttempt(h.first, h.attempts+1); ok {
			next = next.UTC()
			ev.Outcome, ev.NextAttemptAt = records.OutcomeRetrying, &next
		}
	}
	expected := eventstore.NoStream()
	if h.attempts > 0 {
		expected = eventstore.Exact(h.version)
	}
	if err := d.append(ctx, records.DeliveryStreamID(x.ID), expected, ev); err != nil {
		if errors.Is(err, domain.ErrConcurrency) {
			return nil // another dispatcher recorded this attempt
		}
		return fmt.Errorf("recording attempt %d: %w", ev.Attempt, err)
	}
	if m == nil {
		return nil
	}
	if a.OK() {
		d.mu.Lock()
		d.succeeded[x.MonitorID] = now
		d.mu.Unlock()
		return nil
	}
	return d.disableIfFailing(ctx, *m, h.first, now)
}

// target is where x goes: Config.Targets's answer, or x's monitor's URL
// and secret (with the monitor, which a failing delivery may disable);
// false when it is not to be sent.
func (d *Dispatcher) target(ctx context.Context, x Due) (Target, *monitor, bool, error) {
	if d.cfg.Targets != nil {
		t, ok, err := d.cfg.Targets.Target(ctx, x)
		return t, nil, ok, err
	}
	m, err := d.monitor(ctx, x.MonitorID)
	if err != nil {
		return Target{}, nil, false, err
	}
	if m.created == nil || m.stopped {
		return Target{}, nil, false, nil // its MonitorDeleted or MonitorDisabled cancels it in the read model
	}
	secret, err := d.cfg.OpenSecret(ctx, m.created.AccountID, m.created.Secret)
	if err != nil {
		return Target{}, nil, false, fmt.Errorf("opening the monitor's secret: %w", err)
	}
	return Target{URL: m.created.URL, Secret: secret, AccountID: m.created.AccountID}, &m, true, nil
}

// disableIfFailing disables m when its attempts have failed for
// DisableAfter, and mails its account.
func (d *Dispatcher) disableIfFailing(ctx context.Context, m monitor, first, now time.Time) error {
	since, ok, err := d.cfg.Outbox.FailingSince(ctx, m.created.MonitorID)
	if err != nil {
		return err
	}
	if !ok || first.Before(since) {
		since = first
	}
	d.mu.Lock()
	last, seen := d.succeeded[m.created.MonitorID]
	d.mu.Unlock()
	if seen && last.After(since) {
		since = now // a delivery succeeded after the failures the read model has
	}
	if !ShouldDisable(since, now, d.cfg.DisableAfter) {
		return nil
	}
	reason := fmt.Sprintf("its webhook has failed since %s (for more than %s) without a delivery succeeding", since.UTC().Format(time.RFC3339), d.cfg.DisableAfter)
	ev := &records.MonitorDisabled{MonitorID: m.created.MonitorID, AccountID: m.created.AccountID, Reason: reason,
		FailingSince: since.UTC(), DisabledAt: now.UTC()}
	if err := d.append(ctx, records.MonitorStreamID(m.created.MonitorID), eventstore.Exact(m.version), ev); err != nil {
		if errors.Is(err, domain.ErrConcurrency) {
			return nil // deleted, or disabled by another attempt
		}
		return fmt.Errorf("disabling monitor %s: %w", m.created.MonitorID, err)
	}
	d.cfg.Logger.Warn("list monitor disabled", "monitor", m.created.MonitorID, "failing_since", since)
	d.mail(ctx, m.created, reason)
	return nil
}

// ShouldDisable reports whether a monitor failing since since is to be
// disabled at now.
func ShouldDisable(since, now time.Time, after time.Duration) bool {
	return !since.IsZero() && now.Sub(since) >= after
}

func (d *Dispatcher) append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, e domain.Event) error {
	ne, err := eventstore.EncodeAll(commands.NewMetadata("records:webhooks", ""), e)
	if err != nil {
		return err
	}
	_, err = d.cfg.Store.Append(ctx, stream, expected, ne...)
	return err
}

// mail tells the account its monitor was disabled.
func (d *Dispatcher) mail(ctx context.Context, m *records.MonitorCreated, reason string) {
	if d.cfg.Mailer == nil || d.cfg.AccountEmail == nil {
		return
	}
	to, err := d.cfg.AccountEmail(ctx, m.AccountID)
	if err != nil || to == "" {
		d.cfg.Logger.Warn("no address to mail a disabled monitor to", "monitor", m.MonitorID, "err", err)
		return
	}
	body := fmt.Sprintf("arr disabled your list monitor %s (list %s): %s.\n\n"+
		"No more webhooks are sent for it; deliveries still pending were cancelled. "+
		"GET /api/v1/monitors/%s/deliveries shows every attempt and what the endpoint answered. "+
		"When the endpoint works again, create a new monitor (arr monitors create, or the account's lists page).\n",
		m.MonitorID, m.ListID, reason, m.MonitorID)
	if err := d.cfg.Mailer.Send(ctx, to, "arr: a list monitor was disabled", body); err != nil {
		d.cfg.Logger.Warn("mailing a disabled monitor failed", "monitor", m.MonitorID, "err", err)
	}
}
