package account

import (
	"github.com/arr-dev/arr/domain"
)

// Service names one of arr's three HTTP services; each has its own keys.
type Service string

const (
	Answer  Service = "answer"
	Gateway Service = "gateway"
	Records Service = "records"
)

// Services lists every service in a stable order.
func Services() []Service { return []Service{Answer, Gateway, Records} }

// KeyPrefix is the fixed, service-specific start of every secret, so a key
// pasted into the wrong service is recognisable at a glance and by secret
// scanners.
func (s Service) KeyPrefix() string {
	switch s {
	case Answer:
		return "arr_ans_"
	case Gateway:
		return "arr_gw_"
	case Records:
		return "arr_rec_"
	}
	return ""
}

// MaxActiveKeys is how many unrevoked keys an account may hold for the
// service at once. Records: 5 (the interface spec). Gateway and answer: 10,
// our choice, documented in their OpenAPI documents.
func (s Service) MaxActiveKeys() int {
	if s == Records {
		return 5
	}
	return 10
}

// ParseService validates a service name.
func ParseService(s string) (Service, error) {
	switch Service(s) {
	case Answer, Gateway, Records:
		return Service(s), nil
	}
	return "", domain.Invalid("invalid_service", "service", "service must be one of answer, gateway, records; got %q", s)
}
