package recordsapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections/lists"
	"github.com/arr-dev/arr/projections/parcels"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/httpx"
)

// listLists is GET /api/v1/lists: the caller's own lists.
func (s *server) listLists(c *gin.Context) error {
	p, _ := httpx.PrincipalOf(c)
	ls, err := s.lists.Lists(c.Request.Context(), p.AccountID)
	if err != nil {
		return err
	}
	if ls == nil {
		ls = []lists.ListInfo{}
	}
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": ls})
	return nil
}

// listMatch is GET /api/v1/lists/{list_id}/match: how many of the list's
// rows matched a parcel (by APN, by address), how many are ambiguous and
// how many found nothing, by reason.
func (s *server) listMatch(c *gin.Context) error {
	p, _ := httpx.PrincipalOf(c)
	id, err := uuid.Parse(c.Param("list_id"))
	if err != nil {
		return lists.ErrNoList(c.Param("list_id"))
	}
	list, err := s.lists.List(c.Request.Context(), p.AccountID, id)
	if err != nil {
		return err
	}
	sum, err := s.lists.Summary(c.Request.Context(), p.AccountID, id)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"object": "list_match", "list": list, "match": sum})
	return nil
}

type contactOut struct {
	Phone *string `json:"phone"`
	Email *string `json:"email"`
}

// listRows is GET /api/v1/lists/{list_id}/rows. Another account's list and
// a malformed id are the same 404.
func (s *server) listRows(c *gin.Context) error {
	ctx := c.Request.Context()
	p, _ := httpx.PrincipalOf(c)
	id, err := uuid.Parse(c.Param("list_id"))
	if err != nil {
		return lists.ErrNoList(c.Param("list_id"))
	}
	limit, offset, err := page(c)
	if err != nil {
		return err
	}
	withSignals, err := flag(c, "signals")
	if err != nil {
		return err
	}
	withContact, err := flag(c, "include_contact")
	if err != nil {
		return err
	}
	tab, asOf, err := s.scoreParams(c)
	if err != nil {
		return err
	}
	list, err := s.lists.List(ctx, p.AccountID, id)
	if err != nil {
		return err
	}
	rows, err := s.lists.Rows(ctx, p.AccountID, id, limit, offset)
	if err != nil {
		return err
	}
	var opener ContactOpener
	keyGone := false
	if withContact {
		if s.d.App.Queries.Contacts == nil {
			return &domain.Error{Kind: domain.ErrUnavailable, Code: "contact_unavailable", Message: "this server has no data-key ring"}
		}
		opener, err = s.d.App.Queries.Contacts.Opener(ctx, p.AccountID)
		if errors.Is(err, records.ErrDataKeyDestroyed) {
			keyGone, err = true, nil
		}
		if err != nil {
			return err
		}
	}
	out := make([]gin.H, 0, len(rows))
	for _, r := range rows {
		o := gin.H{"lead_id": r.LeadID, "row": r.Row, "apn": r.APN, "county": r.County, "address": r.Address, "unit": r.Unit, "city": r.City,
			"state": r.State, "zip": r.Zip, "parcel": nil, "matched_by": nil, "reason": r.Reason}
		if r.Parcel != nil {
			o["parcel"], o["matched_by"], o["reason"] = r.Parcel, r.MatchedBy, nil
		}
		if withSignals {
			o["signals"], o["motivation"] = json.RawMessage("[]"), nil
			if r.Parcel != nil {
				parcel, err := s.parcels.Parcel(ctx, *r.Parcel)
				if err != nil {
					return err
				}
				var named []parcels.LayerSignal
				for _, l := range parcel.Layers {
					if l.Named {
						named = append(named, l)
					}
				}
				o["signals"], o["motivation"] = r.Signals, score(named, asOf, tab)
			}
		}
		if withContact {
			o["contact"], o["contact_status"] = s.openContact(r, opener, keyGone)
		}
		out = append(out, o)
	}
	c.JSON(http.StatusOK, gin.H{"object": "list_rows", "list": list, "data": out, "limit": limit, "offset": offset, "total": list.Rows})
	return nil
}

