package cursor

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/arr-dev/arr/projections/parcels"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
)

// Layout of a cursor before base64url (no padding): a version byte, the
// first fingerprintBytes of the query's SHA-256, the 5-digit county FIPS
// code, the APN's length in bytes (big-endian uint16) and the APN (1 to
// records.MaxRowTextChars characters of valid text).
const (
	version          = 1
	fingerprintBytes = 8
	countyBytes      = 5
	headerBytes      = 1 + fingerprintBytes + countyBytes + 2
	maxAPNBytes      = records.MaxRowTextChars * utf8.UTFMax
)

// MaxLen is the length of the longest cursor Encode makes; longer input is
// refused before it is decoded.
var MaxLen = base64.RawURLEncoding.EncodedLen(headerBytes + maxAPNBytes)

// Query is the search a cursor pages through. Layers are compared as a
// set: their order does not matter.
type Query struct {
	BBox   records.BBox
	Layers []string
}

// fingerprint names q in a cursor.
func (q Query) fingerprint() []byte {
	h := sha256.New()
	var b [8]byte
	for _, f := range []float64{q.BBox.West, q.BBox.South, q.BBox.East, q.BBox.North} {
		binary.BigEndian.PutUint64(b[:], math.Float64bits(f))
		h.Write(b[:])
	}
	layers := slices.Clone(q.Layers)
	slices.Sort(layers)
	for _, l := range slices.Compact(layers) {
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	return h.Sum(nil)[:fingerprintBytes]
}

// Encode returns the cursor that continues q after the parcel k.
func Encode(q Query, k parcels.ParcelKey) string {
	b := make([]byte, 0, headerBytes+len(k.APN))
	b = append(b, version)
	b = append(b, q.fingerprint()...)
	b = append(b, k.County...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.APN)))
	b = append(b, k.APN...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode returns the parcel key a cursor of q continues after: nil for ""
// (the first page). Any string Encode did not make for q, including a
// cursor of another bbox or layer filter, is a domain validation error
// with code invalid_cursor on field cursor. Safe for concurrent use.
func Decode(q Query, s string) (*parcels.ParcelKey, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > MaxLen {
		return nil, invalid("it is longer than any cursor this service makes")
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, invalid("it is not unpadded base64url")
	}
	if len(b) <= headerBytes || len(b) > headerBytes+maxAPNBytes || b[0] != version ||
		int(binary.BigEndian.Uint16(b[headerBytes-2:headerBytes])) != len(b)-headerBytes {
		return nil, invalid("its length or version is not one of a cursor")
	}
	if !bytes.Equal(b[1:1+fingerprintBytes], q.fingerprint()) {
		return nil, domain.Invalid("invalid_cursor", "cursor",
			"cursor belongs to another search: a cursor continues only the search (bbox and layers) whose next_cursor it was; start again without cursor")
	}
	county, apn := string(b[1+fingerprintBytes:1+fingerprintBytes+countyBytes]), string(b[headerBytes:])
	for _, r := range county {
		if r < '0' || r > '9' {
			return nil, invalid("its county is not a FIPS code")
		}
	}
	if !text.Valid(apn) || utf8.RuneCountInString(apn) > records.MaxRowTextChars {
		return nil, invalid("its parcel number is not valid text")
	}
	return &parcels.ParcelKey{County: county, APN: apn}, nil
}

func invalid(why string) error {
	return domain.Invalid("invalid_cursor", "cursor", "cursor is not one this service returned (%s); pass next_cursor as it is, or start again without cursor", why)
}
