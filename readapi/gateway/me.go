package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

// me serves the session-authenticated self-service endpoints under /v1/me.
// Safe for concurrent use.
type me struct{ d httpx.Deps }

// mountMe registers GET /v1/me, POST /v1/me/keys, DELETE /v1/me/keys/{id}
// and GET /v1/me/usage (session cookie; CSRF token on POST and DELETE).
func mountMe(e *gin.Engine, d httpx.Deps) {
	if d.App.Now == nil {
		d.App.Now = time.Now
	}
	h := &me{d: d}
	g := e.Group("/v1/me", httpx.Session(d.App.Queries.Identities, d.App.Now), httpx.RequireSession(fail))
	g.GET("", handle(h.account))
	g.GET("/keys", handle(h.listKeys))
	g.POST("/keys", handle(h.mintKey))
	g.PATCH("/keys/:id", handle(h.changeLimits))
	g.DELETE("/keys/:id", handle(h.revokeKey))
	g.GET("/usage", handle(h.usage))
	h.mountGuardrails(g)
}

// keyObject is a gateway key as /v1/me lists it: never the secret.
func keyObject(k identity.KeyInfo) gin.H {
	out := gin.H{"object": "api_key", "id": k.ID, "service": k.Service, "prefix": k.Prefix, "hint": k.Hint,
		"name": k.Name, "created_at": k.CreatedAt, "revoked_at": k.RevokedAt}
	for f, v := range limitsObject(k.Limits) {
		out[f] = v
	}
	return out
}

// account answers GET /v1/me.
func (h *me) account(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	ctx := c.Request.Context()
	a, err := h.d.App.Queries.Identities.Account(ctx, p.AccountID)
	if err != nil {
		return err
	}
	keys, err := h.d.App.Queries.Identities.Keys(ctx, p.AccountID)
	if err != nil {
		return err
	}
	data := []gin.H{}
	active := 0
	for _, k := range keys {
		if k.Service != account.Gateway {
			continue
		}
		if k.RevokedAt == nil {
			active++
		}
		data = append(data, keyObject(k))
	}
	offer := a.Plan.Offer()
	budget, err := h.accountBudget(c, a)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"budget": budget,
		"object": "account", "id": a.ID, "email": a.Email, "plan": a.Plan, "plan_name": offer.Title,
		"created_at": a.CreatedAt, "csrf_token": httpx.CSRFToken(c), "session_expires_at": p.ExpiresAt,
		"keys": gin.H{"active": active, "max_active": account.Gateway.MaxActiveKeys(), "data": data},
	})
	return nil
}

func (h *me) metadata(c *gin.Context, p identity.SessionPrincipal) commands.Metadata {
	return httpx.CommandMetadata(c, "session:"+p.SessionID.String())
}

// mintKey answers POST /v1/me/keys {"name"?}: 201 with the secret, shown
// this once.
func (h *me) mintKey(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	body, err := readObject(c, append([]string{"name"}, limitFields...), `{"name":"laptop","max_budget_usd":10,"budget_period":"month"}`)
	if err != nil {
		return err
	}
	name := ""
	if raw, ok := body["name"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &name) != nil {
			return domain.Invalid("invalid_name", "name", "name must be a string")
		}
		name = strings.TrimSpace(name)
	}
	change, err := parseLimitsChange(body)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	k, err := h.d.App.Commands.IssueKey.Handle(ctx, commands.IssueKey{AccountID: p.AccountID, Service: account.Gateway, Name: name,
		Limits: change.Apply(account.KeyLimits{}), KnownModel: h.knownModel, Metadata: h.metadata(c, p)})
	if err != nil {
		return err
	}
	// The key must authenticate as soon as the caller has it.
	if err := h.d.App.WaitFor(ctx, identity.Name, k.Position); err != nil {
		return err
	}
	out := keyObject(identity.KeyInfo{ID: k.KeyID, AccountID: k.AccountID, Service: k.Service, Prefix: k.Prefix, Hint: k.Hint,
		Name: k.Name, CreatedAt: k.CreatedAt, Limits: k.Limits})
	out["secret"] = k.Secret
	c.JSON(http.StatusCreated, out)
	return nil
}

// readObject reads a body that is empty or a JSON object of the fields
// named, its fields undecoded; example shows one in the error.
func readObject(c *gin.Context, fields []string, example string) (map[string]json.RawMessage, error) {
	body := map[string]json.RawMessage{}
	raw, err := httpx.ReadJSON(c.Request.Body)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		return nil, domain.Invalid("invalid_body", "body", "the body must be empty or a JSON object like %s: %v", example, err)
	}
	for f := range body {
		if !slices.Contains(fields, f) {
			return nil, domain.Invalid("invalid_body", f, "unknown field %q; the fields are %s", f, strings.Join(fields, ", "))
		}
	}
	return body, nil
}

