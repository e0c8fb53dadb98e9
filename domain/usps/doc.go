// Package usps normalizes United States postal addresses as USPS
// Publication 28 (Postal Addressing Standards) writes them: street suffix
// abbreviations (Appendix C1: AVENUE, AV, AVEN → AVE), directionals
// (Appendix B: WEST → W, NORTHWEST → NW), secondary unit designators
// (Appendix C2: APARTMENT → APT, SUITE → STE, and "#"), state names
// (Appendix B: Maryland → MD) and ZIP Codes (ZIP+4 → the 5-digit ZIP).
// Upper case, no punctuation, house numbers without leading zeros, read in
// Unicode NFKC (full-width digits are digits; a letter and its combining
// mark are one letter).
//
// A unit designator is one only after the street (STE in "Sault Ste Marie
// Rd" is Sainte, and the suffix is never lost), and every word after a
// unit stays in it ("Ste 100 North" is unit "100N", "Apt 2 Baltimore" unit
// "2 BALTIMORE": never unit 100 or 2).
//
// Parse splits an address line into its parts; Address.Street is the key
// two lines are matched by (house number and street, no unit) and
// Address.Key the same with its unit. Everything in arr that compares
// addresses (parcels' addresses, imported list rows, searches) goes
// through this package, so that both sides of a comparison are
// normalized alike.
package usps
