package recordsapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/arr-dev/arr/projections/parcels"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/date"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/readapi/httpx"
)

// scoreParams reads weights (a weights version) and as_of (YYYY-MM-DD from
// 1900-01-01 to 9999-12-31, domain/date; default today, UTC).
func (s *server) scoreParams(c *gin.Context) (records.WeightTable, time.Time, error) {
	t, err := records.Weights(c.Query("weights"))
	if err != nil {
		return t, time.Time{}, err
	}
	now := time.Now
	if s.d.App.Now != nil {
		now = s.d.App.Now
	}
	asOf := now().UTC().Truncate(24 * time.Hour)
	if v := c.Query("as_of"); v != "" {
		if asOf, err = date.Day("as_of", v); err != nil {
			return t, asOf, err
		}
	}
	return t, asOf, nil
}

// score computes the motivation score from the layers naming a parcel.
func score(named []parcels.LayerSignal, asOf time.Time, t records.WeightTable) records.Score {
	var in []records.ScoreInput
	for _, l := range named {
		var rd string
		if l.RecordDate != nil {
			rd = *l.RecordDate
		}
		in = append(in, records.ScoreInputOf(l.Layer, l.SourceDate, rd))
	}
	return records.Motivation(in, asOf, t)
}

// signals is GET /api/v1/signals/{id}: id is a lead id (a row of one of
// the caller's lists) or an APN (county= disambiguates one that several
// counties use).
func (s *server) signals(c *gin.Context) error {
	ctx := c.Request.Context()
	p, _ := httpx.PrincipalOf(c)
	tab, asOf, err := s.scoreParams(c)
	if err != nil {
		return err
	}
	id := strings.TrimSpace(c.Param("id"))
	if err := text.Check("id", id, records.MaxRowTextChars); err != nil {
		return err
	}
	county, err := countyParam(c)
	if err != nil {
		return err
	}
	var key parcels.ParcelKey
	var lead *uuid.UUID
	if u, perr := uuid.Parse(id); perr == nil {
		row, err := s.lists.Lead(ctx, p.AccountID, u)
		if err != nil {
			return err
		}
		if row.Parcel == nil {
			return domain.NotFound("lead_unmatched", "lead %s (row %d of its list) matches no parcel by APN or address", u, row.Row)
		}
		key, lead = *row.Parcel, &u
	} else {
		keys, err := s.parcels.ParcelsByAPN(ctx, id, county)
		if err != nil {
			return err
		}
		switch {
		case len(keys) == 0:
			return domain.NotFound("parcel_not_found", "no parcel with APN %q%s", id, map[bool]string{true: " in county " + county}[county != ""])
		case len(keys) > 1:
			var cs []string
			for _, k := range keys {
				cs = append(cs, k.County)
			}
			return domain.Conflict("ambiguous_apn", "APN %q names parcels in counties %s; add county=FIPS", id, strings.Join(cs, ", "))
		}
		key = keys[0]
	}
	parcel, err := s.parcels.Parcel(ctx, key)
	if err != nil {
		return err
	}
	named, former := []parcels.LayerSignal{}, []parcels.LayerSignal{}
	for _, l := range parcel.Layers {
		if l.Named {
			named = append(named, l)
		} else {
			former = append(former, l)
		}
	}
	c.JSON(http.StatusOK, gin.H{
		"object": "signal_report", "lead_id": lead, "parcel": parcel,
		"layers": named, "no_longer_named": former,
		"motivation": score(named, asOf, tab), "weights": tab,
	})
	return nil
}
