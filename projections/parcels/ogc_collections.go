package parcels

import (
	"github.com/arr-dev/arr/domain/records"
)

// amountUSDSQL is amount_usd, the property and the queryable: the
// record's micro-dollars in dollars, rounded to the cent half away from
// zero (numeric round). Written here only, so a filter compares the value
// a feature shows.
const amountUSDSQL = "round(pl.amount_micros / 1000000.0, 2)"

// Queryable is a property a filter may name, with the one column
// expression it stands for (the allow-list: nothing else reaches SQL).
type Queryable struct {
	Name string
	// Type is the JSON Schema type: string, number, integer or boolean;
	// Format is date or date-time for the temporal ones.
	Type, Format string
	Description  string
	// column is the SQL the property stands for, written here only.
	column string
}

// Collection is a feature collection of the OGC API: the parcels, or
// one layer's records.
type Collection struct {
	ID, Title, Description string
	// Layer is the layer whose records the collection holds; empty for
	// the parcels.
	Layer      string
	Queryables []Queryable
}

// Temporal reports whether the collection's features have a date
// (datetime selects by it).
func (c Collection) Temporal() bool { return c.Layer != "" }

// Queryable returns the collection's queryable of that name.
func (c Collection) Queryable(name string) (Queryable, bool) {
	for _, q := range c.Queryables {
		if q.Name == name {
			return q, true
		}
	}
	return Queryable{}, false
}

// Collections returns the OGC API's collections: parcels first, then one
// per layer, in the layers' order.
func Collections() []Collection {
	place := []Queryable{
		{Name: "county", Type: "string", Description: "5-digit county FIPS code (24510 is Baltimore City)"},
		{Name: "apn", Type: "string", Description: "assessor parcel number, as the county writes it"},
		{Name: "address", Type: "string", Description: "the parcel's street address (LIKE reads it as stored: upper case for most sources)"},
	}
	parcelQ := make([]Queryable, 0, len(place)+6)
	for _, q := range place {
		q.column = "p." + q.Name
		parcelQ = append(parcelQ, q)
	}
	parcelQ = append(parcelQ, Queryable{Name: "source_url", Type: "string", Description: "the public source of the parcel's record", column: "p.source_url"})
	for _, l := range records.Layers() {
		parcelQ = append(parcelQ, Queryable{Name: string(l.Key), Type: "boolean",
			Description: "true when the " + l.Title + " layer names the parcel now",
			// The key is one of records.Layers(), never input.
			column: "(p.layers @> ARRAY['" + string(l.Key) + "']::text[])"})
	}
	out := []Collection{{ID: "parcels", Title: "Parcels",
		Description: "Public parcels with the layers that name them and each layer's signal. Never contact data.", Queryables: parcelQ}}
	for _, l := range records.Layers() {
		qs := make([]Queryable, 0, len(place)+8)
		for _, q := range place {
			q.column = "pl." + q.Name
			qs = append(qs, q)
		}
		qs = append(qs,
			Queryable{Name: "record_date", Type: "string", Format: "date", Description: "the record's own date (filing, notice, recording); null when the source has none", column: "pl.record_date"},
			Queryable{Name: "source_date", Type: "string", Format: "date", Description: "the date of the source snapshot that named the parcel", column: "pl.source_date"},
			Queryable{Name: "first_seen", Type: "string", Format: "date-time", Description: "when arr first saw the layer name the parcel", column: "pl.first_seen"},
			Queryable{Name: "last_seen", Type: "string", Format: "date-time", Description: "when arr last saw the layer name the parcel", column: "pl.last_seen"},
			Queryable{Name: "amount_usd", Type: "number", Description: "the record's amount in US dollars (a lien's face amount, a balance), rounded to the cent (half away from zero) as the property reads: a filter compares that value, so amount_usd = 12.34 selects the features whose amount_usd is 12.34; null when it has none", column: amountUSDSQL},
			Queryable{Name: "record_count", Type: "integer", Description: "how many rows of the source name the parcel", column: "pl.record_count"},
		)
		if l.Key == records.LisPendens {
			qs = append(qs, Queryable{Name: "lender", Type: "string", Description: "the plaintiffs of the filing as recorded", column: "pl.lender"})
		}
		out = append(out, Collection{ID: string(l.Key), Title: l.Title, Description: l.Meaning + " Updated " + l.Cadence + ".", Layer: string(l.Key), Queryables: qs})
	}
	return out
}
