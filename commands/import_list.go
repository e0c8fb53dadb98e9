package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/demodata"
	"github.com/arr-dev/arr/adapters/listfile"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/eventstore"
)

// MaxListRows is the most rows an imported list may hold.
const MaxListRows = listfile.MaxRows

// ParseListFile reads a list file (a CSV with a header row) into the list
// ImportList records; its errors say what to fix in the file.
func ParseListFile(r io.Reader) (listfile.List, error) { return listfile.Parse(r) }

// ParseListFileWith reads a list file by a column mapping (nil: the
// header table).
func ParseListFileWith(r io.Reader, m *listfile.Mapping) (listfile.List, error) {
	return listfile.ParseWith(r, m)
}

// ImportList imports a list into an account.
type ImportList struct {
	AccountID uuid.UUID
	Name      string
	List      listfile.List
	Metadata  eventstore.Metadata
}

// ImportedList is the result of ImportList.
type ImportedList struct {
	ListID   uuid.UUID `json:"list_id"`
	Name     string    `json:"name"`
	Rows     int       `json:"rows"`
	Position uint64    `json:"position"`
}

// Contact is what a list row's sealed contact column holds.
type Contact struct {
	Phone string `json:"phone,omitempty"`
	Email string `json:"email,omitempty"`
}

// ImportListHandler handles ImportList: ListImported and the rows in
// chunks of ListRowsImported, appended in one transaction. Phone and e-mail
// are sealed with the account's data key before they reach the log.
type ImportListHandler struct {
	store Appender
	keys  ContactKeys
	clock Clock
	// counties are the FIPS codes of the Census gazetteer arr ships
	// (adapters/demodata): a row's county must be one of them.
	counties map[string]bool
	// countyNames finds a county by state and name ("MD", "baltimore
	// city"); stateFIPS a state's FIPS code by its USPS code.
	countyNames map[[2]string]string
	// countyTitles are the counties' names by FIPS code, as the
	// gazetteer writes them ("Baltimore city").
	countyTitles map[string]string
	stateFIPS    map[string]string
}

// NewImportListHandler refuses nil dependencies.
func NewImportListHandler(store Appender, keys ContactKeys, clock Clock) (*ImportListHandler, error) {
	if store == nil || keys == nil || clock == nil {
		return nil, errors.New("import list: nil dependency")
	}
	gaz, err := demodata.LoadGazetteer()
	if err != nil {
		return nil, fmt.Errorf("import list: the gazetteer: %w", err)
	}
	h := &ImportListHandler{store: store, keys: keys, clock: clock, counties: map[string]bool{}, countyNames: map[[2]string]string{},
		countyTitles: map[string]string{}, stateFIPS: map[string]string{}}
	for _, c := range gaz.Counties {
		h.counties[c.FIPS] = true
		h.countyNames[[2]string{c.State, strings.ToLower(c.Name)}] = c.FIPS
		h.countyTitles[c.FIPS] = c.Name
	}
	for _, st := range gaz.States {
		h.stateFIPS[st.Code] = st.FIPS
	}
	return h, nil
}

// countySuffixes are the words the gazetteer's county names end in
// ("Baltimore County", "Baltimore city", "Carson City", "Orleans Parish"),
// which a list may leave off.
var countySuffixes = []string{" county", " city", " parish", " borough", " census area", " municipality", " city and borough"}

// countyByName finds a county written by name in its state: its full name
// ("Baltimore City" is Baltimore city, 24510; "Baltimore County" is
// 24005), else the one county whose name is it with a suffix left off
// ("Orange" in FL is 12095). A bare name that is several counties of the
// state ("Baltimore" is Baltimore city and Baltimore County) is refused:
// which one is a guess. found is false for a name that is none.
func (h *ImportListHandler) countyByName(line int, state, name string) (fips string, found bool, err error) {
	n := strings.ToLower(strings.Join(strings.Fields(name), " "))
	if f, ok := h.countyNames[[2]string{state, n}]; ok {
		return f, true, nil
	}
	var fits []string
	for _, suf := range countySuffixes {
		if f, ok := h.countyNames[[2]string{state, n + suf}]; ok {
			fits = append(fits, f)
		}
	}
	switch len(fits) {
	case 0:
		return "", false, nil
	case 1:
		return fits[0], true, nil
	}
	var named []string
	for _, f := range fits {
		named = append(named, fmt.Sprintf("%s (%s)", h.countyTitles[f], f))
	}
	return "", false, domain.Invalid("ambiguous_county", "file", "line %d: county %q of %s is %s; write which: its full name or its 5-digit FIPS code",
		line, name, state, strings.Join(named, " and "))
}

