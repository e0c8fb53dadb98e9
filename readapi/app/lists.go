package app

import (
	"context"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/projections/lists"
)

// Lists is the imported-lists read model: an account's lists and their
// rows, contact columns still sealed (projections/lists).
type Lists interface {
	Lists(ctx context.Context, account uuid.UUID) ([]lists.ListInfo, error)
	List(ctx context.Context, account, id uuid.UUID) (lists.ListInfo, error)
	Rows(ctx context.Context, account, list uuid.UUID, limit, offset int) ([]lists.ListRow, error)
	Lead(ctx context.Context, account, lead uuid.UUID) (lists.ListRow, error)
	Summary(ctx context.Context, account, list uuid.UUID) (lists.MatchSummary, error)
}

var _ Lists = (*lists.Queries)(nil)

// ContactKeys opens the contact columns of imported lists, one data key
// per account (adapters/datakeys).
type ContactKeys interface {
	Opener(ctx context.Context, account uuid.UUID) (ContactOpener, error)
}

// ContactOpener opens what one account's data key sealed.
type ContactOpener interface {
	Open(sealed []byte) ([]byte, error)
}
