package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/arr-dev/arr/projections/auditentries"
	"github.com/arr-dev/arr/projections/gatewayusage"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/readapi/httpx"
)

// caughtUp waits (bounded) until projection has applied the log's current
// head, so a hash or rating just returned is visible.
func (s *completer) caughtUp(ctx context.Context, projection string) error {
	if s.d.App.Head == nil || s.d.App.WaitFor == nil {
		return nil
	}
	head, err := s.d.App.Head(ctx)
	if err != nil {
		return err
	}
	return s.d.App.WaitFor(ctx, projection, head)
}

// entry reads an audit entry; a hash not found is looked for again once
// the read model has caught up with the log.
func (s *completer) entry(ctx context.Context, hash string) (auditentries.AuditEntry, error) {
	if !audit.ValidHash(hash) {
		return auditentries.AuditEntry{}, domain.Invalid("invalid_audit_hash", "hash", "an audit hash is 64 lowercase hex digits (routing.audit_hash)")
	}
	e, err := s.app.Queries.Audit.Get(ctx, hash)
	if errors.Is(err, domain.ErrNotFound) {
		if werr := s.caughtUp(ctx, auditentries.Name); werr == nil {
			e, err = s.app.Queries.Audit.Get(ctx, hash)
		}
	}
	return e, err
}

// feedback answers POST /v1/feedback (API key): a rating of one of the
// caller's own completions.
func (s *completer) feedback(c *gin.Context) error {
	p, _ := httpx.PrincipalOf(c)
	body, err := parseFeedback(c.Request.Body)
	if err != nil {
		return err
	}
	e, err := s.entry(c.Request.Context(), body.AuditHash)
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			err = domain.NotFound("audit_entry_not_found", "no completion of yours has the audit hash %s", body.AuditHash)
		}
		return err
	}
	md := httpx.CommandMetadata(c, "key:"+p.KeyID.String())
	f, pos, err := s.d.App.Commands.SubmitFeedback.Handle(c.Request.Context(), commands.SubmitFeedback{
		AuditHash: e.Hash, Entry: e.Completion, AccountID: p.AccountID, KeyID: p.KeyID, Rating: body.Rating, Notes: body.Notes, Metadata: md})
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, gin.H{"object": "feedback", "audit_hash": f.AuditHash, "rating": f.Rating, "notes": f.Notes,
		"tier": f.Tier, "model": f.Model, "difficulty_score": f.Difficulty, "difficulty_band": routing.BandOf(f.Difficulty),
		"submitted_at": f.SubmittedAt.Format(time.RFC3339Nano), "position": pos})
	return nil
}

// usageReport answers GET /v1/usage?days=N (API key): the account's daily
// rollup of completions.
func (s *completer) usageReport(c *gin.Context) error {
	p, _ := httpx.PrincipalOf(c)
	days := 30
	if v, ok := c.GetQuery("days"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > gatewayusage.MaxDays {
			return domain.Invalid("invalid_days", "days", "days must be an integer from 1 to %d; got %q", gatewayusage.MaxDays, v)
		}
		days = n
	}
	_ = s.caughtUp(c.Request.Context(), gatewayusage.Name) // bounded; a lagging rollup is still an answer
	now := time.Now
	if s.d.App.Now != nil {
		now = s.d.App.Now
	}
	r, err := s.app.Queries.GatewayUsage.Rollup(c.Request.Context(), p.AccountID, days, now())
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"object": "usage", "account_id": p.AccountID, "days": days, "from": r.From, "to": r.To,
		"total": r.Total, "by_tier": r.ByTier, "by_key": r.ByKey, "data": r.Days})
	return nil
}
