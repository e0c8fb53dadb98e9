package routing

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/arr-dev/arr/domain"
)

// ExpectedOutputTokens is the reply length the cost estimate assumes when
// the request's max_tokens is not smaller.
const ExpectedOutputTokens = 256

// Request is what the router decides on.
type Request struct {
	// Model is "auto" (or empty), a tier name or a model id.
	Model string
	// QualityFloor applies to auto (DefaultQualityFloor when the request
	// does not set one).
	QualityFloor float64
	// MaxCostMicro is the hard ceiling in micro-dollars; 0 means none.
	MaxCostMicro int64
	// BrandPref is a vendor whose models are preferred; "" for none.
	BrandPref string
	// BrandPrefAllowed is the caller's plan allowing brand_pref.
	BrandPrefAllowed bool
	Difficulty       float64
	// InputTokens is the estimated prompt size.
	InputTokens int64
	// MaxTokens is the request's own cap on output tokens; 0 for none.
	MaxTokens int64
	// Allow says whether the caller's key may use a model id of a tier;
	// nil allows every model. Auto and failover choose among the allowed
	// only; a tier or model named that allows none is ErrForbidden.
	Allow func(id, tier string) bool
	// AllowNames is the key's models limit as it names it (tiers and
	// model ids), for the refusals that Allow causes.
	AllowNames []string
	// APIs are the upstream APIs the request can be sent to (a model's
	// API), in order of preference: within a tier, models of the first
	// come first (after BrandPref's vendor), and models of an API not
	// named are never chosen (a model named is model_api_unsupported).
	// Nil: every API, no preference.
	APIs []string
}

// allowed keeps the models r may use: those its key allows, of the APIs
// it can be sent to.
func (r Request) allowed(ms []Model) []Model {
	if r.Allow == nil && len(r.APIs) == 0 {
		return ms
	}
	var out []Model
	for _, m := range ms {
		if (r.Allow == nil || r.Allow(m.ID, m.Tier)) && r.serves(m) {
			out = append(out, m)
		}
	}
	return out
}

// limitText is the key's models limit for a message.
func (r Request) limitText() string {
	if len(r.AllowNames) == 0 {
		return "its models limit (GET /v1/me/keys shows it)"
	}
	return "its models limit: " + strings.Join(r.AllowNames, ", ")
}

// errModelNotAllowed refuses a tier or model the caller's key may not use.
func errModelNotAllowed(name string, r Request) error {
	return &domain.Error{Kind: domain.ErrForbidden, Code: "model_not_allowed", Field: "model",
		Message: fmt.Sprintf("this API key may not use %q (%s); use one of those or model auto", name, r.limitText())}
}

// Candidate is one upstream to try, with the max_tokens to send it (0:
// leave the request's as it is) and its estimated cost.
type Candidate struct {
	Model     Model
	MaxTokens int64
	EstCost   MicroUSD
	// Predicted is the corrected quality of the candidate's tier.
	Predicted float64
}

// Decision is the router's choice: the tier and every candidate in
// failover order. For auto or a tier named: the tier's models, the
// preferred vendor's first, then the models of each tier above that
// meets the ceiling (for a name an alias makes a tier: that tier's models
// alone). For a model id named: that model, then the same
// model served elsewhere at no higher price (copiesOf), and nothing else.
type Decision struct {
	Tier       string
	Difficulty float64
	Candidates []Candidate
}

// fit is how a tier fares against the ceiling.
type fit struct {
	ok      bool
	estCost MicroUSD
	// need is the ceiling the model needs: the estimate with the prompt
	// at its dearest price (MaxCost), what the 400s ask to raise it to.
	need      MicroUSD
	maxTokens int64 // 0: no cap needed
}

// fitModel checks a model against the request's ceiling and context: the
// estimated cost (prompt plus min(max_tokens, 256) output tokens, the
// prompt at its dearest price: MaxCost) must be within the ceiling, and
// max_tokens is capped so that prompt plus max_tokens output cannot cost
// more than the ceiling however the prompt is cached.
func fitModel(m Model, r Request) fit {
	expected := int64(ExpectedOutputTokens)
	if r.MaxTokens > 0 && r.MaxTokens < expected {
		expected = r.MaxTokens
	}
	est := m.Cost(Tokens{Prompt: r.InputTokens, Completion: expected})
	// The ceiling is hard: the prompt is priced at the dearest of the
	// input, cached-input and cache-write prices (an upstream may write
	// the whole prompt to its cache, at up to 1.25x the input price).
	need := m.MaxCost(r.InputTokens, expected)
	if r.InputTokens+expected > m.ContextWindow {
		return fit{estCost: est, need: need}
	}
	if r.MaxCostMicro <= 0 {
		return fit{ok: true, estCost: est, need: need, maxTokens: 0}
	}
	if need > r.MaxCostMicro {
		return fit{estCost: est, need: need}
	}
	// Largest n with input*dearestInPrice + n*outPrice <= ceiling*1e6.
	budget := r.MaxCostMicro*1_000_000 - r.InputTokens*m.dearestInputPerM()
	capTokens := budget / m.OutputPerM
	capTokens = min(capTokens, m.ContextWindow-r.InputTokens)
	if r.MaxTokens > 0 && r.MaxTokens <= capTokens {
		return fit{ok: true, estCost: est}
	}
	return fit{ok: true, estCost: est, maxTokens: capTokens}
}