// openContact returns a row's contact columns and their status: "ok",
// "none" (the upload had none), "erased" (the account's data key was
// destroyed) or "unreadable".
func (s *server) openContact(r lists.ListRow, o ContactOpener, keyGone bool) (*contactOut, string) {
	switch {
	case r.ContactErased || (keyGone && len(r.Contact) > 0):
		return nil, "erased"
	case len(r.Contact) == 0:
		return nil, "none"
	case o == nil:
		return nil, "unreadable"
	}
	plain, err := o.Open(r.Contact)
	if err != nil {
		return nil, "unreadable"
	}
	var ct commands.Contact
	if json.Unmarshal(plain, &ct) != nil {
		return nil, "unreadable"
	}
	out := &contactOut{}
	if ct.Phone != "" {
		out.Phone = &ct.Phone
	}
	if ct.Email != "" {
		out.Email = &ct.Email
	}
	return out, "ok"
}

// ContactKeys opens an account's sealed contact columns
// (app.ContactKeys, adapters/datakeys.Keyring). Opener fails with
// records.ErrDataKeyDestroyed once the account's data key is gone.
type ContactKeys = app.ContactKeys

// ContactOpener opens what one account's data key sealed.
type ContactOpener = app.ContactOpener

// listMonitors is GET /api/v1/monitors: the caller's account's list
// monitors (never their secrets), oldest first, paged by limit and offset;
// deleted=1 lists deleted ones too.
func (s *server) listMonitors(c *gin.Context) error {
	p, _ := httpx.PrincipalOf(c)
	limit, offset, err := page(c)
	if err != nil {
		return err
	}
	withDeleted, err := flag(c, "deleted")
	if err != nil {
		return err
	}
	ms, total, err := s.d.App.Queries.Monitors.List(c.Request.Context(), p.AccountID, withDeleted, limit, offset)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": ms, "total": total, "limit": limit, "offset": offset})
	return nil
}

// deliveryStatuses are the values of GET /api/v1/monitors/{id}/deliveries's
// status filter.
var deliveryStatuses = []string{parcels.DeliveryPending, parcels.DeliveryDelivered, parcels.DeliveryFailed, parcels.DeliveryCancelled}

// listDeliveries is GET /api/v1/monitors/{id}/deliveries: one of the
// caller's monitors' deliveries, newest first, each with its attempts,
// paged by limit and offset; status= keeps one status. Another account's
// monitor reads as missing.
func (s *server) listDeliveries(c *gin.Context) error {
	p, _ := httpx.PrincipalOf(c)
	id, err := uuid.Parse(c.Param("id"))
	if err != nil || len(c.Param("id")) != 36 {
		return domain.Invalid("invalid_monitor_id", "id", "the monitor id must be a UUID like 0b0e7f5c-6a4d-4c1e-9d55-3f7f0c2a9b61 (GET /api/v1/monitors lists them); got %q", c.Param("id"))
	}
	limit, offset, err := page(c)
	if err != nil {
		return err
	}
	status := c.Query("status")
	if status != "" && !slices.Contains(deliveryStatuses, status) {
		return domain.Invalid("invalid_status", "status", "status must be one of %s; got %q", strings.Join(deliveryStatuses, ", "), status)
	}
	if _, ok, err := s.d.App.Queries.Monitors.Get(c.Request.Context(), p.AccountID, id); err != nil {
		return err
	} else if !ok {
		return domain.NotFound("monitor_not_found", "no monitor %s in this account", id)
	}
	ds, total, err := s.d.App.Queries.Parcels.Deliveries(c.Request.Context(), id, status, limit, offset)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": ds, "total": total, "limit": limit, "offset": offset})
	return nil
}
