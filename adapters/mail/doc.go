// Package mail sends arr's e-mail (sign-in links). SMTP delivers it to an
// SMTP server named by an smtp:// or smtps:// URL, upgrading to TLS with
// STARTTLS whenever the server offers it; Log writes each message to the
// log instead, for machines with no SMTP server configured. Both are safe
// for concurrent use.
package mail