// ordered is a tier's models in preference order: the preferred
// vendor's first (brand_pref), then by the request's API preference
// (r.APIs: for a Messages request, the Anthropic models of the tier
// before the others), else in catalog order.
func (c *Catalog) ordered(t Tier, r Request) []Model {
	if r.BrandPref == "" && len(r.APIs) < 2 {
		return t.Models
	}
	out := slices.Clone(t.Models)
	rank := func(m Model) int {
		b := 1
		if m.Vendor == r.BrandPref {
			b = 0
		}
		return b*(len(r.APIs)+1) + r.apiRank(m)
	}
	slices.SortStableFunc(out, func(a, b Model) int { return rank(a) - rank(b) })
	return out
}

// Route decides a request. Errors: ErrNotFound for an unknown model,
// ErrForbidden for brand_pref on a plan without it, ErrInvalid for bad
// parameters and for a floor and ceiling that no tier meets (the message
// says which constraint failed and what would satisfy it).
func Route(c *Catalog, fb Feedback, r Request) (Decision, error) {
	if err := validate(c, r); err != nil {
		return Decision{}, err
	}
	d := Decision{Difficulty: r.Difficulty}
	model := c.Resolve(r.Model)
	if model == "" {
		model = "auto"
	}
	start := -1
	var pinned *Model
	switch {
	case model == "auto":
		i, err := chooseAuto(c, fb, r)
		if err != nil {
			return Decision{}, err
		}
		start = i
	case isTier(model):
		i, ok := c.byTier[model]
		if !ok {
			return Decision{}, errUnknownModel(model, c)
		}
		if len(r.allowed(c.Tiers[i].Models)) == 0 {
			if len(Request{Allow: r.Allow}.allowed(c.Tiers[i].Models)) > 0 {
				return Decision{}, errModelAPI(model, nil, r)
			}
			return Decision{}, errModelNotAllowed(model, r)
		}
		start = i
	default:
		m, ok := c.byModel[model]
		if !ok {
			return Decision{}, errUnknownModel(model, c)
		}
		if r.Allow != nil && !r.Allow(m.ID, m.Tier) {
			return Decision{}, errModelNotAllowed(model, r)
		}
		if !r.serves(m) {
			return Decision{}, errModelAPI(model, &m, r)
		}
		pinned = &m
		start = c.byTier[m.Tier]
	}
	d.Tier = c.Tiers[start].Name
	if pinned != nil {
		// A model named is that model: it fails over only to the same
		// model served elsewhere, never dearer (sameModel).
		pred := fb.Corrected(c.Tiers[start], r.Difficulty)
		for _, m := range append([]Model{*pinned}, r.allowed(c.copiesOf(*pinned))...) {
			if f := fitModel(m, r); f.ok {
				d.Candidates = append(d.Candidates, Candidate{Model: m, MaxTokens: f.maxTokens, EstCost: f.estCost, Predicted: pred})
			}
		}
		if len(d.Candidates) == 0 {
			return Decision{}, ceilingError(c, r, start, pinned)
		}
		return d, nil
	}
	// A name that an alias makes a tier (claude-*haiku* to small) is
	// routed within that tier: it fails over to the tier's other models,
	// never to a dearer tier, so what the request may cost (and reserves)
	// is the tier's price. Auto and a tier named climb.
	within := model != r.Model && isTier(model)
	for i := start; i < len(c.Tiers); i++ {
		if within && i > start {
			break
		}
		t := c.Tiers[i]
		pred := fb.Corrected(t, r.Difficulty)
		// Tiers above the chosen one are failover targets only if they
		// still clear the floor (auto) — they normally do.
		if i > start && model == "auto" && pred < r.QualityFloor {
			continue
		}
		models := r.allowed(c.ordered(t, r))
		for _, m := range models {
			f := fitModel(m, r)
			if !f.ok {
				continue
			}
			d.Candidates = append(d.Candidates, Candidate{Model: m, MaxTokens: f.maxTokens, EstCost: f.estCost, Predicted: pred})
		}
	}
	if len(d.Candidates) == 0 || d.Candidates[0].Model.Tier != d.Tier {
		return Decision{}, ceilingError(c, r, start, nil)
	}
	return d, nil
}

