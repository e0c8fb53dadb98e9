package records

import (
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// LoadStreamID is the stream of one layer load.
func LoadStreamID(loadID uuid.UUID) string { return "layerload-" + loadID.String() }

// ListStreamID is the stream of one imported list.
func ListStreamID(listID uuid.UUID) string { return "list-" + listID.String() }

// ContactStreamID is the stream of an account's records contact data (its
// erasure).
func ContactStreamID(accountID uuid.UUID) string { return "recordscontact-" + accountID.String() }

// LayerLoadStarted opens a load of one layer from one source file.
type LayerLoadStarted struct {
	LoadID     uuid.UUID `json:"load_id"`
	Layer      Layer     `json:"layer"`
	Counties   []string  `json:"counties"`
	SourceURL  string    `json:"source_url"`
	SourceDate string    `json:"source_date"`
	File       string    `json:"file"`
	CrawledAt  time.Time `json:"crawled_at"`
	StartedAt  time.Time `json:"started_at"`
}

// Row is one accepted row of a layer load. Rows carry public record data
// only: never an owner's or a defendant's name, never contact data.
type Row struct {
	Line      int               `json:"line"`
	County    string            `json:"county"`
	APN       string            `json:"apn"`
	Address   string            `json:"address,omitempty"`
	Lon       *float64          `json:"lon,omitempty"`
	Lat       *float64          `json:"lat,omitempty"`
	SourceURL string            `json:"url,omitempty"`
	Date      string            `json:"date,omitempty"`
	Amount    *int64            `json:"amount_micros,omitempty"`
	Lender    string            `json:"lender,omitempty"`
	Detail    map[string]string `json:"detail,omitempty"`
}

// LayerRowsLoaded carries one chunk of a load's accepted rows.
type LayerRowsLoaded struct {
	LoadID uuid.UUID `json:"load_id"`
	Layer  Layer     `json:"layer"`
	Chunk  int       `json:"chunk"`
	Rows   []Row     `json:"rows"`
}

// Reject is a row a load skipped, with why.
type Reject struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// LayerLoadCompleted closes a load: from now on its rows are the layer's
// rows in its counties, and parcels it does not name are no longer named by
// the layer there.
type LayerLoadCompleted struct {
	LoadID       uuid.UUID `json:"load_id"`
	Layer        Layer     `json:"layer"`
	Counties     []string  `json:"counties"`
	CrawledAt    time.Time `json:"crawled_at"`
	CompletedAt  time.Time `json:"completed_at"`
	Chunks       int       `json:"chunks"`
	RowsRead     int       `json:"rows_read"`
	RowsLoaded   int       `json:"rows_loaded"`
	RowsSkipped  int       `json:"rows_skipped"`
	RowsRejected int       `json:"rows_rejected"`
	// Rejects lists the first rejected rows (at most MaxRejectsInEvent).
	Rejects []Reject `json:"rejects,omitempty"`
}

// MaxRejectsInEvent bounds the rejects a completion event carries; the
// full report is the loader's rejects file.
const MaxRejectsInEvent = 1000

// LayerLoadFailed closes a load that did not finish: none of its rows
// count.
type LayerLoadFailed struct {
	LoadID   uuid.UUID `json:"load_id"`
	Layer    Layer     `json:"layer"`
	Reason   string    `json:"reason"`
	FailedAt time.Time `json:"failed_at"`
}

// ListImported opens an account's imported list.
type ListImported struct {
	ListID     uuid.UUID `json:"list_id"`
	AccountID  uuid.UUID `json:"account_id"`
	Name       string    `json:"name"`
	Rows       int       `json:"rows"`
	Columns    []string  `json:"columns"`
	ImportedAt time.Time `json:"imported_at"`
}

// ListRow is one row of an imported list. Contact holds the row's phone and
// e-mail sealed with the account's data key (AES-256-GCM); it is unreadable
// once the key is destroyed.
type ListRow struct {
	Row     int       `json:"row"`
	LeadID  uuid.UUID `json:"lead_id"`
	APN     string    `json:"apn,omitempty"`
	County  string    `json:"county,omitempty"`
	Address string    `json:"address,omitempty"`
	Contact []byte    `json:"contact,omitempty"`
}

// ListRowsImported carries one chunk of a list's rows.
type ListRowsImported struct {
	ListID    uuid.UUID `json:"list_id"`
	AccountID uuid.UUID `json:"account_id"`
	Chunk     int       `json:"chunk"`
	Rows      []ListRow `json:"rows"`
}

// ContactDataErased records that an account's records data key was
// destroyed: every contact column it sealed is unreadable from then on, and
// read models drop what they hold of it.
type ContactDataErased struct {
	AccountID uuid.UUID `json:"account_id"`
	ErasedAt  time.Time `json:"erased_at"`
}

func (LayerLoadStarted) EventType() string   { return "LayerLoadStarted" }
func (LayerLoadStarted) SchemaVersion() int  { return 1 }
func (LayerRowsLoaded) EventType() string    { return "LayerRowsLoaded" }
func (LayerRowsLoaded) SchemaVersion() int   { return 1 }
func (LayerLoadCompleted) EventType() string { return "LayerLoadCompleted" }
func (LayerLoadCompleted) SchemaVersion() int {
	return 1
}
func (LayerLoadFailed) EventType() string    { return "LayerLoadFailed" }
func (LayerLoadFailed) SchemaVersion() int   { return 1 }
func (ListImported) EventType() string       { return "ListImported" }
func (ListImported) SchemaVersion() int      { return 1 }
func (ListRowsImported) EventType() string   { return "ListRowsImported" }
func (ListRowsImported) SchemaVersion() int  { return 1 }
func (ContactDataErased) EventType() string  { return "ContactDataErased" }
func (ContactDataErased) SchemaVersion() int { return 1 }

// Events returns the prototypes of the records events, for a registry.
func Events() []func() domain.Event {
	return []func() domain.Event{
		func() domain.Event { return &LayerLoadStarted{} },
		func() domain.Event { return &LayerRowsLoaded{} },
		func() domain.Event { return &LayerLoadCompleted{} },
		func() domain.Event { return &LayerLoadFailed{} },
		func() domain.Event { return &ListImported{} },
		func() domain.Event { return &ListRowsImported{} },
		func() domain.Event { return &ContactDataErased{} },
	}
}

// Text caps, in characters, of what a caller puts into a list import.
const (
	MaxListNameChars   = 200
	MaxListHeaderChars = 200
	MaxListCellChars   = 1000
	// MaxRowTextChars caps each text cell of a layer row.
	MaxRowTextChars = 2000
)

// ErrDataKeyDestroyed: an account's data key was destroyed (or never
// made), so what it sealed (imported lists' contact columns) cannot be
// opened.
var ErrDataKeyDestroyed = &domain.Error{Kind: domain.ErrNotFound, Code: "data_key_destroyed",
	Message: "the account's data key does not exist (erased accounts' contact data is unreadable)"}
