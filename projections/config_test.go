package projections_test

import (
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/readapi/metering"
)

// TestConfigValidateReportsEveryProblem: a component's Config fills in
// the defaults of what is left zero, and Validate names every setting out
// of range in one error (errors.Join), as watermill's do.
func TestConfigValidateReportsEveryProblem(t *testing.T) {
	var zero projections.Config
	if err := zero.Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	if zero.BatchSize != 2000 || zero.BatchTimeout != time.Minute || zero.MaxBatchTimeout != time.Hour || zero.Logger == nil {
		t.Errorf("defaults not filled in: %+v", zero)
	}
	cases := []struct {
		name     string
		validate func() error
		want     []string
	}{
		{"projections", func() error {
			c := projections.Config{BatchSize: -1, RebuildBatchSize: -2, BatchTimeout: 2 * time.Hour, MaxBatchTimeout: time.Hour}
			return c.Validate()
		}, []string{"BatchSize is negative (-1)", "RebuildBatchSize is negative (-2)", "MaxBatchTimeout (1h0m0s) is below BatchTimeout (2h0m0s)"}},
		{"postgres event store", func() error {
			c := postgres.Config{MaxBatchEvents: -1, CommitTimeout: -time.Second, PollInterval: -time.Second}
			return c.Validate()
		}, []string{"MaxBatchEvents is negative (-1)", "CommitTimeout is negative (-1s)", "PollInterval is negative (-1s)"}},
		{"audit chain", func() error {
			c := commands.AuditChainConfig{MaxBatch: -1, MaxFailures: -3}
			return c.Validate()
		}, []string{"MaxBatch is negative (-1)", "MaxFailures is negative (-3)"}},
		{"metering", func() error {
			c := metering.Config{Workers: -1, MaxAttempts: -1, DrainTimeout: -time.Second}
			return c.Validate()
		}, []string{"Workers must be at least 1, not -1", "MaxAttempts must be at least 1, not -1", "DrainTimeout is negative (-1s)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.validate()
			if err == nil {
				t.Fatal("no error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Errorf("%d problems reported, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}
