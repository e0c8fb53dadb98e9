package parcels

import "fmt"

// The ways a list row is matched to a parcel (MatchSQL's how).
const (
	MatchedByAPN     = "apn"
	MatchedByAddress = "address"
)

// The tiers of MatchSQL, best first: the row's APN; its street address
// and unit; its street address at a parcel without a unit; its street
// address at parcels that have units when the row names none (never a
// match: which unit is a guess).
const (
	TierAPN         = 1
	TierUnit        = 2
	TierStreet      = 3
	TierUnitsOfRows = 4
)

// MatchSQL is the one rule by which a list row is matched to a parcel, for
// the lists read model and the monitors' outbox alike: a LATERAL subquery
// over the parcels table named, for a row aliased r with the columns
// apn_norm, within (a county or state FIPS code, or empty), street_key,
// unit_key and unit_conflict (records.ListMatchKeys; a row whose address
// and unit column name two units is matched by its APN only). It yields at most one row — county, apn,
// how, tier, n — the first parcel of the best tier that has any, and n,
// how many parcels that tier has: the row is matched only when n is 1 and
// tier is not TierUnitsOfRows; otherwise it is ambiguous, never guessed.
// A parcel's norm_address is records.NormalizeAddress's: its street key,
// then " UNIT " and its unit when it has one.
func MatchSQL(parcels string) string {
	return fmt.Sprintf(`
    SELECT c.county, c.apn, c.how, c.tier, c.n FROM (
      SELECT q.county, q.apn, q.how, q.tier, count(*) OVER (PARTITION BY q.tier) AS n FROM (
        SELECT 1 AS tier, 'apn' AS how, p.county, p.apn FROM %[1]s p
         WHERE r.apn_norm <> '' AND p.apn_norm = r.apn_norm AND left(p.county, length(r.within)) = r.within
        UNION ALL
        SELECT 2, 'address', p.county, p.apn FROM %[1]s p
         WHERE r.street_key <> '' AND NOT r.unit_conflict AND p.norm_address <> '' AND r.unit_key <> '' AND p.norm_address = r.street_key || ' UNIT ' || r.unit_key
           AND left(p.county, length(r.within)) = r.within
        UNION ALL
        SELECT 3, 'address', p.county, p.apn FROM %[1]s p
         WHERE r.street_key <> '' AND NOT r.unit_conflict AND p.norm_address <> '' AND p.norm_address = r.street_key AND left(p.county, length(r.within)) = r.within
        UNION ALL
        SELECT 4, 'address', p.county, p.apn FROM %[1]s p
         WHERE r.street_key <> '' AND NOT r.unit_conflict AND p.norm_address <> '' AND r.unit_key = '' AND p.norm_address > r.street_key || ' UNIT '
           AND p.norm_address < r.street_key || ' UNIT!' AND left(p.county, length(r.within)) = r.within
      ) q
    ) c ORDER BY c.tier, c.county, c.apn LIMIT 1`, parcels)
}
