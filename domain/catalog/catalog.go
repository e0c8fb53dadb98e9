package catalog

import (
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/analysis"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/eventlog"
	"github.com/arr-dev/arr/domain/feedback"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/signin"
	"github.com/arr-dev/arr/domain/usage"
)

// Registry returns a registry of every event type arr records.
func Registry() *domain.Registry {
	return domain.NewRegistry(
		account.Events(), signin.Events(), usage.Events(), audit.Events(),
		feedback.Events(), answer.Events(), records.Events(), analysis.Events(),
		eventlog.Events(),
	)
}
