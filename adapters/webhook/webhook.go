package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/arr-dev/arr/adapters/netguard"
)

// Defaults of Config.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxResponseBytes = 64 << 10
)

// secretBytes is the length of a generated secret's key (192 bits; the
// specification asks for 24 to 64 bytes).
const secretBytes = 24

// NewSecret returns a new signing secret: whsec_ and the base64 of 24
// random bytes.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making a webhook secret: %w", err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b), nil
}

// Config configures a Sender.
type Config struct {
	// AllowPrivate lets deliveries go to loopback and private addresses
	// (ARR_WEBHOOK_PRIVATE=allow: tests); otherwise the SSRF guard
	// refuses every address that is not public, after DNS and for every
	// connection.
	AllowPrivate bool
	// Guard is the SSRF guard; nil is netguard.New's default.
	Guard *netguard.Guard
	// Timeout bounds one attempt, from dialing to the answer's headers
	// and the read of its body. Default DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes is how much of an answer's body is read. Default
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// UserAgent is sent with every delivery.
	UserAgent string
}

// Sender delivers webhooks. Safe for concurrent use.
type Sender struct {
	cfg    Config
	client *http.Client
}

// New returns a Sender.
func New(cfg Config) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Guard == nil {
		cfg.Guard = netguard.New(netguard.Config{})
	}
	d := &net.Dialer{Timeout: cfg.Timeout}
	if !cfg.AllowPrivate {
		d.Control = cfg.Guard.Control
	}
	tr := &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: cfg.Timeout, ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second, ForceAttemptHTTP2: true}
	return &Sender{cfg: cfg, client: &http.Client{Transport: tr, Timeout: cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Message is one delivery: its id (the same on every attempt, so the
// subscriber can drop repeats), the time it is signed at and its JSON
// payload.
type Message struct {
	ID      string
	At      time.Time
	Payload []byte
}

// Attempt is what one attempt came to.
type Attempt struct {
	// Status is the answer's HTTP status; 0 when none came.
	Status int
	// Error says why the attempt failed (no answer, or not 2xx); "" when
	// it succeeded.
	Error    string
	Duration time.Duration
}

// OK reports whether the attempt succeeded (a 2xx answer).
func (a Attempt) OK() bool { return a.Error == "" }

// Send makes one attempt to deliver m to target, signed with secret (a
// whsec_ secret). A failed attempt is an Attempt with its Error, not an
// error: error is for what no attempt could be made with (a bad secret or
// URL).
func (s *Sender) Send(ctx context.Context, target, secret string, m Message) (Attempt, error) {
	a, _, err := s.post(ctx, target, secret, m, false)
	return a, err
}

// Exchange is Send that also returns the answer's body (at most
// MaxResponseBytes; nil without a 2xx answer read whole): for a webhook
// whose answer is a verdict (the gateway's webhook guardrail). A body cut
// at MaxResponseBytes is a failed attempt.
func (s *Sender) Exchange(ctx context.Context, target, secret string, m Message) (Attempt, []byte, error) {
	return s.post(ctx, target, secret, m, true)
}

// post makes one attempt; with keep, it returns the 2xx answer's body.
func (s *Sender) post(ctx context.Context, target, secret string, m Message, keep bool) (Attempt, []byte, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return Attempt{}, nil, fmt.Errorf("webhook URL %q: an absolute http(s) URL without user info is required", target)
	}
	// The host as the resolver will read it, checked as the monitor's URL
	// was at creation (netguard.CheckHost: one classification for both),
	// and dialed in its normalized form: no numeric host such as 0x7f.1
	// ever reaches a resolver. Names are checked again, after DNS, for
	// every connection (the dialer's Control).
	host, err := netguard.ParseHost(u.Hostname())
	if err != nil {
		return Attempt{Error: "the URL's host is not valid: " + err.Error()}, nil, nil
	}
	if !s.cfg.AllowPrivate {
		if err := s.cfg.Guard.CheckHost(host); err != nil {
			return Attempt{Error: describe(host, err)}, nil, nil
		}
	}
	u.Host = host.URLHost(u.Port())
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return Attempt{}, nil, fmt.Errorf("webhook secret: %w", err)
	}
	sig, err := wh.Sign(m.ID, m.At, m.Payload)
	if err != nil {
		return Attempt{}, nil, fmt.Errorf("signing webhook %s: %w", m.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(m.Payload))
	if err != nil {
		return Attempt{}, nil, fmt.Errorf("webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(standardwebhooks.HeaderWebhookID, m.ID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(m.At.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	// The delivery is idempotent by its id: saying so lets net/http send
	// it again on a fresh connection when a kept-alive one turns out to
	// have been closed by the server before it read anything (a server's
	// keep-alive timeout, often 5 s, is the first retry's wait).
	req.Header.Set("Idempotency-Key", m.ID)
	if s.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", s.cfg.UserAgent)
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return Attempt{Error: describe(host, err), Duration: time.Since(start)}, nil, nil
	}
	var kept bytes.Buffer
	sink := io.Writer(io.Discard)
	if keep {
		sink = &kept
	}
	// One byte past the bound tells a body that was cut.
	n, rerr := io.Copy(sink, io.LimitReader(resp.Body, s.cfg.MaxResponseBytes+1))
	resp.Body.Close()
	a := Attempt{Status: resp.StatusCode, Duration: time.Since(start)}
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		a.Error = fmt.Sprintf("answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	case rerr != nil:
		a.Error = "the answer's body broke off: " + describe(host, rerr)
	case keep && n > s.cfg.MaxResponseBytes:
		a.Error = fmt.Sprintf("the answer's body is larger than %d bytes", s.cfg.MaxResponseBytes)
	}
	if !keep || !a.OK() {
		return a, nil, nil
	}
	return a, kept.Bytes(), nil
}

// describe says why no answer came, as the account is shown it (the
// deliveries API, the disabling mail): without the URL (a subscriber's URL
// may carry a token in its query) and, when the host is a name, without
// any address: not what the name resolved to (which the guard refused,
// or which did not answer), nor the resolver's own address. The guard's
// reason is shown only for an address the account wrote itself.
func describe(host netguard.Host, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	named := !host.Addr.IsValid()
	var refused *netguard.RefusedError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.As(err, &refused) && named && refused.Host == "":
		return "refused by the SSRF guard: " + host.Name + " resolves to an address that is not public; webhooks go to public addresses only"
	case errors.Is(err, netguard.ErrRefused) && named && refused == nil:
		return "refused by the SSRF guard: the addresses " + host.Name + " resolves to could not be checked"
	case errors.Is(err, netguard.ErrRefused):
		return "refused by the SSRF guard: " + err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within the timeout"
	case errors.As(err, &dnsErr):
		switch {
		case dnsErr.IsNotFound:
			return "the host name could not be resolved: no such host"
		case dnsErr.IsTimeout:
			return "the host name could not be resolved: the look-up timed out"
		}
		return "the host name could not be resolved"
	case errors.As(err, &opErr) && named:
		// "dial tcp 203.0.113.5:443: connect: connection refused" names
		// the resolved address: only the cause below it is shown.
		what := map[string]string{"dial": "could not connect", "read": "reading the answer failed", "write": "sending the request failed"}[opErr.Op]
		if what == "" {
			what = "the connection failed"
		}
		return what + ": " + hideAddresses(innermost(opErr.Err).Error())
	}
	if named {
		return hideAddresses(err.Error())
	}
	return err.Error()
}

// innermost is the last error of err's chain (the system call's errno
// under an *os.SyscallError, say).
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// hideAddresses replaces every address in s (an error's text), with a
// port or not, by "(an address)": a safety net under describe for errors
// it does not know.
func hideAddresses(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		core := strings.TrimRight(strings.TrimLeft(w, "(\"'"), ",;:)\"'")
		_, errAP := netip.ParseAddrPort(core)
		_, errA := netip.ParseAddr(strings.Trim(core, "[]"))
		if core != "" && (errAP == nil || errA == nil) {
			words[i] = strings.Replace(w, core, "(an address)", 1)
		}
	}
	return strings.Join(words, " ")
}

// The retry schedule.
const (
	// FirstRetry is the wait before the first retry; each next wait is
	// Growth times the one before, at most MaxWait.
	FirstRetry = 5 * time.Second
	Growth     = 6
	MaxWait    = 10 * time.Hour
	// GiveUpAfter: no retry starts later than this after the first
	// attempt.
	GiveUpAfter = 24 * time.Hour
)

// NextAttempt is when to retry a delivery whose first attempt was at
// first and which has failed attempts times (1 after the first), and
// false when it is given up: 5 s, 30 s, 3 min, 18 min, 1 h 48 min,
// then every 10 h, none starting more than GiveUpAfter after the first.
func NextAttempt(first time.Time, attempts int) (time.Time, bool) {
	if attempts < 1 {
		return first, true
	}
	at, wait := first, FirstRetry
	for i := 1; i <= attempts; i++ {
		at = at.Add(wait)
		wait = min(wait*Growth, MaxWait)
	}
	if at.Sub(first) > GiveUpAfter {
		return time.Time{}, false
	}
	return at, true
}
