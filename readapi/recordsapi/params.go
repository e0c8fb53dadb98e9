package recordsapi

import (
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
)

// Paging defaults and maxima, published in the OpenAPI document.
const (
	defaultLimit = 100
	maxLimit     = 1000
	maxOffset    = 1_000_000
)

// page reads limit (default 100, 1..1000) and offset (default 0).
func page(c *gin.Context) (limit, offset int, err error) {
	limit, err = intParam(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		return 0, 0, err
	}
	offset, err = intParam(c, "offset", 0, 0, maxOffset)
	return limit, offset, err
}

func intParam(c *gin.Context, name string, def, lo, hi int) (int, error) {
	v, ok := c.GetQuery(name)
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || !plainDigits(v) || n < lo || n > hi {
		return 0, domain.Invalid("invalid_"+name, name, "%s must be a whole number from %d to %d, written in decimal digits without a sign or leading zeros; got %q", name, lo, hi, v)
	}
	return n, nil
}

// plainDigits reports whether s is a whole number as written in decimal:
// digits only, no leading zero but in "0" (strconv.Atoi also reads +7 and
// 007), as the gateway's parameters are read.
func plainDigits(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	return strings.Trim(s, "0123456789") == ""
}

// flag reads a 0/1 switch (also true/false).
func flag(c *gin.Context, name string) (bool, error) {
	switch v := c.Query(name); v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	default:
		return false, domain.Invalid("invalid_"+name, name, "%s must be 1 or 0; got %q", name, v)
	}
}

// place reads state (USPS code or 2-digit FIPS) and county (5-digit FIPS)
// filters into a county-FIPS prefix.
func (s *server) place(c *gin.Context) (string, error) {
	county, err := countyParam(c)
	if err != nil {
		return "", err
	}
	if err := domain.Verbatim("state", c.Query("state")); err != nil {
		return "", err
	}
	state := strings.ToUpper(c.Query("state"))
	stateFIPS := ""
	if state != "" {
		for _, st := range s.gaz.States {
			if st.Code == state || st.FIPS == state {
				stateFIPS = st.FIPS
			}
		}
		if stateFIPS == "" {
			return "", domain.Invalid("invalid_state", "state", "state must be a USPS code (MD) or a 2-digit FIPS code (24); got %q", state)
		}
	}
	if county != "" {
		if stateFIPS != "" && county[:2] != stateFIPS {
			return "", domain.Invalid("county_not_in_state", "county", "county %s is not in state %s", county, state)
		}
		return county, nil
	}
	return stateFIPS, nil
}

// countyParam reads the county filter: empty, or a 5-digit FIPS code.
func countyParam(c *gin.Context) (string, error) {
	county := c.Query("county")
	if err := domain.Verbatim("county", county); err != nil {
		return "", err
	}
	if county != "" && (len(county) != 5 || strings.Trim(county, "0123456789") != "") {
		return "", domain.Invalid("invalid_county", "county", "county must be a 5-digit FIPS code (24510 is Baltimore City); got %q", county)
	}
	return county, nil
}
