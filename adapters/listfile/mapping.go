package listfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
)

// MaxMappingBytes caps a mapping's JSON.
const MaxMappingBytes = 16 << 10

// Mapping names, for a list whose headers the alias table does not know
// (or reads otherwise than meant), which header holds each of arr's
// columns; the header table is then not used. Every field is optional
// except that a list needs an apn or an address column. Mailing names the
// columns of the owner's mailing address, which are never read as the
// property's.
type Mapping struct {
	APN     string   `json:"apn,omitempty"`
	County  string   `json:"county,omitempty"`
	Address string   `json:"address,omitempty"`
	Unit    string   `json:"unit,omitempty"`
	City    string   `json:"city,omitempty"`
	State   string   `json:"state,omitempty"`
	Zip     string   `json:"zip,omitempty"`
	Phone   string   `json:"phone,omitempty"`
	Email   string   `json:"email,omitempty"`
	Mailing []string `json:"mailing,omitempty"`
}

// ReadMapping reads a mapping (JSON, as `arr import list --mapping` and
// the account page take it): an unknown field, a second JSON value, a
// value over MaxMappingBytes, a mapping naming no apn or address column,
// or one naming a header twice are refused with what to fix.
func ReadMapping(r io.Reader) (Mapping, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxMappingBytes+1))
	if err != nil {
		return Mapping{}, fmt.Errorf("reading the mapping: %w", err)
	}
	if len(b) > MaxMappingBytes {
		return Mapping{}, domain.Invalid("mapping_too_large", "mapping", "the mapping is over %d bytes", MaxMappingBytes)
	}
	var m Mapping
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Mapping{}, domain.Invalid("invalid_mapping", "mapping",
			"the mapping is not a JSON object of arr's columns (apn, county, address, unit, city, state, zip, phone, email: a header each; mailing: a list of headers): %v", err)
	}
	if dec.More() {
		return Mapping{}, domain.Invalid("invalid_mapping", "mapping", "the mapping has more than one JSON value")
	}
	return m, m.check()
}

// fields are the mapping's columns by arr's name.
func (m Mapping) fields() map[string]string {
	return map[string]string{ColAPN: m.APN, ColCounty: m.County, ColAddress: m.Address, ColUnit: m.Unit, ColCity: m.City,
		ColState: m.State, ColZip: m.Zip, ColPhone: m.Phone, ColEmail: m.Email}
}

// propertyAddress are the columns of the property's address, which a
// mailing header may not fill.
var propertyAddress = map[string]bool{ColAddress: true, ColUnit: true, ColCity: true, ColState: true, ColZip: true}

func (m Mapping) check() error {
	if m.APN == "" && m.Address == "" {
		return domain.Invalid("invalid_mapping", "mapping", "the mapping names neither an apn nor an address column")
	}
	seen := map[string]string{}
	names := append([]string{}, m.Mailing...)
	cols := make([]string, len(m.Mailing))
	for i := range cols {
		cols[i] = ColMailing
	}
	for _, c := range columns {
		if h := m.fields()[c]; h != "" {
			names, cols = append(names, h), append(cols, c)
		}
	}
	for i, h := range names {
		if err := text.Check("mapping", h, 200); err != nil {
			return err
		}
		if mixedScript(h) {
			return domain.Invalid("invalid_mapping", "mapping", "the mapping's %s column %q mixes Latin letters with another script's (a look-alike, such as a Cyrillic а for a Latin a); write the header in one script", cols[i], h)
		}
		k := Key(h)
		if k == "" {
			return domain.Invalid("invalid_mapping", "mapping", "the mapping's %s column %q names no header", cols[i], h)
		}
		if prev, dup := seen[k]; dup {
			return domain.Invalid("invalid_mapping", "mapping", "the mapping names header %q as both %s and %s; a header is one column", h, prev, cols[i])
		}
		if propertyAddress[cols[i]] && isMailing(k) {
			return domain.Invalid("invalid_mapping", "mapping", "the mapping names %q, a header of the owner's mailing address, as the property's %s column; a mailing address is never read as the property's (name it under mailing)", h, cols[i])
		}
		seen[k] = cols[i]
	}
	return nil
}

// layout finds the mapping's headers in the file's.
func (m Mapping) layout(header []string) (layout, error) {
	at := map[string]int{}
	for i, h := range header {
		at[Key(h)] = i
	}
	l := layout{idx: map[string]int{}}
	find := func(col, h string) (int, error) {
		i, ok := at[Key(h)]
		if !ok {
			return 0, domain.Invalid("mapping_column_missing", "mapping", "line 1: the mapping's %s column %q is not in the file's header", col, h)
		}
		return i, nil
	}
	for _, c := range columns {
		if h := m.fields()[c]; h != "" {
			i, err := find(c, h)
			if err != nil {
				return l, err
			}
			l.idx[c] = i
		}
	}
	for _, h := range m.Mailing {
		i, err := find(ColMailing, h)
		if err != nil {
			return l, err
		}
		l.mailing = append(l.mailing, i)
	}
	return l, nil
}
