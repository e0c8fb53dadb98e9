// Package eventlog holds the facts about the event log itself that an
// operator decides and an auditor must be able to see in the log: which
// of its kept signed heads the operator disowned, and why. The rule that
// decides which heads may be disowned (those the log's key did not sign)
// is the caller's, with the log's key; this package names the event and
// validates its text.
package eventlog
