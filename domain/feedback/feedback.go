package feedback

import (
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/domain/text"
)

// MaxNotes bounds the notes of one rating, in characters.
const MaxNotes = 2000

// FeedbackSubmitted rates the completion with AuditHash. Tier, Model and
// Difficulty are copied from the completion's audit entry, so the read
// model needs nothing else. A later rating of the same completion replaces
// the earlier one.
type FeedbackSubmitted struct {
	// AuditHash is the rated completion's audit hash (64 hex digits, the
	// hash of its CompletionRecorded entry).
	AuditHash string `json:"audit_hash"`
	// AccountID is the rating account, the completion's own.
	AccountID uuid.UUID `json:"account_id"`
	// KeyID is the key that submitted the rating.
	KeyID uuid.UUID `json:"key_id"`
	// Tier is the tier that answered (copied from the audit entry).
	Tier string `json:"tier"`
	// Model is the model that answered (copied from the audit entry).
	Model string `json:"model"`
	// Difficulty is the request's difficulty score in [0, 1] (copied from
	// the audit entry).
	Difficulty float64 `json:"difficulty"`
	// Rating is from 1 (useless) to 5 (excellent).
	Rating float64 `json:"rating"`
	// Notes is the rater's free text (at most MaxNotes characters).
	Notes string `json:"notes"`
	// SubmittedAt is when the rating was given (UTC).
	SubmittedAt time.Time `json:"submitted_at"`
}

func (FeedbackSubmitted) EventType() string  { return "FeedbackSubmitted" }
func (FeedbackSubmitted) SchemaVersion() int { return 1 }

// StreamID is the stream of the ratings of one completion.
func StreamID(auditHash string) string { return "feedback-" + auditHash }

// Submit decides a rating of entry c (whose hash is hash) by accountID.
// The completion must be the caller's own (else ErrNotFound, as if it did
// not exist) and a chat completion (an embeddings entry is ErrInvalid:
// routing learns nothing from it); rating must be from 1 to 5.
func Submit(hash string, c audit.Completion, accountID, keyID uuid.UUID, rating float64, notes string, at time.Time) (*FeedbackSubmitted, error) {
	if !audit.ValidHash(hash) {
		return nil, domain.Invalid("invalid_audit_hash", "audit_hash", "audit_hash must be the 64 hex digits of routing.audit_hash")
	}
	if c.AccountID != accountID {
		return nil, domain.NotFound("audit_entry_not_found", "no completion of yours has the audit hash %s", hash)
	}
	if c.Operation == audit.OperationEmbeddings {
		return nil, domain.Invalid("not_a_completion", "audit_hash", "the audit hash %s is an embeddings request: feedback rates chat completions, which routing learns from", hash)
	}
	if math.IsNaN(rating) || rating < routing.MinRating || rating > routing.MaxRating {
		return nil, domain.Invalid("invalid_rating", "rating", "rating must be a number from %g (useless) to %g (excellent); got %v", routing.MinRating, routing.MaxRating, rating)
	}
	if err := text.Check("notes", notes, MaxNotes); err != nil {
		return nil, err
	}
	return &FeedbackSubmitted{AuditHash: hash, AccountID: accountID, KeyID: keyID, Tier: c.Tier, Model: c.Model,
		Difficulty: c.Difficulty, Rating: rating, Notes: notes, SubmittedAt: at.UTC()}, nil
}

// Events lists constructors for every event of this package.
func Events() []func() domain.Event {
	return []func() domain.Event{func() domain.Event { return &FeedbackSubmitted{} }}
}
