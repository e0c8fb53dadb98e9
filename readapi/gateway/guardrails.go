package gateway

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/projections/guardrails"
	"github.com/arr-dev/arr/readapi/httpx"
)

// mountGuardrails registers the guardrail settings under /v1/me (session
// cookie; CSRF token on PUT and DELETE): GET, PUT and DELETE
// /v1/me/guardrails (the account's) and /v1/me/keys/{id}/guardrails (a
// key's own, which replace the account's for that key). A gateway key
// cannot change guardrails: GET /v1/guardrails shows it the ones that
// apply to it.
func (h *me) mountGuardrails(g *gin.RouterGroup) {
	g.GET("/guardrails", handle(h.accountGuardrails))
	g.PUT("/guardrails", handle(h.setGuardrails(false, false)))
	g.DELETE("/guardrails", handle(h.setGuardrails(false, true)))
	g.GET("/keys/:id/guardrails", handle(h.keyGuardrails))
	g.PUT("/keys/:id/guardrails", handle(h.setGuardrails(true, false)))
	g.DELETE("/keys/:id/guardrails", handle(h.setGuardrails(true, true)))
}

// policyObject is a policy as the API shows it; with secrets, a webhook's
// signing secret too (the account's own pages only).
func (h *me) policyObject(p *guardrail.Policy, accountID uuid.UUID, secrets bool) any {
	return policyObject(h.d, p, accountID, secrets)
}

func policyObject(d httpx.Deps, p *guardrail.Policy, accountID uuid.UUID, secrets bool) any {
	if p == nil {
		return nil
	}
	pii, deny := p.PII, p.Deny
	if pii == nil {
		pii = []guardrail.PIIRule{}
	}
	if deny == nil {
		deny = []guardrail.DenyRule{}
	}
	out := gin.H{"pii": pii, "deny": deny, "max_prompt_bytes": p.MaxPromptBytes, "webhook": nil}
	if !secrets {
		out["deny"] = denyWithoutPatterns(deny)
	}
	if w := p.Webhook; w != nil {
		hook := gin.H{"url": w.URL, "fail": w.Fail, "timeout_ms": w.TimeoutMS}
		if secrets && d.App.Completions != nil {
			hook["secret"] = d.App.Completions.GuardrailSecret(accountID, w.SecretNonce)
		}
		if !secrets {
			hook["url"] = webhookOrigin(w.URL)
		}
		out["webhook"] = hook
	}
	return out
}

// denyWithoutPatterns is the deny rules as a gateway key sees them: each
// rule's action and scope, never its pattern (a codename list is the
// secret it guards).
func denyWithoutPatterns(deny []guardrail.DenyRule) []gin.H {
	out := make([]gin.H, 0, len(deny))
	for _, r := range deny {
		out = append(out, gin.H{"action": r.Action, "on": r.On})
	}
	return out
}

// webhookOrigin is a webhook URL as a gateway key sees it: its scheme and
// host only, never the userinfo, path, query or fragment that may carry
// the receiver's token.
func webhookOrigin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// accountGuardrails answers GET /v1/me/guardrails: the account's
// guardrails and each key's own.
func (h *me) accountGuardrails(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	s, err := h.d.App.Queries.Guardrails.Account(c.Request.Context(), p.AccountID)
	if err != nil {
		return err
	}
	keys := []gin.H{}
	ids := slices.SortedFunc(maps.Keys(s.Keys), func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	for _, id := range ids {
		kp := s.Keys[id]
		keys = append(keys, gin.H{"key_id": id, "guardrails": h.policyObject(&kp, p.AccountID, true)})
	}
	c.JSON(http.StatusOK, gin.H{"object": "guardrails", "scope": "account", "guardrails": h.policyObject(s.Account, p.AccountID, true),
		"set_at": s.SetAt, "keys": keys})
	return nil
}

// keyGuardrails answers GET /v1/me/keys/{id}/guardrails: the guardrails
// that apply to the key and whose they are (key, account or none).
func (h *me) keyGuardrails(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	k, err := h.ownKey(c, p)
	if err != nil {
		return err
	}
	e, err := h.d.App.Queries.Guardrails.Effective(c.Request.Context(), p.AccountID, k.ID)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, effectiveObject(h.d, e, p.AccountID, k.ID, true))
	return nil
}

func effectiveObject(d httpx.Deps, e guardrails.Effective, accountID, keyID uuid.UUID, secrets bool) gin.H {
	var pol any
	if e.Scope != guardrails.ScopeNone {
		pol = policyObject(d, &e.Policy, accountID, secrets)
	}
	return gin.H{"object": "guardrails", "key_id": keyID, "scope": e.Scope, "guardrails": pol}
}

// setGuardrails answers PUT (the body is the whole policy) and DELETE of
// the account's or a key's guardrails: 200 with them as the gateway now
// enforces them, from the next request on.
func (h *me) setGuardrails(ofKey, clear bool) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		p, _ := httpx.SessionOf(c)
		keyID := uuid.Nil
		if ofKey {
			k, err := h.ownKey(c, p)
			if err != nil {
				return err
			}
			keyID = k.ID
		}
		var pol *guardrail.Policy
		if !clear {
			raw, err := httpx.ReadJSON(c.Request.Body)
			if err != nil {
				return err
			}
			parsed, err := guardrail.ParsePolicy(raw)
			if err != nil {
				return err
			}
			pol = &parsed
		}
		ctx := c.Request.Context()
		pos, err := h.d.App.Commands.SetGuardrails.Handle(ctx, commands.SetGuardrails{AccountID: p.AccountID, KeyID: keyID, Policy: pol,
			Metadata: h.metadata(c, p)})
		if err != nil {
			return err
		}
		if err := h.d.App.WaitFor(ctx, guardrails.Name, pos); err != nil {
			return err
		}
		if !ofKey {
			return h.accountGuardrails(c)
		}
		return h.keyGuardrails(c)
	}
}

// guardrails answers GET /v1/guardrails: the guardrails that apply to the
// calling key (without the webhook's secret).
func (s *completer) guardrails(c *gin.Context) error {
	p, _ := httpx.PrincipalOf(c)
	e, err := s.app.Queries.Guardrails.Effective(c.Request.Context(), p.AccountID, p.KeyID)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, effectiveObject(s.d, e, p.AccountID, p.KeyID, false))
	return nil
}
