package app

import (
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/answercache"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/answerusage"
	"github.com/arr-dev/arr/projections/audit"
	"github.com/arr-dev/arr/projections/gatewayusage"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/lists"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/projections/tierquality"
	"github.com/arr-dev/arr/projections/usage"
)

// Application is everything a service, the CLI or a test calls: commands
// change state, queries read it.
type Application struct {
	Commands commands.Commands
	Queries  Queries
}

// Queries gathers the read side, one field per read model.
type Queries struct {
	Identities   Identities
	Parcels      Parcels
	Lists        Lists
	Usage        Usage
	AnswerUsage  AnswerUsage
	GatewayUsage GatewayUsage
	Audit        Audit
	TierQuality  TierQuality
	AnswerCache  AnswerCache
	AnswerDocs   AnswerDocs
	Status       Status
}

// New gathers the commands and the queries over pool, where the
// projections keep the read models.
func New(pool *pgxpool.Pool, cmds commands.Commands) (Application, error) {
	if pool == nil {
		return Application{}, errors.New("app: nil pool")
	}
	return Application{Commands: cmds, Queries: NewQueries(pool)}, nil
}

// NewQueries reads every read model through pool.
func NewQueries(pool *pgxpool.Pool) Queries {
	return Queries{
		Identities:   identity.NewQueries(pool),
		Parcels:      parcels.NewQueries(pool),
		Lists:        lists.NewQueries(pool),
		Usage:        usage.NewQueries(pool),
		AnswerUsage:  answerusage.NewQueries(pool),
		GatewayUsage: gatewayusage.NewQueries(pool),
		Audit:        audit.NewQueries(pool),
		TierQuality:  tierquality.NewQueries(pool),
		AnswerCache:  answercache.NewQueries(pool),
		AnswerDocs:   answerdocs.NewQueries(pool),
		Status:       projections.NewStatus(pool),
	}
}
