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

// ListRow is a list row with the parcel it matched (by APN, else by
// normalized address), if any. Contact is still sealed.
type ListRow struct {
	LeadID        uuid.UUID          `json:"lead_id"`
	Row           int                `json:"row"`
	APN           string             `json:"apn"`
	County        string             `json:"county"`
	Address       string             `json:"address"`
	Parcel        *parcels.ParcelKey `json:"-"`
	MatchedBy     string             `json:"-"`
	Signals       json.RawMessage
	Contact       []byte `json:"-"`
	ContactErased bool   `json:"-"`
}

const listRowSelect = `
SELECT r.lead_id, r.row_no, r.apn, r.county, r.address, r.contact, r.contact_erased, m.county, m.apn, m.how, coalesce(m.signals::text, 'null')
FROM rm_lists.list_rows r
LEFT JOIN LATERAL (
    (SELECT p.county, p.apn, 'apn' AS how, p.signals FROM rm_parcels.parcels p
     WHERE r.apn_norm <> '' AND p.apn_norm = r.apn_norm AND (r.county = '' OR p.county = r.county) ORDER BY p.county, p.apn LIMIT 1)
    UNION ALL
    (SELECT p.county, p.apn, 'address', p.signals FROM rm_parcels.parcels p
     WHERE r.norm_address <> '' AND p.norm_address = r.norm_address AND (r.county = '' OR p.county = r.county) ORDER BY p.county, p.apn LIMIT 1)
    LIMIT 1
) m ON true`

func scanListRow(r pgx.CollectableRow) (ListRow, error) {
	var l ListRow
	var county, apn, how *string
	var sig string
	if err := r.Scan(&l.LeadID, &l.Row, &l.APN, &l.County, &l.Address, &l.Contact, &l.ContactErased, &county, &apn, &how, &sig); err != nil {
		return l, err
	}
	if county != nil {
		l.Parcel = &parcels.ParcelKey{County: *county, APN: *apn}
		l.MatchedBy = *how
		l.Signals = json.RawMessage(sig)
	}
	return l, nil
}

// Rows returns a page of one of the account's lists, in row order.
func (q *Queries) Rows(ctx context.Context, account, list uuid.UUID, limit, offset int) ([]ListRow, error) {
	rows, err := q.pool.Query(ctx, listRowSelect+` WHERE r.list_id = $1 AND r.account_id = $2 ORDER BY r.row_no LIMIT $3 OFFSET $4`, list, account, limit, offset)
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
	rows, err := q.pool.Query(ctx, listRowSelect+` WHERE r.lead_id = $1 AND r.account_id = $2`, lead, account)
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
