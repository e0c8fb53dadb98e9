package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/arr-dev/arr/projections/parcels"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
)

// Layout of a cursor before base64url (no padding): a version byte, a
// MAC of fingerprintBytes (the first bytes of HMAC-SHA256 under the
// codec's key of the version, the query's SHA-256 and every byte after
// the MAC), for a ranked search (version 4) the rank of the last parcel
// (a float64, big-endian), the 5-digit county FIPS code, the APN's length
// in bytes (big-endian uint16) and the APN (1 to records.MaxRowTextChars
// characters of valid text). Versions 1 and 2 were unauthenticated (a
// bare SHA-256 of the query) and are refused.
const (
	version          = 3
	rankedVersion    = 4
	fingerprintBytes = 16
	rankBytes        = 8
	countyBytes      = 5
	headerBytes      = 1 + fingerprintBytes + countyBytes + 2
	maxAPNBytes      = records.MaxRowTextChars * utf8.UTFMax
)

// MaxLen is the length of the longest cursor Encode or EncodeRanked makes;
// longer input is refused before it is decoded.
var MaxLen = base64.RawURLEncoding.EncodedLen(headerBytes + rankBytes + maxAPNBytes)

// Query is the search a cursor pages through. Layers are compared as a
// set: their order does not matter. Search names a search other than the
// bounding box's (a nearby, address, APN or polygon search, written out
// whole), empty for a bbox search.
type Query struct {
	BBox   records.BBox
	Layers []string
	Search string
}

// Codec makes and reads cursors authenticated with its key: a cursor
// another key made, or any byte of one changed, is invalid_cursor. Every
// process that serves one database must use the same key (cmd/arr
// derives it from the records master key the database is bound to). Safe
// for concurrent use.
type Codec struct{ key []byte }

// MinKeyBytes is the shortest key New takes.
const MinKeyBytes = 32

// New returns the codec of key (at least MinKeyBytes bytes).
func New(key []byte) (*Codec, error) {
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("cursor: a key of %d bytes; at least %d are needed", len(key), MinKeyBytes)
	}
	return &Codec{key: slices.Clone(key)}, nil
}

// mac authenticates a cursor's bytes b (its MAC field aside) for q.
func (c *Codec) mac(q Query, b []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(b[:1])
	m.Write(q.fingerprint())
	m.Write(b[1+fingerprintBytes:])
	return m.Sum(nil)[:fingerprintBytes]
}

// seal writes b's MAC for q into its MAC field and encodes it.
func (c *Codec) seal(q Query, b []byte) string {
	copy(b[1:1+fingerprintBytes], c.mac(q, b))
	return base64.RawURLEncoding.EncodeToString(b)
}

// fingerprint names q in a cursor's MAC.
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
	if q.Search != "" {
		h.Write([]byte{1})
		h.Write([]byte(q.Search))
	}
	return h.Sum(nil)
}

// EncodeRanked returns the cursor that continues a ranked search q (nearest
// first, best match first) after the parcel k of rank rank.
func (c *Codec) EncodeRanked(q Query, rank float64, k parcels.ParcelKey) string {
	b := make([]byte, 0, headerBytes+rankBytes+len(k.APN))
	b = append(b, rankedVersion)
	b = append(b, make([]byte, fingerprintBytes)...)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(rank))
	b = append(b, k.County...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.APN)))
	b = append(b, k.APN...)
	return c.seal(q, b)
}

// DecodeRanked returns the rank and parcel key a cursor of the ranked
// search q continues after: nil for "" (the first page). It refuses as
// Decode does.
func (c *Codec) DecodeRanked(q Query, s string) (*parcels.ParcelKey, float64, error) {
	if s == "" {
		return nil, 0, nil
	}
	b, err := decodeBytes(s, rankedVersion, rankBytes)
	if err != nil {
		return nil, 0, err
	}
	rank := math.Float64frombits(binary.BigEndian.Uint64(b[1+fingerprintBytes:]))
	if math.IsNaN(rank) || math.IsInf(rank, 0) {
		return nil, 0, invalid("its rank is not a number")
	}
	k, err := c.keyOf(q, b, rankBytes)
	return k, rank, err
}

// Encode returns the cursor that continues q after the parcel k.
func (c *Codec) Encode(q Query, k parcels.ParcelKey) string {
	b := make([]byte, 0, headerBytes+len(k.APN))
	b = append(b, version)
	b = append(b, make([]byte, fingerprintBytes)...)
	b = append(b, k.County...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.APN)))
	b = append(b, k.APN...)
	return c.seal(q, b)
}

// Decode returns the parcel key a cursor of q continues after: nil for ""
// (the first page). Any string Encode did not make for q, including a
// cursor of another bbox or layer filter, is a domain validation error
// with code invalid_cursor on field cursor. Safe for concurrent use.
func (c *Codec) Decode(q Query, s string) (*parcels.ParcelKey, error) {
	if s == "" {
		return nil, nil
	}
	b, err := decodeBytes(s, version, 0)
	if err != nil {
		return nil, err
	}
	return c.keyOf(q, b, 0)
}

// decodeBytes decodes s, a cursor of version v whose header holds extra
// bytes after the fingerprint, and checks its length.
func decodeBytes(s string, v byte, extra int) ([]byte, error) {
	if len(s) > MaxLen {
		return nil, invalid("it is longer than any cursor this service makes")
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, invalid("it is not unpadded base64url")
	}
	head := headerBytes + extra
	if len(b) <= head || len(b) > head+maxAPNBytes || b[0] != v ||
		int(binary.BigEndian.Uint16(b[head-2:head])) != len(b)-head {
		return nil, invalid("its length or version is not one of a cursor of this search")
	}
	return b, nil
}

// keyOf checks that b, a cursor's bytes with extra header bytes after the
// fingerprint, belongs to q and returns its parcel key.
func (c *Codec) keyOf(q Query, b []byte, extra int) (*parcels.ParcelKey, error) {
	if !hmac.Equal(b[1:1+fingerprintBytes], c.mac(q, b)) {
		return nil, domain.Invalid("invalid_cursor", "cursor",
			"cursor is not one this service returned for this search: a cursor continues only the search (its parameters and layers) whose next_cursor it was, unchanged; start again without cursor")
	}
	at := 1 + fingerprintBytes + extra
	county, apn := string(b[at:at+countyBytes]), string(b[headerBytes+extra:])
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
