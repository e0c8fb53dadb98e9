package accountweb

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/projections/guardrails"
	"github.com/arr-dev/arr/readapi/httpx"
)

// guardrailsView is the gateway page's guardrails: the account's policy as
// JSON ("" for none) and each key's own, by key id.
type guardrailsView struct {
	Account string
	Secret  string
	Keys    map[string]string
}

// policyJSON is a policy as the form shows and takes it (the JSON of PUT
// /v1/me/guardrails, without the webhook's nonce).
func policyJSON(p guardrail.Policy) string {
	if p.Webhook != nil {
		w := *p.Webhook
		w.SecretNonce = ""
		p.Webhook = &w
	}
	b, _ := json.MarshalIndent(p, "", "  ")
	return string(b)
}

// guardrailsOf reads the account's guardrails for the page; nil without
// the read model (a page not of the gateway).
func (w *web) guardrailsOf(ctx context.Context, accountID uuid.UUID) *guardrailsView {
	if w.svc != account.Gateway || w.d.App.Queries.Guardrails == nil {
		return nil
	}
	s, err := w.d.App.Queries.Guardrails.Account(ctx, accountID)
	if err != nil {
		w.log.Warn("reading guardrails", "err", err)
		return nil
	}
	v := &guardrailsView{Keys: map[string]string{}}
	if s.Account != nil {
		v.Account = policyJSON(*s.Account)
		if h := s.Account.Webhook; h != nil && w.d.App.Completions != nil {
			v.Secret = w.d.App.Completions.GuardrailSecret(accountID, h.SecretNonce)
		}
	}
	for id, p := range s.Keys {
		v.Keys[id.String()] = policyJSON(p)
	}
	return v
}

// setGuardrails is POST /account/guardrails: the policy field's JSON sets
// the account's guardrails, or (with key) a gateway key's own; an empty
// policy clears them.
func (w *web) setGuardrails(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	ctx := c.Request.Context()
	keyID := uuid.Nil
	if id := strings.TrimSpace(c.PostForm("key")); id != "" {
		parsed, err := uuid.Parse(id)
		if err != nil {
			return errNoKey(id)
		}
		k, err := w.d.App.Queries.Identities.Key(ctx, parsed)
		if err != nil || k.AccountID != p.AccountID || k.Service != account.Gateway {
			if err != nil && !isKind(err, domain.ErrNotFound) {
				return err
			}
			return errNoKey(id)
		}
		keyID = parsed
	}
	var pol *guardrail.Policy
	if raw := strings.TrimSpace(c.PostForm("policy")); raw != "" {
		parsed, err := guardrail.ParsePolicy([]byte(raw))
		if err != nil {
			return w.accountPage(c, http.StatusBadRequest, p, accountView{Error: httpx.ProblemOf(err).Message})
		}
		pol = &parsed
	}
	pos, err := w.d.App.Commands.SetGuardrails.Handle(ctx, commands.SetGuardrails{AccountID: p.AccountID, KeyID: keyID, Policy: pol,
		Metadata: w.metadata(c, "session:"+p.SessionID.String())})
	if isKind(err, domain.ErrConflict) || isKind(err, domain.ErrInvalid) {
		pr := httpx.ProblemOf(err)
		return w.accountPage(c, pr.Status, p, accountView{Error: pr.Message})
	}
	if err != nil {
		return err
	}
	if err := w.d.App.WaitFor(ctx, guardrails.Name, pos); err != nil {
		return err
	}
	return w.accountPage(c, http.StatusOK, p, accountView{Notice: "Guardrails saved: they hold from the next request on."})
}
