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
	counties := make(map[string]bool, len(gaz.Counties))
	for _, c := range gaz.Counties {
		counties[c.FIPS] = true
	}
	return &ImportListHandler{store: store, keys: keys, clock: clock, counties: counties}, nil
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
	// The file's form (five digits) is listfile's; that the code names a
	// county is the gazetteer's, checked here where every import passes.
	for _, r := range c.List.Rows {
		if r.County != "" && !h.counties[r.County] {
			return ImportedList{}, domain.Invalid("unknown_county", "file", "line %d: county %q is no county of the Census gazetteer (GET /api/v1/counties lists them: 24510 is Baltimore City, 12011 Broward County)", r.Line, r.County)
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
			row := records.ListRow{Row: start + i + 1, LeadID: uuid.New(), APN: r.APN, County: r.County, Address: r.Address}
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