// ownKey is the account's gateway key of the path's id; any other is the
// same 404.
func (h *me) ownKey(c *gin.Context, p identity.SessionPrincipal) (identity.KeyInfo, error) {
	notFound := domain.NotFound("key_not_found", "no gateway key %s on this account", c.Param("id"))
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return identity.KeyInfo{}, notFound
	}
	k, err := h.d.App.Queries.Identities.Key(c.Request.Context(), id)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return k, err
	}
	if err != nil || k.AccountID != p.AccountID || k.Service != account.Gateway {
		return k, notFound
	}
	return k, nil
}

// changeLimits answers PATCH /v1/me/keys/{id}: the limit fields sent
// change (null clears), the others stay; 200 with the key as the
// gateway now enforces it.
func (h *me) changeLimits(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	k, err := h.ownKey(c, p)
	if err != nil {
		return err
	}
	body, err := readObject(c, limitFields, `{"rpm_limit":60}`)
	if err != nil {
		return err
	}
	change, err := parseLimitsChange(body)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	pos, err := h.d.App.Commands.SetKeyLimits.Handle(ctx, commands.SetKeyLimits{AccountID: p.AccountID, KeyID: k.ID, Change: change,
		KnownModel: h.knownModel, Metadata: h.metadata(c, p)})
	if err != nil {
		return err
	}
	// The new limits hold from the next request on, in every process.
	if err := h.d.App.WaitFor(ctx, identity.Name, pos); err != nil {
		return err
	}
	h.d.App.Queries.Identities.Forget()
	if k, err = h.d.App.Queries.Identities.Key(ctx, k.ID); err != nil {
		return err
	}
	out, err := h.keyWithSpend(c, k)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// listKeys answers GET /v1/me/keys: the account's gateway keys, newest
// first, each with its limits and its budget's spend this period.
func (h *me) listKeys(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	keys, err := h.d.App.Queries.Identities.Keys(c.Request.Context(), p.AccountID)
	if err != nil {
		return err
	}
	data := []gin.H{}
	for _, k := range keys {
		if k.Service != account.Gateway {
			continue
		}
		out, err := h.keyWithSpend(c, k)
		if err != nil {
			return err
		}
		data = append(data, out)
	}
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": data})
	return nil
}

// revokeKey answers DELETE /v1/me/keys/{id}. A key id that is malformed,
// unknown, another account's or not a gateway key is the same 404.
func (h *me) revokeKey(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	ctx := c.Request.Context()
	k, err := h.ownKey(c, p)
	if err != nil {
		return err
	}
	id := k.ID
	pos, err := h.d.App.Commands.RevokeKey.Handle(ctx, commands.RevokeKey{AccountID: p.AccountID, KeyID: id, Metadata: h.metadata(c, p)})
	if err != nil {
		return err
	}
	// A revoked key fails at once: the read model must show it before we answer.
	if err := h.d.App.WaitFor(ctx, identity.Name, pos); err != nil {
		return err
	}
	if k, err = h.d.App.Queries.Identities.Key(ctx, id); err != nil {
		return err
	}
	out := keyObject(k)
	out["deleted"] = true
	c.JSON(http.StatusOK, out)
	return nil
}

// maxUsageDays bounds GET /v1/me/usage?days=.
const maxUsageDays = 90

// usage answers GET /v1/me/usage?days=N: the account's gateway calls per
// UTC day.
func (h *me) usage(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	days := 30
	if s, ok := c.GetQuery("days"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxUsageDays {
			return domain.Invalid("invalid_days", "days", "days must be a whole number from 1 to %d; got %q", maxUsageDays, s)
		}
		days = n
	}
	if h.d.App.Queries.Usage == nil {
		return &domain.Error{Kind: domain.ErrUnavailable, Code: "usage_unavailable", Message: "usage is not recorded by this server"}
	}
	all, err := h.d.App.Queries.Usage.Account(c.Request.Context(), p.AccountID, days, h.d.App.Now())
	if err != nil {
		return err
	}
	data := []gin.H{}
	var total int64
	for _, d := range all {
		if d.Service != account.Gateway {
			continue
		}
		total += d.Calls
		data = append(data, gin.H{"date": d.Day, "requests": d.Calls})
	}
	out := gin.H{"object": "usage", "account_id": p.AccountID, "service": account.Gateway, "days": days,
		"total_requests": total, "data": data}
	if len(data) > 0 {
		out["from"], out["to"] = data[0]["date"], data[len(data)-1]["date"]
	}
	c.JSON(http.StatusOK, out)
	return nil
}
