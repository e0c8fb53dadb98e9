package mail

import (
	"context"
	"log/slog"
)

// Log is the mailer used when no SMTP server is configured: it sends
// nothing and writes each message, body included, to the log, saying so.
// Sign-in links it logs are live credentials for 15 minutes; it is meant
// for one machine run by its operator (arr up on a fresh machine).
type Log struct{ log *slog.Logger }

// NewLog returns a Log mailer writing to log (nil discards).
func NewLog(log *slog.Logger) *Log {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Log{log: log}
}

// Send logs the message at warning level, so it shows at every usual level.
func (l *Log) Send(ctx context.Context, to, subject, text string) error {
	l.log.WarnContext(ctx, "no SMTP server configured (set SMTP_URL): this mail was not sent, it is printed here instead",
		"to", to, "subject", subject, "body", text)
	return nil
}
