package accountweb

import (
	"fmt"
	"strings"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/account"
)

// newKey is a key just minted: the only time its secret is on a page.
type newKey struct{ Name, Secret string }

type keyRow struct {
	ID, Name, Prefix, Hint, Created, RevokedAt string
	Revoked                                    bool
	// Limits and Spent: a gateway key's limits and its budget's spend.
	Limits, Spent string
}

type planOption struct{ ID, Name, Price string }

// accountView is what a handler adds to the account page.
type accountView struct {
	csrf     string // overrides the request's (the response that starts a session)
	Notice   string
	Error    string
	NewKey   *newKey
	FirstKey bool
}

type accountData struct {
	base
	accountView
	Email, PlanName, PlanLimits, Since, Prefix string
	Keys                                       []keyRow
	ActiveKeys, MaxKeys                        int
	// Gateway: the keys have limits (and the mint form their fields).
	Gateway  bool
	CanMint  bool
	Chart    chart
	Upgrades []planOption
	// AnswerUsage: the answer service's answers per key and UTC day.
	AnswerUsage []answerUsageRow
	// Guardrails: the gateway's guardrails (nil on other pages).
	Guardrails *guardrailsView
}

type answerUsageRow struct {
	Day, Key             string
	Served, Cached, Deep int64
}

// accountPage renders the signed-in account page from the read models.
func (w *web) accountPage(c *gin.Context, status int, p identity.SessionPrincipal, v accountView) error {
	ctx := c.Request.Context()
	acct, err := w.d.App.Queries.Identities.Account(ctx, p.AccountID)
	if err != nil {
		return err
	}
	keys, err := w.d.App.Queries.Identities.Keys(ctx, p.AccountID)
	if err != nil {
		return err
	}
	b := w.base(c, "Your account")
	b.SignedIn = true
	if v.csrf != "" {
		b.CSRF = v.csrf
	}
	offer := acct.Plan.Offer()
	d := accountData{base: b, accountView: v, Email: acct.Email, PlanName: offer.Title, PlanLimits: limitsText(offer),
		Since: acct.CreatedAt.UTC().Format("2 January 2006"), Prefix: w.svc.KeyPrefix(), MaxKeys: w.svc.MaxActiveKeys(), Gateway: w.svc == account.Gateway}
	for _, k := range keys {
		if k.Service != w.svc {
			continue
		}
		r := keyRow{ID: k.ID.String(), Name: k.Name, Prefix: k.Prefix, Hint: k.Hint, Created: k.CreatedAt.UTC().Format("2006-01-02 15:04"),
			Limits: k.Limits.Describe(), Spent: w.keySpent(ctx, k)}
		if k.RevokedAt != nil {
			r.Revoked, r.RevokedAt = true, k.RevokedAt.UTC().Format("2006-01-02 15:04")
		} else {
			d.ActiveKeys++
		}
		d.Keys = append(d.Keys, r)
	}
	d.CanMint = d.ActiveKeys < d.MaxKeys
	d.Guardrails = w.guardrailsOf(ctx, p.AccountID)
	d.Chart = w.usageChart(c, p.AccountID)
	if w.svc == account.Answer && w.d.App.Queries.Usage != nil {
		names := map[string]string{}
		for _, k := range d.Keys {
			names[k.ID] = k.Prefix + "…" + k.Hint
		}
		rows, err := w.d.App.Queries.AnswerUsage.ByKey(ctx, p.AccountID, 30, w.d.App.Now())
		if err != nil {
			w.log.Warn("reading answer usage", "err", err)
		}
		for _, r := range rows {
			d.AnswerUsage = append(d.AnswerUsage, answerUsageRow{Day: r.Day, Key: names[r.KeyID.String()], Served: r.Served, Cached: r.Cached, Deep: r.Deep})
		}
	}
	for _, o := range account.Catalog() {
		if o.SelfServe && o.Plan.Rank() > acct.Plan.Rank() {
			d.Upgrades = append(d.Upgrades, planOption{ID: string(o.Plan), Name: o.Title, Price: o.MonthlyPrice.USD()})
		}
	}
	w.render(c, status, "account", d)
	return nil
}

// limitsText says what a plan allows on this service, in words.
func limitsText(o account.Offer) string {
	l := o.Limits
	parts := []string{
		fmt.Sprintf("%s gateway requests a day", thousands(l.GatewayRequestsPerDay)),
		fmt.Sprintf("%s answer calls a day per key", thousands(l.AnswerCallsPerDay)),
		fmt.Sprintf("%s records requests an hour per key", thousands(l.RecordsRequestsPerHour)),
	}
	if l.DeepAnswers {
		parts = append(parts, "deep answers")
	}
	if l.BrandPref {
		parts = append(parts, "brand preference")
	}
	return strings.Join(parts, ", ") + "."
}

// thousands writes n with comma separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