// within is the FIPS code a row's match is narrowed to: its county, else
// its state's. A postal city does not name a county (Baltimore, MD 21234
// is in Baltimore County, not Baltimore City), so it does not narrow.
func (h *ImportListHandler) within(r listfile.Row) (string, error) {
	switch {
	case r.County != "":
		if !h.counties[r.County] {
			return "", domain.Invalid("unknown_county", "file", "line %d: county %q is no county of the Census gazetteer (GET /api/v1/counties lists them: 24510 is Baltimore City, 12011 Broward County)", r.Line, r.County)
		}
		if st := h.stateFIPS[r.State]; r.State != "" && st != r.County[:2] {
			return "", domain.Invalid("county_not_in_state", "file", "line %d: county %s is not in %s", r.Line, r.County, r.State)
		}
		return r.County, nil
	case r.CountyName != "":
		if r.State == "" {
			return "", domain.Invalid("county_needs_state", "file", "line %d: county %q is written by name; a county name needs the row's state (a state column) or a 5-digit FIPS code", r.Line, r.CountyName)
		}
		f, ok, err := h.countyByName(r.Line, r.State, r.CountyName)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", domain.Invalid("unknown_county", "file", "line %d: %q is no county of %s in the Census gazetteer (GET /api/v1/counties lists them)", r.Line, r.CountyName, r.State)
		}
		return f, nil
	case r.State != "":
		return h.stateFIPS[r.State], nil
	}
	return "", nil
}

const listChunkRows = 2000

// Handle imports the list.
func (h *ImportListHandler) Handle(ctx context.Context, c ImportList) (ImportedList, error) {
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" {
		c.Name = "list of " + h.clock().UTC().Format("2006-01-02 15:04")
	}
	if err := text.Check("name", c.Name, records.MaxListNameChars); err != nil {
		return ImportedList{}, err
	}
	if len(c.List.Rows) == 0 {
		return ImportedList{}, domain.Invalid("empty_list", "file", "the list has no rows")
	}
	if c.AccountID == uuid.Nil {
		return ImportedList{}, domain.Invalid("account_required", "account", "a list belongs to an account")
	}
	var err error
	// The file's form (five digits) is listfile's; that the code names a
	// county is the gazetteer's, checked here where every import passes.
	within := make([]string, len(c.List.Rows))
	for i, r := range c.List.Rows {
		if within[i], err = h.within(r); err != nil {
			return ImportedList{}, err
		}
	}
	sealer, err := h.keys.Sealer(ctx, c.AccountID)
	if err != nil {
		return ImportedList{}, fmt.Errorf("import list: %w", err)
	}
	listID := uuid.New()
	evs := []domain.Event{&records.ListImported{ListID: listID, AccountID: c.AccountID, Name: c.Name, Rows: len(c.List.Rows),
		Columns: c.List.Columns, ImportedAt: h.clock().UTC()}}
	for start := 0; start < len(c.List.Rows); start += listChunkRows {
		end := min(start+listChunkRows, len(c.List.Rows))
		chunk := &records.ListRowsImported{ListID: listID, AccountID: c.AccountID, Chunk: start / listChunkRows}
		for i, r := range c.List.Rows[start:end] {
			row := records.ListRow{Row: start + i + 1, LeadID: uuid.New(), APN: r.APN, County: r.County, Address: r.Address,
				Unit: r.Unit, City: r.City, State: r.State, Zip: r.Zip, Within: within[start+i], NoProperty: r.MailingOnly}
			if r.Phone != "" || r.Email != "" {
				plain, _ := json.Marshal(Contact{Phone: r.Phone, Email: r.Email})
				if row.Contact, err = sealer.Seal(plain); err != nil {
					return ImportedList{}, fmt.Errorf("sealing contact data: %w", err)
				}
			}
			chunk.Rows = append(chunk.Rows, row)
		}
		evs = append(evs, chunk)
	}
	ne, err := eventstore.EncodeAll(c.Metadata, evs...)
	if err != nil {
		return ImportedList{}, err
	}
	res, err := h.store.AppendBulk(ctx, []eventstore.Append{{StreamID: records.ListStreamID(listID), Expected: eventstore.NoStream(), Events: ne}})
	if err != nil {
		return ImportedList{}, fmt.Errorf("import list: %w", err)
	}
	return ImportedList{ListID: listID, Name: c.Name, Rows: len(c.List.Rows), Position: res[0].LastPosition}, nil
}

// EraseContactData destroys an account's records data key.
type EraseContactData struct {
	AccountID uuid.UUID
	Metadata  eventstore.Metadata
}

// EraseContactDataHandler handles EraseContactData: it deletes the data key
// first (from then on nothing it sealed can be opened, in the log, in any
// read model or export), then records ContactDataErased so read models drop
// the sealed columns too.
type EraseContactDataHandler struct {
	store Appender
	keys  ContactKeys
	clock Clock
}

// NewEraseContactDataHandler refuses nil dependencies.
func NewEraseContactDataHandler(store Appender, keys ContactKeys, clock Clock) (*EraseContactDataHandler, error) {
	if store == nil || keys == nil || clock == nil {
		return nil, errors.New("erase contact data: nil dependency")
	}
	return &EraseContactDataHandler{store: store, keys: keys, clock: clock}, nil
}

// Handle erases. It is idempotent.
func (h *EraseContactDataHandler) Handle(ctx context.Context, c EraseContactData) (uint64, error) {
	if _, err := h.keys.Destroy(ctx, c.AccountID); err != nil {
		return 0, err
	}
	ne, err := eventstore.Encode(&records.ContactDataErased{AccountID: c.AccountID, ErasedAt: h.clock().UTC()}, c.Metadata)
	if err != nil {
		return 0, err
	}
	res, err := h.store.Append(ctx, records.ContactStreamID(c.AccountID), eventstore.Any(), ne)
	if err != nil {
		return 0, fmt.Errorf("recording the erasure: %w", err)
	}
	return res.LastPosition, nil
}
