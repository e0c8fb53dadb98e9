package httpx

import "github.com/arr-dev/arr/readapi/app"

// Mailer sends one plain-text e-mail. The account pages use it for sign-in
// links; cmd/arr passes an SMTP mailer, or a mailer that writes to the log
// when no SMTP_URL is set.
type Mailer = app.Mailer
