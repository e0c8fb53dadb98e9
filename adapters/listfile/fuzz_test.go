package listfile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/listfile"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/eventstore"
)

// FuzzParse: a list file is refused, or every text it yields passes the
// text rule and the events an import appends can be stored.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"apn,address,phone,email\n1,1 Main St,555,a@b.example\n",
		"parcel_id,property_address\n\"12\",\"2 Main\nSt\"\n",
		"apn,address\n1,bad\x00cell\n",
		"ap\x00n,address\n1,x\n",
		"\ufeffAPN;Address\n1;x\n",
		"apn\n\xff\xfe\n",
		"address,city\n1 Main,\"Town\r\nX\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := listfile.Parse(strings.NewReader(string(data)))
		if err != nil {
			var de *domain.Error
			if errors.As(err, &de) && !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("refused with a domain error that is not a validation error: %v", err)
			}
			return // the import answers 400 with the message
		}
		id, account := uuid.New(), uuid.New()
		evs := []domain.Event{&records.ListImported{ListID: id, AccountID: account, Name: "fuzz", Rows: len(l.Rows), Columns: l.Columns, ImportedAt: time.Unix(0, 0).UTC()}}
		chunk := &records.ListRowsImported{ListID: id, AccountID: account}
		for i, r := range l.Rows {
			for _, s := range []string{r.APN, r.County, r.CountyName, r.Address, r.Unit, r.City, r.State, r.Zip, r.Phone, r.Email} {
				if !text.Valid(s) {
					t.Fatalf("row %d: accepted text %q that fails the text rule", i, s)
				}
			}
			chunk.Rows = append(chunk.Rows, records.ListRow{Row: i + 1, LeadID: uuid.New(), APN: r.APN, County: r.County, Address: r.Address,
				Unit: r.Unit, City: r.City, State: r.State, Zip: r.Zip, NoProperty: r.MailingOnly})
		}
		evs = append(evs, chunk)
		ne, err := eventstore.EncodeAll(eventstore.Metadata{}, evs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := (eventstore.Append{StreamID: records.ListStreamID(id), Events: ne}).Validate(true); err != nil {
			t.Fatalf("accepted a list whose events cannot be stored: %v", err)
		}
	})
}
