package account

// MicroUSD is an amount of money in millionths of a US dollar.
type MicroUSD int64

// Limits are what a plan allows on each service.
type Limits struct {
	// GatewayRequestsPerDay caps chat completions per account per UTC day
	// (all of the account's gateway keys together).
	GatewayRequestsPerDay int64 `json:"gateway_requests_per_day"`
	// AnswerCallsPerDay caps answer calls per key per UTC day.
	AnswerCallsPerDay int64 `json:"answer_calls_per_day"`
	// RecordsRequestsPerHour caps keyed records requests per key per
	// fixed clock hour.
	RecordsRequestsPerHour int64 `json:"records_requests_per_hour"`
	// DeepAnswers allows mode=deep and tier=pro on the answer service.
	DeepAnswers bool `json:"deep_answers"`
	// BrandPref allows brand_pref on the gateway.
	BrandPref bool `json:"brand_pref"`
}

// Offer is one plan of the catalog.
type Offer struct {
	Plan  Plan   `json:"id"`
	Title string `json:"name"`
	// MonthlyPrice is the price per month; Enterprise's is the list price
	// of its base tier.
	MonthlyPrice MicroUSD `json:"-"`
	Limits       Limits   `json:"limits"`
	// SelfServe is false for plans bought through sales, not Checkout.
	SelfServe bool `json:"self_serve"`
}

// Catalog is the plan catalog, cheapest first. Free's numbers are the
// interface spec's; the rest are ours, published at GET /v1/plans.
func Catalog() []Offer {
	return []Offer{
		{Plan: Free, Title: "Free", MonthlyPrice: 0, SelfServe: true, Limits: Limits{
			GatewayRequestsPerDay: 100, AnswerCallsPerDay: 100, RecordsRequestsPerHour: 1000}},
		{Plan: Starter, Title: "Starter", MonthlyPrice: 19_000_000, SelfServe: true, Limits: Limits{
			GatewayRequestsPerDay: 2_000, AnswerCallsPerDay: 1_000, RecordsRequestsPerHour: 1000}},
		{Plan: Pro, Title: "Pro", MonthlyPrice: 99_000_000, SelfServe: true, Limits: Limits{
			GatewayRequestsPerDay: 20_000, AnswerCallsPerDay: 5_000, RecordsRequestsPerHour: 5_000, DeepAnswers: true, BrandPref: true}},
		{Plan: Scale, Title: "Scale", MonthlyPrice: 499_000_000, SelfServe: true, Limits: Limits{
			GatewayRequestsPerDay: 200_000, AnswerCallsPerDay: 50_000, RecordsRequestsPerHour: 20_000, DeepAnswers: true, BrandPref: true}},
		{Plan: Enterprise, Title: "Enterprise", MonthlyPrice: 2_000_000_000, SelfServe: false, Limits: Limits{
			GatewayRequestsPerDay: 2_000_000, AnswerCallsPerDay: 500_000, RecordsRequestsPerHour: 100_000, DeepAnswers: true, BrandPref: true}},
	}
}

// Offer returns the catalog entry of a plan; unknown plans get Free's.
func (p Plan) Offer() Offer {
	for _, o := range Catalog() {
		if o.Plan == p {
			return o
		}
	}
	return Catalog()[0]
}
