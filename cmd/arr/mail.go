package main

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/arr-dev/arr/adapters/mail"
	"github.com/arr-dev/arr/readapi/httpx"
)

// openMailer returns the SMTP mailer of SMTP_URL, or, with no SMTP_URL, the
// mailer that prints each message (sign-in links included) to the log and
// says that no SMTP server is configured.
func openMailer(cfg Config, log *slog.Logger, roles []string) (httpx.Mailer, error) {
	web := slices.ContainsFunc(roles, func(r string) bool { return r != "projections" })
	if !web {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.SMTPURL == "" {
		log.Warn("no SMTP server configured (SMTP_URL unset): sign-in links are printed to this log instead of being mailed")
		return mail.NewLog(log), nil
	}
	m, err := mail.NewSMTP(mail.SMTPConfig{URL: cfg.SMTPURL, From: cfg.MailFrom})
	if err != nil {
		return nil, fmt.Errorf("SMTP_URL: %w", err)
	}
	log.Info("mail goes out through SMTP", "server", m.Addr(), "from", cfg.MailFrom)
	return m, nil
}
