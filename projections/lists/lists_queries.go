package lists

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/parcels"
)

// Queries answers questions about accounts' imported lists. Every
// query is scoped to one account: another account's list reads as not
// found. Safe for concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries over the lists read model.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }

// ListInfo is an imported list.
type ListInfo struct {
	ID         uuid.UUID `json:"id"`
	Name       string    `json:"name"`
	Rows       int       `json:"rows"`
	Columns    []string  `json:"columns"`
	ImportedAt time.Time `json:"imported_at"`
}

// Lists returns the account's lists, newest first.
func (q *Queries) Lists(ctx context.Context, account uuid.UUID) ([]ListInfo, error) {
	rows, err := q.pool.Query(ctx, `SELECT list_id, name, rows, columns, imported_at FROM rm_lists.lists WHERE account_id = $1 ORDER BY imported_at DESC, list_id`, account)
	if err != nil {
		return nil, fmt.Errorf("listing lists: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ListInfo, error) {
		var l ListInfo
		err := r.Scan(&l.ID, &l.Name, &l.Rows, &l.Columns, &l.ImportedAt)
		l.ImportedAt = l.ImportedAt.UTC()
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing lists: %w", err)
	}
	return out, nil
}

// ErrNoList is the answer for a list that does not exist or is not the
// caller's: the same 404 for both.
func ErrNoList(id string) error {
	return domain.NotFound("list_not_found", "no list %s on this account", id)
}

// List returns one of the account's lists.
func (q *Queries) List(ctx context.Context, account, id uuid.UUID) (ListInfo, error) {
	var l ListInfo
	err := q.pool.QueryRow(ctx, `SELECT list_id, name, rows, columns, imported_at FROM rm_lists.lists WHERE list_id = $1 AND account_id = $2`, id, account).
		Scan(&l.ID, &l.Name, &l.Rows, &l.Columns, &l.ImportedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, ErrNoList(id.String())
	}
	if err != nil {
		return l, fmt.Errorf("loading list: %w", err)
	}
	l.ImportedAt = l.ImportedAt.UTC()
	return l, nil
}

// ListRow is a list row with the parcel it matched (parcels.MatchSQL: by
// APN, else by its street address and unit, within its county or state),
// if any, and why not when none. Contact is still sealed.
type ListRow struct {
	LeadID  uuid.UUID          `json:"lead_id"`
	Row     int                `json:"row"`
	APN     string             `json:"apn"`
	County  string             `json:"county"`
	Address string             `json:"address"`
	Unit    string             `json:"unit"`
	City    string             `json:"city"`
	State   string             `json:"state"`
	Zip     string             `json:"zip"`
	Parcel  *parcels.ParcelKey `json:"-"`
	// MatchedBy is apn or address for a matched row.
	MatchedBy string `json:"-"`
	// Reason says why a row matched no parcel (one of the Reason
	// constants); empty for a matched row.
	Reason        string `json:"-"`
	Signals       json.RawMessage
	Contact       []byte `json:"-"`
	ContactErased bool   `json:"-"`
}

// Why a row matched no parcel.
const (
	// ReasonNoPropertyAddress: the row has no APN and no property address
	// (a mailing address alone is never matched).
	ReasonNoPropertyAddress = "no_property_address"
	// ReasonNoHouseNumber: the property address has no house number, so
	// it names no one parcel.
	ReasonNoHouseNumber = "no_house_number"
	// ReasonAmbiguous: several parcels fit the row (the same address in
	// two counties and no county or state to tell them apart, or a
	// building of units and no unit on the row).
	ReasonAmbiguous = "ambiguous"
	// ReasonAPNNotFound: no parcel has the row's APN (nor its address).
	ReasonAPNNotFound = "apn_not_found"
	// ReasonNoParcelAtAddress: no parcel is at the row's address.
	ReasonNoParcelAtAddress = "no_parcel_at_address"
	// ReasonUnitConflict: the address names one unit and the unit column
	// another ("5 Main St Apt 2", unit 2B), and no parcel has the row's
	// APN: which unit is meant is a guess, so neither is matched.
	ReasonUnitConflict = "unit_conflict"
)

// listRowFrom is the rows with their match (m) and the matched parcel's
// signals (ps).
func listRowFrom() string {
	return `
FROM rm_lists.list_rows r
LEFT JOIN LATERAL (` + parcels.MatchSQL("rm_parcels.parcels") + `
) m ON true
LEFT JOIN rm_parcels.parcels ps ON m.n = 1 AND m.tier <> 4 AND ps.county = m.county AND ps.apn = m.apn`
}

// reasonSQL is a row's match outcome: ” when matched, else its reason.
const reasonSQL = `CASE
    WHEN r.no_property OR (r.apn_norm = '' AND r.address = '') THEN 'no_property_address'
    WHEN ps.apn IS NOT NULL THEN ''
    WHEN m.tier IS NOT NULL THEN 'ambiguous'
    WHEN r.unit_conflict THEN 'unit_conflict'
    WHEN r.apn_norm <> '' THEN 'apn_not_found'
    WHEN r.street_key = '' THEN 'no_house_number'
    ELSE 'no_parcel_at_address' END`

func listRowSelect() string {
	return `SELECT r.lead_id, r.row_no, r.apn, r.county, r.address, r.unit, r.city, r.state, r.zip, r.contact, r.contact_erased,
       ps.county, ps.apn, m.how, ` + reasonSQL + `, coalesce(ps.signals::text, 'null')` + listRowFrom()
}

func scanListRow(r pgx.CollectableRow) (ListRow, error) {
	var l ListRow
	var county, apn, how *string
	var sig string
	if err := r.Scan(&l.LeadID, &l.Row, &l.APN, &l.County, &l.Address, &l.Unit, &l.City, &l.State, &l.Zip, &l.Contact, &l.ContactErased,
		&county, &apn, &how, &l.Reason, &sig); err != nil {
		return l, err
	}
	if county != nil {
		l.Parcel = &parcels.ParcelKey{County: *county, APN: *apn}
		l.MatchedBy = *how
		l.Signals = json.RawMessage(sig)
	}
	return l, nil
}

// MatchSummary counts a list's rows by how they matched.
type MatchSummary struct {
	Rows      int `json:"rows"`
	Matched   int `json:"matched"`
	ByAPN     int `json:"matched_by_apn"`
	ByAddress int `json:"matched_by_address"`
	Ambiguous int `json:"ambiguous"`
	// Unmatched are the rows that found no parcel (ambiguous ones
	// aside), by reason.
	Unmatched int            `json:"unmatched"`
	Reasons   map[string]int `json:"reasons"`
}

// Summary counts one of the account's lists' rows by match outcome.
func (q *Queries) Summary(ctx context.Context, account, list uuid.UUID) (MatchSummary, error) {
	rows, err := q.pool.Query(ctx, `SELECT coalesce(how, ''), reason, count(*)::int FROM (SELECT CASE WHEN ps.apn IS NOT NULL THEN m.how END AS how, `+
		reasonSQL+` AS reason`+listRowFrom()+` WHERE r.list_id = $1 AND r.account_id = $2) o GROUP BY 1, 2`, list, account)
	if err != nil {
		return MatchSummary{}, fmt.Errorf("summarizing list: %w", err)
	}
	s := MatchSummary{Reasons: map[string]int{}}
	var how, reason string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&how, &reason, &n}, func() error {
		s.Rows += n
		switch {
		case how == parcels.MatchedByAPN:
			s.Matched, s.ByAPN = s.Matched+n, s.ByAPN+n
		case how == parcels.MatchedByAddress:
			s.Matched, s.ByAddress = s.Matched+n, s.ByAddress+n
		case reason == ReasonAmbiguous:
			s.Ambiguous += n
		default:
			s.Unmatched += n
			s.Reasons[reason] += n
		}
		return nil
	})
	if err != nil {
		return MatchSummary{}, fmt.Errorf("summarizing list: %w", err)
	}
	return s, nil
}

// Rows returns a page of one of the account's lists, in row order.
func (q *Queries) Rows(ctx context.Context, account, list uuid.UUID, limit, offset int) ([]ListRow, error) {
	rows, err := q.pool.Query(ctx, listRowSelect()+` WHERE r.list_id = $1 AND r.account_id = $2 ORDER BY r.row_no LIMIT $3 OFFSET $4`, list, account, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("listing rows: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanListRow)
	if err != nil {
		return nil, fmt.Errorf("listing rows: %w", err)
	}
	return out, nil
}

// Lead returns one row of the account's lists by lead id.
func (q *Queries) Lead(ctx context.Context, account, lead uuid.UUID) (ListRow, error) {
	rows, err := q.pool.Query(ctx, listRowSelect()+` WHERE r.lead_id = $1 AND r.account_id = $2`, lead, account)
	if err != nil {
		return ListRow{}, fmt.Errorf("loading lead: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanListRow)
	if err != nil {
		return ListRow{}, fmt.Errorf("loading lead: %w", err)
	}
	if len(out) == 0 {
		return ListRow{}, domain.NotFound("lead_not_found", "no lead %s in this account's lists", lead)
	}
	return out[0], nil
}
