package account

import (
	"strings"

	"github.com/arr-dev/arr/domain"
)

// Plan is a subscription plan name.
type Plan string

const (
	Free       Plan = "free"
	Starter    Plan = "starter"
	Pro        Plan = "pro"
	Scale      Plan = "scale"
	Enterprise Plan = "enterprise"
)

// Plans lists every plan from cheapest to dearest.
func Plans() []Plan { return []Plan{Free, Starter, Pro, Scale, Enterprise} }

// Rank orders plans: Free 0 … Enterprise 4; unknown -1.
func (p Plan) Rank() int {
	for i, q := range Plans() {
		if p == q {
			return i
		}
	}
	return -1
}

// AtLeast reports whether p is q or a dearer plan.
func (p Plan) AtLeast(q Plan) bool { return p.Rank() >= q.Rank() && q.Rank() >= 0 }

// ParsePlan validates a plan name (case-insensitive); empty means Free.
func ParsePlan(s string) (Plan, error) {
	if s == "" {
		return Free, nil
	}
	p := Plan(strings.ToLower(strings.TrimSpace(s)))
	if p.Rank() < 0 {
		return "", domain.Invalid("invalid_plan", "plan", "plan must be one of free, starter, pro, scale, enterprise; got %q", s)
	}
	return p, nil
}
