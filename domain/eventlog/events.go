package eventlog

import (
	"time"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
)

// StreamID is the stream of the operator's decisions about the log's
// signed heads.
const StreamID = "event-log-heads"

// MaxReasonChars caps the reason an operator gives.
const MaxReasonChars = 1000

// LogHeadsDisowned: DisownedBy disowned kept signed heads of the event log
// that the log's key did not sign (a process with another signing key, or
// someone writing to the database, made them). From then on they are not
// served, used or extended; they stay in the database as they were, and
// this event, itself a leaf of the log's tree, says what was done.
type LogHeadsDisowned struct {
	// Heads are the heads disowned, smallest tree size first.
	Heads []DisownedHead `json:"heads"`
	// LogKeyFingerprint is the fingerprint of the log's signing key, as
	// the database records it: sha256: and the hex of SHA-256 of its
	// Ed25519 public key.
	LogKeyFingerprint string `json:"log_key_fingerprint"`
	// Reason is why, in the operator's words.
	Reason string `json:"reason"`
	// DisownedBy is who disowned them (arr events disown-heads --by, or
	// the operating-system user).
	DisownedBy string `json:"disowned_by"`
	// DisownedAt is when (UTC).
	DisownedAt time.Time `json:"disowned_at"`
}

// DisownedHead is one disowned head as it was kept.
type DisownedHead struct {
	// Size is the head's tree size.
	Size uint64 `json:"size"`
	// RootHash is the root hash it signed, in hex.
	RootHash string `json:"root_hash"`
	// VerifierKey is the note verifier key kept with it (the key it
	// claims to be signed with).
	VerifierKey string `json:"verifier_key"`
	// KeyFingerprint is the fingerprint of that key's public key; empty
	// when the verifier key cannot be read.
	KeyFingerprint string `json:"key_fingerprint"`
	// Signed says whether the head's signature verifies under that key
	// (false: a forged or damaged head).
	Signed bool `json:"signed"`
}

func (LogHeadsDisowned) EventType() string  { return "LogHeadsDisowned" }
func (LogHeadsDisowned) SchemaVersion() int { return 1 }

// Disown returns the event that disowns heads for reason, after checking
// the text the operator gave.
func Disown(heads []DisownedHead, logKeyFingerprint, reason, by string, at time.Time) (*LogHeadsDisowned, error) {
	if len(heads) == 0 {
		return nil, domain.Invalid("no_heads", "heads", "no head to disown")
	}
	if reason == "" {
		return nil, domain.Invalid("reason_required", "reason", "say why the heads are disowned (--reason): it is recorded in the log")
	}
	if err := text.Check("reason", reason, MaxReasonChars); err != nil {
		return nil, err
	}
	if err := text.Check("by", by, 200); err != nil {
		return nil, err
	}
	return &LogHeadsDisowned{Heads: heads, LogKeyFingerprint: logKeyFingerprint, Reason: reason, DisownedBy: by, DisownedAt: at.UTC()}, nil
}

// Events lists constructors for every event of this package, for a
// domain.Registry.
func Events() []func() domain.Event {
	return []func() domain.Event{func() domain.Event { return &LogHeadsDisowned{} }}
}
