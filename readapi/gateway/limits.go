package gateway

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/date"
	"github.com/arr-dev/arr/projections/identity"
)

// callerOf is the completion caller of a key's principal, its limits
// included: every route that spends builds its Caller here.
func callerOf(p identity.Principal) complete.Caller {
	return complete.Caller{AccountID: p.AccountID, KeyID: p.KeyID, Plan: p.Plan, Email: p.Email,
		Limits: p.Limits, AccountBudget: p.AccountBudget}
}

// rateLimitHeaders makes the key's limits write OpenAI's x-ratelimit-*
// headers on the response of every request they admit or refuse (keys
// with a requests or tokens per minute limit only).
func rateLimitHeaders(c *gin.Context) {
	h := c.Writer.Header()
	c.Request = c.Request.WithContext(spend.WithObserver(c.Request.Context(), func(s spend.State) {
		if s.RequestsLimit > 0 {
			h.Set("x-ratelimit-limit-requests", strconv.FormatInt(s.RequestsLimit, 10))
			h.Set("x-ratelimit-remaining-requests", strconv.FormatInt(s.RequestsRemaining, 10))
			h.Set("x-ratelimit-reset-requests", resetString(s.RequestsReset))
		}
		if s.TokensLimit > 0 {
			h.Set("x-ratelimit-limit-tokens", strconv.FormatInt(s.TokensLimit, 10))
			h.Set("x-ratelimit-remaining-tokens", strconv.FormatInt(s.TokensRemaining, 10))
			h.Set("x-ratelimit-reset-tokens", resetString(s.TokensReset))
		}
	}))
	c.Next()
}

// resetString is a reset delay as OpenAI writes it ("1s", "6m0s",
// "120ms").
func resetString(d time.Duration) string {
	return max(d, 0).Round(time.Millisecond).String()
}

// usdOf is micro-dollars as a JSON number of US dollars.
func usdOf(m account.MicroUSD) float64 { return float64(m) / 1e6 }

// limitsObject is a key's limits as the API shows them: null for none.
func limitsObject(l account.KeyLimits) gin.H {
	out := gin.H{"max_budget_usd": nil, "budget_period": nil, "rpm_limit": nil, "tpm_limit": nil, "models": nil, "expires_at": l.ExpiresAt}
	if l.MaxBudget > 0 {
		out["max_budget_usd"], out["budget_period"] = usdOf(l.MaxBudget), l.Period
	}
	if l.RPM > 0 {
		out["rpm_limit"] = l.RPM
	}
	if l.TPM > 0 {
		out["tpm_limit"] = l.TPM
	}
	if len(l.Models) > 0 {
		out["models"] = l.Models
	}
	return out
}

// spendObject is a budget's current period.
func spendObject(s spend.Spent) gin.H {
	return gin.H{"budget_period": s.Period, "period_start": s.Start, "period_end": s.End,
		"spent_usd": usdOf(s.Used), "reserved_usd": usdOf(s.Reserved)}
}

// limitFields are the JSON fields of a key's limits.
var limitFields = []string{"max_budget_usd", "budget_period", "rpm_limit", "tpm_limit", "models", "expires_at"}

// parseLimitsChange reads the limit fields of a body: a field left out
// keeps its limit, null clears it.
func parseLimitsChange(body map[string]json.RawMessage) (account.LimitsChange, error) {
	var ch account.LimitsChange
	for _, f := range limitFields {
		raw, ok := body[f]
		if !ok {
			continue
		}
		null := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		if err := setLimit(&ch, f, raw, null); err != nil {
			return ch, err
		}
	}
	return ch, nil
}

// setLimit decodes one limit field into ch.
func setLimit(ch *account.LimitsChange, f string, raw json.RawMessage, null bool) error {
	bad := func(what string) error {
		return domain.Invalid("invalid_"+f, f, "%s must be %s, or null for none; got %s", f, what, strings.TrimSpace(string(raw)))
	}
	switch f {
	case "max_budget_usd":
		var v float64
		if !null && json.Unmarshal(raw, &v) != nil {
			return bad("a number of US dollars")
		}
		m, err := account.ParseUSD(f, v)
		if err != nil {
			return err
		}
		ch.MaxBudget = &m
	case "budget_period":
		var v string
		if !null && json.Unmarshal(raw, &v) != nil {
			return bad("day, week, month or total")
		}
		p := account.Period(v)
		ch.Period = &p
	case "rpm_limit", "tpm_limit":
		var v int64
		if !null && (json.Unmarshal(raw, &v) != nil || v < 1) {
			return bad("a whole number of at least 1")
		}
		if f == "rpm_limit" {
			ch.RPM = &v
		} else {
			ch.TPM = &v
		}
	case "models":
		var v []string
		if !null && json.Unmarshal(raw, &v) != nil {
			return bad("an array of tier names and model ids")
		}
		ch.Models = &v
	case "expires_at":
		var v *time.Time
		if !null {
			var str string
			if json.Unmarshal(raw, &str) != nil {
				return bad("an RFC 3339 time")
			}
			t, err := date.Instant(f, str)
			if err != nil {
				return err
			}
			v = &t
		}
		ch.ExpiresAt = &v
	}
	return nil
}

// knownModel says whether a name is a tier or a model id of the gateway's
// catalog, of either kind (chat or embeddings).
func (h *me) knownModel(name string) bool {
	if h.d.App.Completions == nil {
		return true
	}
	return h.d.App.Completions.Catalog().Knows(name)
}

// keySpend is the spend of a key's budget in its current period, or nil
// without a budget or a ledger.
func (h *me) keySpend(c *gin.Context, k identity.KeyInfo) (any, error) {
	if k.Limits.MaxBudget == 0 || h.d.App.Queries.Spend == nil {
		return nil, nil
	}
	s, err := h.d.App.Queries.Spend.KeySpent(c.Request.Context(), k.ID, k.Limits.Period)
	if err != nil {
		return nil, err
	}
	return spendObject(s), nil
}

// keyWithSpend is keyObject with its limits and spend.
func (h *me) keyWithSpend(c *gin.Context, k identity.KeyInfo) (gin.H, error) {
	out := keyObject(k)
	s, err := h.keySpend(c, k)
	if err != nil {
		return nil, err
	}
	out["spend"] = s
	return out, nil
}

// accountBudget is the account's shared budget and its spend this
// period, or nil without one.
func (h *me) accountBudget(c *gin.Context, a identity.AccountDetail) (any, error) {
	if a.Budget.Max == 0 {
		return nil, nil
	}
	out := gin.H{"max_budget_usd": usdOf(a.Budget.Max), "budget_period": a.Budget.Period, "spend": nil}
	if h.d.App.Queries.Spend != nil {
		s, err := h.d.App.Queries.Spend.AccountSpent(c.Request.Context(), a.ID, a.Budget.Period)
		if err != nil {
			return nil, err
		}
		out["spend"] = spendObject(s)
	}
	return out, nil
}
