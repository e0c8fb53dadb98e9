package commands

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/netguard"
	"github.com/arr-dev/arr/adapters/webhook"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore"
)

// MaxMonitorURLChars bounds a monitor's webhook URL.
const MaxMonitorURLChars = 2000

// CreateMonitor makes an account watch one of its lists with a webhook.
type CreateMonitor struct {
	AccountID uuid.UUID
	ListID    uuid.UUID
	URL       string
	// Layers is a comma-separated layers filter; empty: every layer.
	Layers   string
	Metadata eventstore.Metadata
}

// CreatedMonitor is the result of CreateMonitor. Secret is the monitor's
// whsec_ signing secret in clear: shown once, at creation.
type CreatedMonitor struct {
	MonitorID uuid.UUID `json:"monitor_id"`
	ListID    uuid.UUID `json:"list_id"`
	URL       string    `json:"url"`
	Layers    []string  `json:"layers"`
	Secret    string    `json:"secret"`
	Position  uint64    `json:"position"`
}

// CreateMonitorHandler handles CreateMonitor: it checks the URL (absolute
// http(s), no user info; its host read as the resolver will,
// netguard.ParseHost, and refused unless private webhooks are allowed when
// the delivery guard would refuse it, netguard.Guard.CheckHost; stored
// normalized), the layers and that the list is the account's
// (from the list's stream), makes a secret, seals it with the account's
// data key and records MonitorCreated.
type CreateMonitorHandler struct {
	store        Appender
	keys         ContactKeys
	clock        Clock
	allowPrivate bool
	guard        *netguard.Guard
}

// NewCreateMonitorHandler refuses nil dependencies.
func NewCreateMonitorHandler(store Appender, keys ContactKeys, clock Clock, allowPrivate bool) (*CreateMonitorHandler, error) {
	if store == nil || keys == nil || clock == nil {
		return nil, errors.New("create monitor: nil dependency")
	}
	return &CreateMonitorHandler{store: store, keys: keys, clock: clock, allowPrivate: allowPrivate, guard: netguard.New(netguard.Config{})}, nil
}

// Handle creates the monitor.
func (h *CreateMonitorHandler) Handle(ctx context.Context, c CreateMonitor) (CreatedMonitor, error) {
	if c.AccountID == uuid.Nil {
		return CreatedMonitor{}, domain.Invalid("account_required", "account", "a monitor belongs to an account")
	}
	target, err := h.checkURL(c.URL)
	if err != nil {
		return CreatedMonitor{}, err
	}
	layers, err := records.ParseLayers(c.Layers)
	if err != nil {
		return CreatedMonitor{}, err
	}
	keys := make([]string, len(layers))
	for i, l := range layers {
		keys[i] = string(l)
	}
	if err := h.ownList(ctx, c.AccountID, c.ListID); err != nil {
		return CreatedMonitor{}, err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return CreatedMonitor{}, err
	}
	sealer, err := h.keys.Sealer(ctx, c.AccountID)
	if err != nil {
		return CreatedMonitor{}, fmt.Errorf("create monitor: %w", err)
	}
	sealed, err := sealer.Seal([]byte(secret))
	if err != nil {
		return CreatedMonitor{}, fmt.Errorf("sealing the monitor's secret: %w", err)
	}
	id := uuid.New()
	ne, err := eventstore.EncodeAll(c.Metadata, &records.MonitorCreated{MonitorID: id, AccountID: c.AccountID, ListID: c.ListID,
		URL: target, Layers: keys, Secret: sealed, CreatedAt: h.clock().UTC()})
	if err != nil {
		return CreatedMonitor{}, err
	}
	res, err := h.store.Append(ctx, records.MonitorStreamID(id), eventstore.NoStream(), ne...)
	if err != nil {
		return CreatedMonitor{}, fmt.Errorf("create monitor: %w", err)
	}
	return CreatedMonitor{MonitorID: id, ListID: c.ListID, URL: target, Layers: keys, Secret: secret, Position: res.LastPosition}, nil
}

// checkURL checks a webhook URL and returns it as it will be used.
func (h *CreateMonitorHandler) checkURL(raw string) (string, error) {
	return checkWebhookURL(h.guard, h.allowPrivate, raw)
}

