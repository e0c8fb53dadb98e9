package commands_test

import (
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/eventstore/kurrentdb"
	"github.com/arr-dev/arr/eventstore/postgres"
)

// Both event stores give the commands what they use of the log.
var (
	_ commands.Appender = (*postgres.Store)(nil)
	_ commands.Appender = (*kurrentdb.Store)(nil)
)
