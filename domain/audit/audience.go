package audit

import "github.com/google/uuid"

// Audience is who reads an audit entry, which decides what of it they see.
type Audience string

// The audiences of an entry.
const (
	// Public is anyone holding the hash: the entry's place in the chain
	// and payload_sha256, never the payload.
	Public Audience = "public"
	// Owner is an API key of the account that made the completion.
	Owner Audience = "owner"
	// Auditor is the operator's audit key: every entry with its payload.
	Auditor Audience = "auditor"
)

// AudienceOf decides who reads an entry of account owner: the auditor if
// the reader holds the operator's audit key, the owner if the reader's
// account (uuid.Nil for none) is the entry's, else the public.
func AudienceOf(owner, reader uuid.UUID, auditor bool) Audience {
	switch {
	case auditor:
		return Auditor
	case reader != uuid.Nil && reader == owner:
		return Owner
	default:
		return Public
	}
}

// SeesPayload reports whether the audience sees the payload (account, key,
// request, model, tier, vendor, tokens, cost and timing).
func (a Audience) SeesPayload() bool { return a == Owner || a == Auditor }
