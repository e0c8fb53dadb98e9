package gateway

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/readapi/httpx"
)

// feedbackRequest is a parsed POST /v1/feedback body.
type feedbackRequest struct {
	AuditHash string
	Rating    float64
	Notes     string
}

// parseFeedback reads a feedback body: {"audit_hash", "rating", "notes"?}.
// The rating's range and the notes' text are the domain's to judge
// (feedback.Submit).
func parseFeedback(r io.Reader) (feedbackRequest, error) {
	var body struct {
		AuditHash *string  `json:"audit_hash"`
		Rating    *float64 `json:"rating"`
		Notes     *string  `json:"notes"`
	}
	raw, err := httpx.ReadJSON(r)
	if err != nil {
		return feedbackRequest{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		if f := httpx.UnknownField(err); f != "" {
			return feedbackRequest{}, domain.Invalid("unknown_field", f, "unknown field %q: the body takes only audit_hash, rating and notes", f)
		}
		return feedbackRequest{}, domain.Invalid("invalid_json", "", "the body must be JSON: {\"audit_hash\": \"…\", \"rating\": 1-5, \"notes\": \"…\"}")
	}
	if body.AuditHash == nil {
		return feedbackRequest{}, domain.Invalid("missing_audit_hash", "audit_hash", "audit_hash is required (routing.audit_hash of the completion)")
	}
	if !audit.ValidHash(*body.AuditHash) {
		return feedbackRequest{}, domain.Invalid("invalid_audit_hash", "audit_hash", "an audit hash is 64 lowercase hex digits (routing.audit_hash)")
	}
	if body.Rating == nil {
		return feedbackRequest{}, domain.Invalid("missing_rating", "rating", "rating is required: a number from 1 (useless) to 5 (excellent)")
	}
	f := feedbackRequest{AuditHash: *body.AuditHash, Rating: *body.Rating}
	if body.Notes != nil {
		f.Notes = *body.Notes
	}
	return f, nil
}
