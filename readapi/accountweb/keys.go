package accountweb

import (
	"net/http"
	"strings"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

// mintKey is POST /account/keys: the answer is the account page with the
// new secret, the only time it is shown.
func (w *web) mintKey(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	ctx := c.Request.Context()
	name := strings.TrimSpace(c.PostForm("name"))
	var limits account.KeyLimits
	var err error
	if w.svc == account.Gateway {
		limits, err = formLimits(c)
	}
	var k commands.IssuedKey
	if err == nil {
		k, err = w.d.App.Commands.IssueKey.Handle(ctx, commands.IssueKey{AccountID: p.AccountID, Service: w.svc, Name: name,
			Limits: limits, KnownModel: w.knownModel, Metadata: w.metadata(c, "session:"+p.SessionID.String())})
	}
	if isKind(err, domain.ErrConflict) || isKind(err, domain.ErrInvalid) {
		pr := httpx.ProblemOf(err)
		return w.accountPage(c, pr.Status, p, accountView{Error: pr.Message})
	}
	if err != nil {
		return err
	}
	// The page lists keys from the read model: wait until it has this one.
	if err := w.d.App.WaitFor(ctx, identity.Name, k.Position); err != nil {
		return err
	}
	return w.accountPage(c, http.StatusCreated, p, accountView{NewKey: &newKey{Name: k.Name, Secret: k.Secret}})
}

// errNoKey is the answer for a key id that is malformed, unknown, another
// account's or another service's: the same 404 for all, so ids of other
// accounts cannot be probed.
func errNoKey(id string) error {
	return domain.NotFound("key_not_found", "no key %s on this account", id)
}

// revokeKey is POST /account/keys/:id/revoke.
func (w *web) revokeKey(c *gin.Context) error {
	p, _ := httpx.SessionOf(c)
	ctx := c.Request.Context()
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return errNoKey(c.Param("id"))
	}
	k, err := w.d.App.Queries.Identities.Key(ctx, id)
	if err != nil || k.AccountID != p.AccountID || k.Service != w.svc {
		if err != nil && !isKind(err, domain.ErrNotFound) {
			return err
		}
		return errNoKey(id.String())
	}
	pos, err := w.d.App.Commands.RevokeKey.Handle(ctx, commands.RevokeKey{AccountID: p.AccountID, KeyID: id,
		Metadata: w.metadata(c, "session:"+p.SessionID.String())})
	if err != nil {
		return err
	}
	// A revoked key must fail at once, and the page must show it revoked.
	if err := w.d.App.WaitFor(ctx, identity.Name, pos); err != nil {
		return err
	}
	c.Redirect(http.StatusSeeOther, "/account?notice=revoked")
	return nil
}
