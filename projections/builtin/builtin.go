package builtin

import (
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/answercache"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/answerusage"
	"github.com/arr-dev/arr/projections/auditentries"
	"github.com/arr-dev/arr/projections/callusage"
	"github.com/arr-dev/arr/projections/gatewayusage"
	"github.com/arr-dev/arr/projections/guardrails"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/lists"
	"github.com/arr-dev/arr/projections/logstats"
	"github.com/arr-dev/arr/projections/monitors"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/projections/researchjobs"
	"github.com/arr-dev/arr/projections/tierquality"
)

// All returns every projection arr ships, in the order they are set up.
func All() []projections.Projection {
	return []projections.Projection{
		identity.Projection{}, logstats.Projection{}, callusage.Projection{}, answercache.Projection{}, answerusage.Projection{},
		parcels.Projection{}, lists.Projection{}, auditentries.Projection{}, gatewayusage.Projection{}, tierquality.Projection{}, answerdocs.Projection{},
		monitors.Projection{}, guardrails.Projection{}, researchjobs.Projection{},
	}
}
