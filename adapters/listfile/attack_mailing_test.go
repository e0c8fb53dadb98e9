package listfile_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/listfile"
	"github.com/arr-dev/arr/domain"
)

// mailingHeaders are headers of the owner's mailing address that the
// re-attack of issue 39 found read as the property's: run together,
// abbreviated, with an apostrophe, after another word or a number, in
// full-width letters, and with a Cyrillic look-alike letter.
var mailingHeaders = []string{"MAILADDRESS", "MAILADDR", "MailAddr", "Mail_City", "Owner's Address", "Owner’s Address",
	"Owner Addr", "OwnerAddress", "Tax Mailing Address", "Owner 1 Mailing Address", "Owner 2 Mailing Zip",
	"ＭＡＩＬＩＮＧ ＡＤＤＲＥＳＳ", "M\u0430iling Address", "Own\u0435r Address"}

// TestAttackMailingHeadersAreRefused: a mapping that names a mailing
// header as a column of the property's address is refused, however the
// header is written.
func TestAttackMailingHeadersAreRefused(t *testing.T) {
	t.Parallel()
	for _, h := range mailingHeaders {
		for _, col := range []string{"address", "city", "zip"} {
			m := `{"apn": "APN", "` + col + `": "` + h + `"}`
			_, err := listfile.ReadMapping(strings.NewReader(m))
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != "invalid_mapping" {
				t.Errorf("mapping %s: %v, want invalid_mapping", m, err)
			}
		}
	}
}

// TestAttackMailingHeadersAreNeverRead: the header table never reads a
// mailing header as the property's address: a list whose only address is
// the owner's has no property column, and beside a property address the
// mailing column is not kept.
func TestAttackMailingHeadersAreNeverRead(t *testing.T) {
	t.Parallel()
	for _, h := range mailingHeaders {
		if l, err := listfile.Parse(strings.NewReader(h + ",City\n100 Oak Ave,Towson\n")); err == nil {
			t.Errorf("header %q: read as the property's address: %+v", h, l.Rows)
		}
		l, err := listfile.Parse(strings.NewReader("Address," + h + "\n5 Main St,100 Oak Ave\n"))
		if err != nil {
			t.Errorf("header %q beside Address: %v", h, err)
			continue
		}
		if r := l.Rows[0]; r.Address != "5 Main St" || r.City != "" || r.Unit != "" {
			t.Errorf("header %q: row %+v", h, r)
		}
	}
}

// TestHeaderFoldKeepsPropertyHeaders: folding headers (NFKC, apostrophes,
// look-alikes) leaves the property's and the contact columns as they were:
// an e-mail is no mailing address, and full-width letters are letters.
func TestHeaderFoldKeepsPropertyHeaders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, header, col string }{
		{"property address", "Property Address", listfile.ColAddress},
		{"full-width address", "Ａｄｄｒｅｓｓ", listfile.ColAddress},
		{"situs", "SITUS_ADDRESS", listfile.ColAddress},
		{"e-mail", "E-Mail", listfile.ColEmail},
		{"e-mail address", "E-Mail Address", listfile.ColEmail},
		{"owner email", "Owner Email", listfile.ColEmail},
		{"owner phone", "Owner Phone", listfile.ColPhone},
	} {
		l, err := listfile.Parse(strings.NewReader("APN," + tc.header + "\n1,x@y.z\n"))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Contains(l.Columns, tc.col) {
			t.Errorf("%s: header %q read as columns %v, want %s among them", tc.name, tc.header, l.Columns, tc.col)
		}
	}
	if got := listfile.Key("Owner’s  ADDRESS"); got != "owners address" {
		t.Errorf("Key = %q, want owners address", got)
	}
}
