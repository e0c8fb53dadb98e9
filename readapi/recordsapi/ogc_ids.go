package recordsapi

import (
	"strings"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/projections/parcels"
)

// featureID writes a feature's id: its county, "-", and its APN with
// letters, digits, '.' and '-' as they are, a space as '_', and every
// other byte as '~' and two upper-case hex digits. The id holds only
// characters a URL path carries unescaped, so a client that puts it in
// /items/{featureId} as it is, or percent-encoded, reaches the feature
// (an APN may hold '/', spaces or '%'); featureKey reads it back.
func featureID(k parcels.ParcelKey) string {
	var b strings.Builder
	b.WriteString(k.County)
	b.WriteByte('-')
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(k.APN); i++ {
		c := k.APN[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('_')
		default:
			b.WriteByte('~')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// featureKey reads an id featureID wrote; any other string, and one that
// decodes to text the text rule refuses, is 404 feature_not_found (an id
// no feature has).
func featureKey(collection, id string) (parcels.ParcelKey, error) {
	notFound := domain.NotFound("feature_not_found", "collection %s has no feature %q: feature ids are the id members of its items (county FIPS, '-', the APN with '_' for a space)", collection, id)
	county, apn, ok := strings.Cut(id, "-")
	if !ok || len(county) != 5 || strings.Trim(county, "0123456789") != "" || apn == "" {
		return parcels.ParcelKey{}, notFound
	}
	var b strings.Builder
	for i := 0; i < len(apn); i++ {
		c := apn[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-':
			b.WriteByte(c)
		case c == '_':
			b.WriteByte(' ')
		case c == '~' && i+2 < len(apn) && isUpperHex(apn[i+1]) && isUpperHex(apn[i+2]):
			v := unhex(apn[i+1])<<4 | unhex(apn[i+2])
			if v == ' ' || v == '.' || v == '-' || (v >= '0' && v <= '9') || (v >= 'a' && v <= 'z') || (v >= 'A' && v <= 'Z') {
				return parcels.ParcelKey{}, notFound // not how featureID writes it
			}
			b.WriteByte(v)
			i += 2
		default:
			return parcels.ParcelKey{}, notFound
		}
	}
	// Every APN of the read model passes the text rule: an id that decodes
	// to a NUL, another control character or invalid UTF-8 names none (and
	// PostgreSQL would refuse it as text).
	if !text.Valid(b.String()) {
		return parcels.ParcelKey{}, notFound
	}
	return parcels.ParcelKey{County: county, APN: b.String()}, nil
}

func isUpperHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}