// sameModel says whether o serves the model m is (the same vendor's same
// upstream model, under another catalog id: another region, deployment
// or provider) at no higher price: input, output, cached input and cache
// write.
func sameModel(m, o Model) bool {
	return o.ID != m.ID && o.Vendor == m.Vendor && o.UpstreamModel == m.UpstreamModel &&
		o.InputPerM <= m.InputPerM && o.OutputPerM <= m.OutputPerM &&
		o.CachedInputPerM <= m.CachedInputPerM && o.CacheWritePerM <= m.CacheWritePerM
}

// copiesOf are the catalog's other entries of m's model (sameModel), in
// catalog order: what a request naming m fails over to.
func (c *Catalog) copiesOf(m Model) []Model {
	var out []Model
	for _, t := range c.Tiers {
		for _, o := range t.Models {
			if sameModel(m, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

func validate(c *Catalog, r Request) error {
	if math.IsNaN(r.QualityFloor) || r.QualityFloor < 0 || r.QualityFloor > 1 {
		return domain.Invalid("invalid_quality_floor", "quality_floor", "quality_floor must be a number from 0 to 1; got %v", r.QualityFloor)
	}
	if r.MaxCostMicro < 0 {
		return domain.Invalid("invalid_max_cost", "max_cost_usd", "max_cost_usd must be positive")
	}
	if r.BrandPref != "" {
		if !r.BrandPrefAllowed {
			return &domain.Error{Kind: domain.ErrForbidden, Code: "brand_pref_requires_pro", Field: "brand_pref",
				Message: "brand_pref needs the Pro plan or above; upgrade on the account page (/account) or leave brand_pref out"}
		}
		known := c.Vendors()
		found := false
		for _, v := range known {
			found = found || v == r.BrandPref
		}
		if !found {
			return domain.Invalid("invalid_brand_pref", "brand_pref", "brand_pref must be one vendor of the catalog (%s); got %q", strings.Join(known, ", "), r.BrandPref)
		}
	}
	return nil
}

// chooseAuto returns the index of the cheapest tier whose corrected
// quality clears the floor and which meets the ceiling; with brand_pref,
// the cheapest such tier that has a model of that vendor, if any.
func chooseAuto(c *Catalog, fb Feedback, r Request) (int, error) {
	first := -1
	for i, t := range c.Tiers {
		if fb.Corrected(t, r.Difficulty) < r.QualityFloor {
			continue
		}
		if !fitsAny(r.allowed(c.ordered(t, r)), r) {
			continue
		}
		if first < 0 {
			first = i
		}
		if r.BrandPref == "" || hasVendor(t, r.BrandPref) {
			return i, nil
		}
	}
	if first >= 0 {
		return first, nil
	}
	if len(r.allowed(c.Models())) == 0 {
		if len(Request{Allow: r.Allow}.allowed(c.Models())) > 0 {
			return -1, errModelAPI("auto", nil, r)
		}
		return -1, errModelNotAllowed("auto", r)
	}
	return -1, impossible(c, fb, r)
}

func fitsAny(ms []Model, r Request) bool {
	for _, m := range ms {
		if fitModel(m, r).ok {
			return true
		}
	}
	return false
}

func hasVendor(t Tier, v string) bool {
	for _, m := range t.Models {
		if m.Vendor == v {
			return true
		}
	}
	return false
}

func usd(m MicroUSD) string { return fmt.Sprintf("%.6f", float64(m)/1e6) }

// impossible explains why no tier meets both the floor and the ceiling,
// and what would.
func impossible(c *Catalog, fb Feedback, r Request) error {
	band := BandOf(r.Difficulty)
	// Cheapest tier the key may use that clears the floor, and the cost
	// it needs.
	var floorTier *Tier
	var floorCost MicroUSD
	for i := range c.Tiers {
		t := c.Tiers[i]
		if len(r.allowed(t.Models)) > 0 && fb.Corrected(t, r.Difficulty) >= r.QualityFloor {
			floorTier = &t
			floorCost = cheapestEstimate(t, r)
			break
		}
	}
	if floorTier == nil && r.Allow != nil {
		if err := keyLimitsFloor(c, fb, r); err != nil {
			return err
		}
	}
	// Best quality within the ceiling.
	var ceilTier *Tier
	var ceilQ float64
	for i := range c.Tiers {
		t := c.Tiers[i]
		if fitsAny(r.allowed(t.Models), r) {
			if q := fb.Corrected(t, r.Difficulty); ceilTier == nil || q > ceilQ {
				ceilTier, ceilQ = &t, q
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no tier satisfies quality_floor %.2f and max_cost_usd %s for this request (difficulty %.3f, band %s, about %d prompt tokens): ",
		r.QualityFloor, usd(r.MaxCostMicro), r.Difficulty, band, r.InputTokens)
	switch {
	case floorTier == nil:
		best := c.Tiers[len(c.Tiers)-1]
		fmt.Fprintf(&b, "no tier reaches the quality floor at this difficulty (the best, %s, is predicted at %.2f); lower quality_floor to %.2f or less",
			best.Name, fb.Corrected(best, r.Difficulty), math.Floor(fb.Corrected(best, r.Difficulty)*100)/100)
	default:
		fmt.Fprintf(&b, "the cheapest tier that clears the floor, %s, is estimated at %s; raise max_cost_usd to at least %s",
			floorTier.Name, usd(floorCost), usd(floorCost))
		if ceilTier != nil {
			fmt.Fprintf(&b, ", or lower quality_floor to %.2f to use %s within the ceiling", math.Floor(ceilQ*100)/100, ceilTier.Name)
		} else {
			b.WriteString(" (no tier fits the ceiling at any quality; a shorter prompt or smaller max_tokens lowers the estimate)")
		}
	}
	field := "max_cost_usd"
	if floorTier == nil {
		field = "quality_floor"
	}
	return &domain.Error{Kind: domain.ErrInvalid, Code: "no_tier_satisfies_constraints", Field: field, Message: b.String()}
}

// keyLimitsFloor is the refusal of a request whose quality floor only
// tiers the key's models limit rules out would clear: it names the
// limit (a 403, as for a model the key may not use), and what the key
// could get by lowering the floor. Nil when no tier at all clears the
// floor (the floor is then the request's own problem).
func keyLimitsFloor(c *Catalog, fb Feedback, r Request) error {
	var clears *Tier
	var best *Tier
	var bestQ float64
	for i := range c.Tiers {
		t := c.Tiers[i]
		q := fb.Corrected(t, r.Difficulty)
		if clears == nil && q >= r.QualityFloor {
			clears = &t
		}
		if len(r.allowed(t.Models)) > 0 && (best == nil || q > bestQ) {
			best, bestQ = &t, q
		}
	}
	if clears == nil {
		return nil
	}
	msg := fmt.Sprintf("this API key may not use a tier that reaches quality_floor %.2f for this request (difficulty %.3f): the cheapest that does is %s, and the key may use only what %s allows",
		r.QualityFloor, r.Difficulty, clears.Name, r.limitText())
	if best != nil {
		msg += fmt.Sprintf("; lower quality_floor to %.2f to use %s, or use a key whose models limit includes %s", math.Floor(bestQ*100)/100, best.Name, clears.Name)
	}
	return &domain.Error{Kind: domain.ErrForbidden, Code: "model_not_allowed", Field: "quality_floor", Message: msg}
}

func cheapestEstimate(t Tier, r Request) MicroUSD {
	var best MicroUSD = -1
	r.MaxCostMicro = 0
	ms := r.allowed(t.Models)
	if len(ms) == 0 {
		ms = t.Models
	}
	for _, m := range ms {
		if f := fitModel(m, r); best < 0 || f.need < best {
			best = f.need
		}
	}
	return best
}

// ceilingError is the 400 of an explicitly named tier or model that the
// ceiling (or the context window) rules out: for a model named (pinned),
// what that model needs, not the cheapest of its tier.
func ceilingError(c *Catalog, r Request, start int, pinned *Model) error {
	t := c.Tiers[start]
	what, est := "the "+t.Name+" tier", cheapestEstimate(t, r)
	if pinned != nil {
		uncapped := r
		uncapped.MaxCostMicro = 0
		what, est = pinned.ID, fitModel(*pinned, uncapped).need
	}
	if r.MaxCostMicro > 0 && est > r.MaxCostMicro {
		return &domain.Error{Kind: domain.ErrInvalid, Code: "max_cost_exceeded", Field: "max_cost_usd",
			Message: fmt.Sprintf("%s is estimated at %s for this request (about %d prompt tokens), over max_cost_usd %s; raise max_cost_usd to at least %s or use model auto",
				what, usd(est), r.InputTokens, usd(r.MaxCostMicro), usd(est))}
	}
	return &domain.Error{Kind: domain.ErrInvalid, Code: "context_length_exceeded", Field: "messages",
		Message: fmt.Sprintf("about %d prompt tokens do not fit the context window of the %s tier (%d tokens); shorten the messages or use a larger tier",
			r.InputTokens, t.Name, t.ContextWindow)}
}
