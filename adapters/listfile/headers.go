package listfile

import (
	"strings"
	"unicode"
)

// The columns a list row has, in arr's names.
const (
	ColAPN     = "apn"
	ColCounty  = "county"
	ColAddress = "address"
	ColUnit    = "unit"
	ColCity    = "city"
	ColState   = "state"
	ColZip     = "zip"
	ColPhone   = "phone"
	ColEmail   = "email"
	// ColMailing is any column of the owner's mailing address: recognized
	// so that it is never read as the property's, and not kept.
	ColMailing = "mailing"
)

// columns are arr's columns in the order List.Columns names them.
var columns = []string{ColAPN, ColCounty, ColAddress, ColUnit, ColCity, ColState, ColZip, ColPhone, ColEmail}

// HeaderAliases is the header table: for each of arr's columns, the header
// names the list builders and county exports write for it, as Key writes
// them (lower case, words split at "_", "-", ".", "/" and camelCase). It
// covers PropStream (Address, City, State, Zip, APN; Mailing Address …),
// DealMachine (property_address_line_1, property_address_city …,
// owner_address_line_1 …), BatchData (Property Address, Property City …,
// Owner Mailing Address …), REISift (Property address, Property city …,
// Mailing address …) and county assessor exports (Parcel Number, Folio,
// Situs Address, Site Address, Situs City, Situs Zip). docs/lists.md
// prints it.
var HeaderAliases = map[string][]string{
	ColAPN: {"apn", "parcel", "parcel id", "parcel number", "parcel no", "parcel num", "parcelid", "parcel apn", "pin",
		"folio", "folio number", "folio id", "bcpa folio", "account", "account number", "tax account", "tax account number",
		"tax id", "assessor parcel number", "property apn", "property parcel number", "apn parcel id", "apn number", "strap"},
	ColCounty: {"county", "county fips", "fips", "county code", "county fips code", "property county", "property county name",
		"county name", "situs county", "property fips", "fips code"},
	ColAddress: {"address", "property address", "street address", "site address", "situs address", "situs", "site",
		"property street", "property street address", "street", "address line 1", "address 1", "address1",
		"property address line 1", "property address 1", "property address1", "site street", "situs street",
		"situs street address", "location address", "physical address", "property location"},
	ColUnit: {"unit", "apt", "unit number", "unit no", "apartment", "suite", "property unit", "property unit number",
		"address line 2", "address 2", "address2", "property address line 2", "property address 2", "site unit", "situs unit",
		"unit num"},
	ColCity: {"city", "property city", "site city", "situs city", "property address city", "location city", "physical city"},
	ColState: {"state", "property state", "site state", "situs state", "property address state", "st", "location state",
		"physical state"},
	ColZip: {"zip", "zipcode", "zip code", "postal code", "zip5", "zip 5", "property zip", "property zip code", "property zipcode",
		"property postal code", "site zip", "site zip code", "situs zip", "situs zip code", "property address zip",
		"property address zipcode", "property address zip code", "location zip", "physical zip"},
	ColPhone: {"phone", "phone number", "telephone", "tel", "mobile", "phone 1", "phone1", "cell", "cell phone", "mobile phone",
		"primary phone", "owner phone", "contact phone"},
	ColEmail: {"email", "e mail", "email address", "email 1", "email1", "owner email", "contact email"},
}

// mailingPrefixes start the headers of the owner's mailing address
// ("Mailing Address", "Mail", "Mail City", "owner_address_zip", "Owner
// Mailing State"), whatever follows. A bare "Mail" is a mailing address,
// never an e-mail.
var mailingPrefixes = []string{"mailing", "mail", "owner address", "owner mailing", "owner city", "owner state", "owner zip", "owner street", "owner unit", "recipient address",
	"recipient city", "recipient state", "recipient zip", "tax bill", "taxpayer address", "taxpayer city", "taxpayer state",
	"taxpayer zip"}

// aliasIndex maps every alias to its column.
func aliasIndex() map[string]string {
	m := map[string]string{}
	for col, as := range HeaderAliases {
		for _, a := range as {
			m[a] = col
		}
	}
	return m
}

// Key is a header as the alias table writes it: lower case, a UTF-8 BOM
// dropped, words split at punctuation and at camelCase
// ("propertyAddress", "Property_Address" and "PROPERTY ADDRESS" are all
// "property address"; "Unit #" is "unit").
func Key(h string) string {
	h = strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")
	var b strings.Builder
	rs := []rune(h)
	for i, r := range rs {
		switch {
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			b.WriteRune(' ')
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// role is the column a header names: one of arr's, ColMailing, or "".
func role(aliases map[string]string, header string) string {
	k := Key(header)
	if c, ok := aliases[k]; ok {
		return c
	}
	if isMailing(k) {
		return ColMailing
	}
	return ""
}

// isMailing: the header (as Key writes it) begins as the owner's mailing
// address's do (mailingPrefixes).
func isMailing(k string) bool {
	for _, p := range mailingPrefixes {
		if k == p || strings.HasPrefix(k, p+" ") {
			return true
		}
	}
	return false
}
