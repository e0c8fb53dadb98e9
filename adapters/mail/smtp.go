package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"time"
)

// SMTPConfig configures an SMTP mailer.
type SMTPConfig struct {
	// URL is smtp://[user[:password]@]host[:port] (STARTTLS when the server
	// offers it; port 587 by default) or smtps://… (TLS from the first
	// byte; port 465 by default). Credentials are sent with AUTH PLAIN,
	// which net/smtp allows only over TLS or to a loopback host.
	URL string
	// From is the sender, e.g. "arr <no-reply@example.com>".
	From string
	// Timeout bounds one delivery: connect, TLS, and the whole SMTP
	// exchange. Default 20s.
	Timeout time.Duration
	// HeloName is the name sent in EHLO. Default "localhost".
	HeloName string
	// TLS is the base TLS configuration (ServerName is set from the URL).
	// Nil uses the system roots.
	TLS *tls.Config
}

// SMTP delivers mail to one SMTP server. Each Send opens its own
// connection, so it is safe for concurrent use.
type SMTP struct {
	cfg      SMTPConfig
	addr     string
	host     string
	implicit bool
	user     *url.Userinfo
	sender   string // envelope sender: the bare address of From
}

// NewSMTP validates the configuration.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, errors.New("SMTP_URL is not a URL (expected smtp://user:pass@host:587)")
	}
	s := &SMTP{cfg: cfg, user: u.User}
	port := u.Port()
	switch u.Scheme {
	case "smtp":
		if port == "" {
			port = "587"
		}
	case "smtps":
		s.implicit = true
		if port == "" {
			port = "465"
		}
	default:
		return nil, fmt.Errorf("SMTP_URL must start with smtp:// or smtps://, not %q", u.Scheme+"://")
	}
	s.host = u.Hostname()
	if s.host == "" {
		return nil, errors.New("SMTP_URL has no host (expected smtp://user:pass@host:587)")
	}
	s.addr = net.JoinHostPort(s.host, port)
	if s.cfg.From == "" {
		return nil, errors.New("mail: no sender address")
	}
	from, err := mail.ParseAddress(s.cfg.From)
	if err != nil {
		return nil, fmt.Errorf("mail: sender %q: %w", s.cfg.From, err)
	}
	s.sender = from.Address
	if s.cfg.Timeout <= 0 {
		s.cfg.Timeout = 20 * time.Second
	}
	if s.cfg.HeloName == "" {
		s.cfg.HeloName = "localhost"
	}
	return s, nil
}

// Addr is the server's host:port (no credentials), for logs.
func (s *SMTP) Addr() string { return s.addr }

// Send delivers one plain-text message to one recipient.
func (s *SMTP) Send(ctx context.Context, to, subject, text string) error {
	msg, err := compose(s.cfg.From, to, subject, text, time.Now())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.deliver(ctx, to, msg); err != nil {
		return fmt.Errorf("sending mail through %s: %w", s.addr, err)
	}
	return nil
}

func (s *SMTP) tlsConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.cfg.TLS != nil {
		c = s.cfg.TLS.Clone()
	}
	c.ServerName = s.host
	return c
}

func (s *SMTP) deliver(ctx context.Context, to string, msg []byte) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	// A cancelled context closes the connection, ending any blocked step.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if s.implicit {
		tc := tls.Client(conn, s.tlsConfig())
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return err
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if err := c.Hello(s.cfg.HeloName); err != nil {
		return err
	}
	if !s.implicit {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tlsConfig()); err != nil {
				return fmt.Errorf("STARTTLS: %w", err)
			}
		}
	}
	if s.user != nil && s.user.Username() != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("SMTP_URL has credentials but the server offers no AUTH")
		}
		pass, _ := s.user.Password()
		if err := c.Auth(smtp.PlainAuth("", s.user.Username(), pass, s.host)); err != nil {
			return fmt.Errorf("AUTH: %w", err)
		}
	}
	if err := c.Mail(s.sender); err != nil {
		return fmt.Errorf("MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	return c.Quit()
}
