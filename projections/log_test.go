package projections_test

import (
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/kurrentdb"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/projections"
)

// Both event stores give the runner what it reads of the log; the
// PostgreSQL store also reads by event type.
var (
	_ projections.LogReader = (*postgres.Store)(nil)
	_ projections.LogReader = (*kurrentdb.Store)(nil)
	_ eventstore.TypeReader = (*postgres.Store)(nil)
)
