package listfile

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
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
// Situs Address, Site Address, Situs City, Situs Zip). A bare unit, city,
// state, zip or county header ("City", "Address 2") is read by the address
// block it follows (headerRoles): after a mailing column it is the
// mailing address's. docs/lists.md prints the table.
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

// A header of the owner's mailing address has a word beginning with
// "mail" ("Mailing Address", "Mail", "MAILADDR", "Tax Mailing Address",
// "Owner 1 Mailing Zip"; a bare "Mail" is a mailing address, never an
// e-mail), or begins with one of mailingOwners and goes on to one of
// addressWords ("Owner's Address", "Owner Addr", "OwnerCity",
// "taxpayer_zip"), or begins with "tax bill".
var (
	mailingOwners = []string{"owner", "taxpayer", "recipient"}
	addressWords  = []string{"address", "addr", "adr", "street", "city", "state", "zip", "postal", "unit", "line"}
)

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

// Key is a header as the alias table writes it: read in Unicode NFKC
// (full-width letters are letters), lower case, a UTF-8 BOM dropped,
// apostrophes dropped ("Owner's" is "owners"), words split at other
// punctuation and at camelCase ("propertyAddress", "Property_Address"
// and "PROPERTY ADDRESS" are all "property address"; "Unit #" is "unit";
// "E-Mail" is "email").
func Key(h string) string {
	h = norm.NFKC.String(strings.TrimPrefix(strings.TrimSpace(h), "\ufeff"))
	var b strings.Builder
	rs := []rune(h)
	for i, r := range rs {
		switch {
		case strings.ContainsRune("'\u2018\u2019\u02bc`", r):
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			b.WriteRune(' ')
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(' ')
		}
	}
	words := strings.Fields(b.String())
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "e" && words[i+1] == "mail" {
			words = append(words[:i], append([]string{"email"}, words[i+2:]...)...)
		}
	}
	return strings.Join(words, " ")
}

// mixedScript: the header has Latin letters and letters of another script
// ("Mаiling", its а Cyrillic), the look-alike of another header. The
// header table never reads one, and a mapping may not name one.
func mixedScript(h string) bool {
	latin, other := false, false
	for _, r := range norm.NFKC.String(h) {
		switch {
		case unicode.Is(unicode.Latin, r):
			latin = true
		case unicode.IsLetter(r):
			other = true
		}
	}
	return latin && other
}

// role is the column a header names: one of arr's, ColMailing, or "" (a
// header the table does not know, or one of mixed scripts).
func role(aliases map[string]string, header string) string {
	if mixedScript(header) {
		return ""
	}
	k := Key(header)
	if c, ok := aliases[k]; ok {
		return c
	}
	if isMailing(k) {
		return ColMailing
	}
	return ""
}

// isMailing: the header (as Key writes it) is one of the owner's mailing
// address (mailingOwners).
func isMailing(k string) bool {
	words := strings.Fields(k)
	for _, w := range words {
		if strings.HasPrefix(w, "mail") {
			return true
		}
	}
	joined := strings.Join(words, "")
	if strings.HasPrefix(joined, "taxbill") {
		return true
	}
	for _, o := range mailingOwners {
		if rest, ok := strings.CutPrefix(joined, o); ok {
			for _, a := range addressWords {
				if strings.Contains(rest, a) {
					return true
				}
			}
		}
	}
	return false
}
