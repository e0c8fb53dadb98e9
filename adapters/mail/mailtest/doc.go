// Package mailtest runs a real SMTP server (github.com/emersion/go-smtp) on
// loopback for tests: it accepts every message, optionally over STARTTLS or
// implicit TLS and with AUTH PLAIN, and hands the received messages to the
// test decoded, so a test can read a sign-in link out of a mail.
package mailtest