// checkWebhookURL checks a webhook URL (a monitor's, a guardrail's) and
// returns it as it will be used: absolute http(s), no user info or
// fragment, its host read as the resolver will and, unless allowPrivate,
// one the delivery's SSRF guard lets through.
func checkWebhookURL(guard *netguard.Guard, allowPrivate bool, raw string) (string, error) {
	bad := func(format string, a ...any) (string, error) {
		return "", domain.Invalid("invalid_url", "url", format, a...)
	}
	raw = strings.TrimSpace(raw)
	if raw == "" || !utf8.ValidString(raw) || len(raw) > MaxMonitorURLChars {
		return bad("url is required: the absolute http(s) URL deliveries are POSTed to, at most %d characters", MaxMonitorURLChars)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return bad("url must be an absolute http(s) URL, like https://example.com/hooks/arr; got %q", raw)
	}
	if u.User != nil {
		return bad("url must not hold user info (put a token in the path or query instead)")
	}
	if u.Fragment != "" {
		return bad("url must not hold a fragment")
	}
	// The host as the resolver will read it (netguard.ParseHost), and
	// the same check the delivery makes before it dials (CheckHost).
	host, err := netguard.ParseHost(u.Hostname())
	if err != nil {
		return bad("url's host is not valid: %v", err)
	}
	if !allowPrivate {
		if err := guard.CheckHost(host); err != nil {
			var re *netguard.RefusedError
			if errors.As(err, &re) && !host.Addr.IsValid() {
				return bad("url's host %s is this machine (%s); webhooks go to public addresses only", u.Hostname(), re.Reason)
			}
			return bad("url's host %s is the address %s, which is not public (%v); webhooks go to public addresses only", u.Hostname(), host, err)
		}
	}
	port := u.Port()
	if port == "0" {
		return bad("url's port 0 is not a port")
	}
	// Stored normalized: an address as its canonical form, so no resolver
	// ever reads 0x7f.1 or 2130706433 (Go's would ask DNS for it).
	u.Host = host.URLHost(port)
	return u.String(), nil
}

// ownList checks that list is one of account's lists, from its stream
// (another account's list reads as missing).
func (h *CreateMonitorHandler) ownList(ctx context.Context, account, list uuid.UUID) error {
	missing := domain.NotFound("list_not_found", "no list %s in this account", list)
	if list == uuid.Nil {
		return domain.Invalid("list_required", "list", "a monitor watches one of the account's lists: give its id")
	}
	evs, err := h.store.ReadStream(ctx, records.ListStreamID(list), eventstore.ReadStreamOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("reading list %s: %w", list, err)
	}
	if len(evs) == 0 {
		return missing
	}
	p, err := domain.NewRegistry(records.Events()).Decode(evs[0].Type, evs[0].SchemaVersion, evs[0].Data)
	if err != nil {
		return fmt.Errorf("reading list %s: %w", list, err)
	}
	if li, ok := p.(*records.ListImported); !ok || li.AccountID != account {
		return missing
	}
	return nil
}

// DeleteMonitor stops one of an account's monitors.
type DeleteMonitor struct {
	AccountID uuid.UUID
	MonitorID uuid.UUID
	Metadata  eventstore.Metadata
}

// DeleteMonitorHandler handles DeleteMonitor. Deleting a deleted monitor
// succeeds and appends nothing (Position 0); another account's monitor
// reads as missing.
type DeleteMonitorHandler struct {
	store Appender
	clock Clock
}

// NewDeleteMonitorHandler refuses nil dependencies.
func NewDeleteMonitorHandler(store Appender, clock Clock) (*DeleteMonitorHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("delete monitor: nil dependency")
	}
	return &DeleteMonitorHandler{store: store, clock: clock}, nil
}

// Handle deletes the monitor and returns the position of MonitorDeleted.
func (h *DeleteMonitorHandler) Handle(ctx context.Context, c DeleteMonitor) (uint64, error) {
	stream := records.MonitorStreamID(c.MonitorID)
	evs, err := h.store.ReadStream(ctx, stream, eventstore.ReadStreamOptions{Limit: eventstore.DefaultBatch})
	if err != nil {
		return 0, fmt.Errorf("reading monitor %s: %w", c.MonitorID, err)
	}
	missing := domain.NotFound("monitor_not_found", "no monitor %s in this account", c.MonitorID)
	if len(evs) == 0 {
		return 0, missing
	}
	reg := domain.NewRegistry(records.Events())
	for _, e := range evs {
		p, err := reg.Decode(e.Type, e.SchemaVersion, e.Data)
		if err != nil {
			return 0, fmt.Errorf("reading monitor %s: %w", c.MonitorID, err)
		}
		switch v := p.(type) {
		case *records.MonitorCreated:
			if v.AccountID != c.AccountID {
				return 0, missing
			}
		case *records.MonitorDeleted:
			return 0, nil
		}
	}
	ne, err := eventstore.EncodeAll(c.Metadata, &records.MonitorDeleted{MonitorID: c.MonitorID, AccountID: c.AccountID, DeletedAt: h.clock().UTC()})
	if err != nil {
		return 0, err
	}
	res, err := h.store.Append(ctx, stream, eventstore.Exact(evs[len(evs)-1].StreamVersion), ne...)
	if err != nil {
		return 0, fmt.Errorf("delete monitor: %w", err)
	}
	return res.LastPosition, nil
}
