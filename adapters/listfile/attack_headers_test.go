package listfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/listfile"
	"github.com/arr-dev/arr/domain"
)

// TestAttackMappingNamesAMailingHeader: a mapping that names a header of
// the owner's mailing address as a column of the property is refused,
// naming the header (issue 39 finding 6): a mailing address is never
// read as the property's.
func TestAttackMappingNamesAMailingHeader(t *testing.T) {
	t.Parallel()
	for name, m := range map[string]string{
		"address": `{"address": "Mailing Address"}`,
		"unit":    `{"apn": "APN", "unit": "Mailing Unit #"}`,
		"city":    `{"address": "Address", "city": "Owner Mailing City"}`,
		"zip":     `{"address": "Address", "zip": "mail_zip"}`,
	} {
		_, err := listfile.ReadMapping(strings.NewReader(m))
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != "invalid_mapping" || !strings.Contains(strings.ToLower(de.Message), "mail") {
			t.Errorf("%s: mapping %s: %v, want invalid_mapping naming the mailing header", name, m, err)
		}
	}
	// The mailing headers are for the mapping's mailing list.
	if _, err := listfile.ReadMapping(strings.NewReader(`{"address": "Address", "mailing": ["Mailing Address"]}`)); err != nil {
		t.Errorf("mailing: %v", err)
	}
	// ParseWith checks a mapping it is given as ReadMapping does.
	file := "Mailing Address,City\n5 Main St,Baltimore\n"
	if l, err := listfile.ParseWith(strings.NewReader(file), &listfile.Mapping{Address: "Mailing Address"}); err == nil {
		t.Errorf("ParseWith read the mailing address as the property's: %+v", l.Rows)
	}
}

// TestAttackBOMBeforeAQuotedHeader: a UTF-8 byte order mark before a
// quoted header cell is no bare quote (issue 39 finding 7).
func TestAttackBOMBeforeAQuotedHeader(t *testing.T) {
	t.Parallel()
	l, err := listfile.Parse(strings.NewReader("\ufeff\"Address\",\"City\"\n\"5 Main St\",\"Baltimore\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Rows) != 1 || l.Rows[0].Address != "5 Main St" || l.Rows[0].City != "Baltimore" {
		t.Fatalf("rows %+v", l.Rows)
	}
}

// TestAttackMailIsNoEmail: a "Mail" header is the owner's mailing
// address, not an e-mail (issue 39 finding 8).
func TestAttackMailIsNoEmail(t *testing.T) {
	t.Parallel()
	l, err := listfile.Parse(strings.NewReader("Address,Mail\n5 Main St,100 Oak Ave Towson MD\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Rows[0].Email != "" {
		t.Fatalf("the mailing address was read as an e-mail: %+v", l.Rows[0])
	}
	for _, c := range l.Columns {
		if c == listfile.ColEmail {
			t.Fatalf("columns %v", l.Columns)
		}
	}
}

// TestMappingMailingTwiceSaysBoth: a header named as the address and
// under mailing is a header named twice, said so first.
func TestMappingMailingTwiceSaysBoth(t *testing.T) {
	t.Parallel()
	_, err := listfile.ReadMapping(strings.NewReader(`{"address": "Mailing address", "mailing": ["Mailing address"]}`))
	if err == nil || !strings.Contains(err.Error(), "both") {
		t.Fatalf("%v, want an error saying both", err)
	}
}
