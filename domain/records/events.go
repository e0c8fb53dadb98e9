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

// MonitorStreamID is the stream of a list monitor.
func MonitorStreamID(id uuid.UUID) string { return "monitor-" + id.String() }

// DeliveryStreamID is the stream of one webhook delivery's attempts.
func DeliveryStreamID(id uuid.UUID) string { return "delivery-" + id.String() }

// ContactStreamID is the stream of an account's records contact data (its
// erasure).
func ContactStreamID(accountID uuid.UUID) string { return "recordscontact-" + accountID.String() }

// LayerLoadStarted opens a load of one layer from one source file.
type LayerLoadStarted struct {
	// LoadID identifies the load; its stream is layerload-{LoadID}.
	LoadID uuid.UUID `json:"load_id"`
	// Layer is the layer loaded.
	Layer Layer `json:"layer"`
	// Counties are the 5-digit county FIPS codes the load covers.
	Counties []string `json:"counties"`
	// SourceURL is the public page the source file came from.
	SourceURL string `json:"source_url"`
	// SourceDate is the source's own date (YYYY-MM-DD).
	SourceDate string `json:"source_date"`
	// File is the source file's name.
	File string `json:"file"`
	// CrawledAt is when the source was fetched (UTC).
	CrawledAt time.Time `json:"crawled_at"`
	// StartedAt is when the load began (UTC).
	StartedAt time.Time `json:"started_at"`
}

// Row is one accepted row of a layer load. Rows carry public record data
// only: never an owner's or a defendant's name, never contact data.
type Row struct {
	// Line is the row's line (or feature number) in the source file.
	Line int `json:"line"`
	// County is the parcel's 5-digit county FIPS code.
	County string `json:"county"`
	// APN is the parcel number, formatted as the county writes it.
	APN string `json:"apn"`
	// Address is the parcel's street address.
	Address string `json:"address,omitempty"`
	// Lon is the longitude (WGS 84).
	Lon *float64 `json:"lon,omitempty"`
	// Lat is the latitude (WGS 84).
	Lat *float64 `json:"lat,omitempty"`
	// SourceURL is the record's own public URL, or the load's source URL.
	SourceURL string `json:"url,omitempty"`
	// Date is the record's own date (recorded, filed, auction), YYYY-MM-DD.
	Date string `json:"date,omitempty"`
	// Amount is the record's money amount (taxes owed, a judgment) in
	// micro-dollars.
	Amount *int64 `json:"amount_micros,omitempty"`
	// Lender is the plaintiff or lender of a public filing, never a
	// private person's name.
	Lender string `json:"lender,omitempty"`
	// Detail holds further public columns of the source, by name.
	Detail map[string]string `json:"detail,omitempty"`
}

// LayerRowsLoaded carries one chunk of a load's accepted rows.
type LayerRowsLoaded struct {
	// LoadID is the load the rows belong to.
	LoadID uuid.UUID `json:"load_id"`
	// Layer is the load's layer.
	Layer Layer `json:"layer"`
	// Chunk is the chunk's number in its load, from 0.
	Chunk int `json:"chunk"`
	// Rows are the chunk's accepted rows.
	Rows []Row `json:"rows"`
}

// Reject is a row a load skipped, with why.
type Reject struct {
	// Line is the rejected row's line in the source file.
	Line int `json:"line"`
	// Reason says why it was rejected.
	Reason string `json:"reason"`
}

// LayerLoadCompleted closes a load: from now on its rows are the layer's
// rows in its counties, and parcels it does not name are no longer named by
// the layer there.
type LayerLoadCompleted struct {
	// LoadID is the completed load.
	LoadID uuid.UUID `json:"load_id"`
	// Layer is the load's layer.
	Layer Layer `json:"layer"`
	// Counties are the counties whose layer rows the load replaces.
	Counties []string `json:"counties"`
	// CrawledAt is when the source was fetched (UTC).
	CrawledAt time.Time `json:"crawled_at"`
	// CompletedAt is when the load finished (UTC).
	CompletedAt time.Time `json:"completed_at"`
	// Chunks is how many LayerRowsLoaded events the load appended.
	Chunks int `json:"chunks"`
	// RowsRead is how many rows the source file held.
	RowsRead int `json:"rows_read"`
	// RowsLoaded is how many rows were accepted (in the chunks).
	RowsLoaded int `json:"rows_loaded"`
	// RowsSkipped is how many rows the mapping's conditions left out.
	RowsSkipped int `json:"rows_skipped"`
	// RowsRejected is how many rows were refused as invalid.
	RowsRejected int `json:"rows_rejected"`
	// Rejects lists the first rejected rows (at most MaxRejectsInEvent).
	Rejects []Reject `json:"rejects,omitempty"`
}

// MaxRejectsInEvent bounds the rejects a completion event carries; the
// full report is the loader's rejects file.
const MaxRejectsInEvent = 1000

// LayerLoadFailed closes a load that did not finish: none of its rows
// count.
type LayerLoadFailed struct {
	// LoadID is the failed load.
	LoadID uuid.UUID `json:"load_id"`
	// Layer is the load's layer.
	Layer Layer `json:"layer"`
	// Reason is the error that stopped it.
	Reason string `json:"reason"`
	// FailedAt is when it failed (UTC).
	FailedAt time.Time `json:"failed_at"`
}

// ListImported opens an account's imported list.
type ListImported struct {
	// ListID identifies the list; its stream is list-{ListID}.
	ListID uuid.UUID `json:"list_id"`
	// AccountID is the account that imported it and alone can read it.
	AccountID uuid.UUID `json:"account_id"`
	// Name is the list's name.
	Name string `json:"name"`
	// Rows is how many rows the list holds.
	Rows int `json:"rows"`
	// Columns are the uploaded file's column headers.
	Columns []string `json:"columns"`
	// ImportedAt is when it was imported (UTC).
	ImportedAt time.Time `json:"imported_at"`
}

// ListRow is one row of an imported list. Contact holds the row's phone and
// e-mail sealed with the account's data key (AES-256-GCM); it is unreadable
// once the key is destroyed.
type ListRow struct {
	// Row is the row's number in the list, from 1.
	Row int `json:"row"`
	// LeadID identifies the row as a lead.
	LeadID uuid.UUID `json:"lead_id"`
	// APN is the row's parcel number, if it has one.
	APN string `json:"apn,omitempty"`
	// County is the row's 5-digit county FIPS code, if known.
	County string `json:"county,omitempty"`
	// Address is the row's street address (house number and street; the
	// unit too when the file wrote it on the same line).
	Address string `json:"address,omitempty"`
	// Unit, City, State (USPS code) and Zip (5 digits) are the property's,
	// from their own columns (added in issue 39; absent in older events).
	Unit string `json:"unit,omitempty"`
	// City is the property's city, from its own column.
	City string `json:"city,omitempty"`
	// State is the property's state (USPS code), from its own column.
	State string `json:"state,omitempty"`
	// Zip is the property's 5-digit ZIP code, from its own column.
	Zip string `json:"zip,omitempty"`
	// Within is the FIPS code the row's match is narrowed to: its county
	// (5 digits: given, or named with its state and found in the
	// gazetteer), else its state's (2 digits); empty when neither is
	// known. Older events have County alone.
	Within string `json:"within,omitempty"`
	// NoProperty: the row named no parcel and no property address, only
	// the owner's mailing address, which is never matched.
	NoProperty bool `json:"no_property,omitempty"`
	// Contact is the row's phone and e-mail sealed with the account's
	// data key (AES-256-GCM), base64 in JSON; absent when it had none.
	Contact []byte `json:"contact,omitempty"`
}

// ListRowsImported carries one chunk of a list's rows.
type ListRowsImported struct {
	// ListID is the list the rows belong to.
	ListID uuid.UUID `json:"list_id"`
	// AccountID is the list's account.
	AccountID uuid.UUID `json:"account_id"`
	// Chunk is the chunk's number in its list, from 0.
	Chunk int `json:"chunk"`
	// Rows are the chunk's rows.
	Rows []ListRow `json:"rows"`
}

// ContactDataErased records that an account's records data key was
// destroyed: every contact column it sealed is unreadable from then on, and
// read models drop what they hold of it.
type ContactDataErased struct {
	// AccountID is the account whose data key was destroyed.
	AccountID uuid.UUID `json:"account_id"`
	// ErasedAt is when it was destroyed (UTC).
	ErasedAt time.Time `json:"erased_at"`
}

// MonitorCreated records that an account watches one of its lists: a
// webhook at URL is to be told when a completed layer load newly names a
// parcel matched to a row of the list, or stops naming one (of Layers, or
// of any layer when empty).
type MonitorCreated struct {
	// MonitorID identifies the monitor; its stream is monitor-{MonitorID}.
	MonitorID uuid.UUID `json:"monitor_id"`
	// AccountID is the account that owns the monitor and its list.
	AccountID uuid.UUID `json:"account_id"`
	// ListID is the watched list.
	ListID uuid.UUID `json:"list_id"`
	// URL is where deliveries are POSTed.
	URL string `json:"url"`
	// Layers are the layer keys watched; empty: every layer.
	Layers []string `json:"layers"`
	// Secret is the monitor's whsec_ signing secret sealed with the
	// account's data key (AES-256-GCM), base64 in JSON: only the
	// account's key opens it.
	Secret []byte `json:"secret"`
	// CreatedAt is when it was created (UTC).
	CreatedAt time.Time `json:"created_at"`
}

// MonitorDeleted records that an account stopped a monitor: nothing more
// is delivered for it.
type MonitorDeleted struct {
	// MonitorID is the monitor.
	MonitorID uuid.UUID `json:"monitor_id"`
	// AccountID is its account.
	AccountID uuid.UUID `json:"account_id"`
	// DeletedAt is when it was deleted (UTC).
	DeletedAt time.Time `json:"deleted_at"`
}

// MonitorDisabled records that a monitor stopped delivering without its
// account asking: its webhook failed for too long. Nothing more is
// delivered for it; its pending deliveries are cancelled.
type MonitorDisabled struct {
	// MonitorID is the monitor.
	MonitorID uuid.UUID `json:"monitor_id"`
	// AccountID is its account.
	AccountID uuid.UUID `json:"account_id"`
	// Reason says why, for the account page and the mail.
	Reason string `json:"reason"`
	// FailingSince is when the failures began: the first failed attempt
	// after the last delivery that succeeded (UTC).
	FailingSince time.Time `json:"failing_since"`
	// DisabledAt is when it was disabled (UTC).
	DisabledAt time.Time `json:"disabled_at"`
}

// The outcomes of a webhook delivery attempt.
const (
	// OutcomeDelivered: the subscriber answered 2xx; the delivery is done.
	OutcomeDelivered = "delivered"
	// OutcomeRetrying: the attempt failed; another is due at NextAttemptAt.
	OutcomeRetrying = "retrying"
	// OutcomeFailed: the attempt failed and no other will be made.
	OutcomeFailed = "failed"
)

// WebhookDeliveryAttempted records one attempt to deliver a monitor's
// webhook. A delivery's attempts are the events of its stream,
// delivery-{DeliveryID}, numbered from 1: the dispatcher appends attempt n
// only at the stream's version n-1, so no attempt is recorded twice, and a
// delivery whose stream holds a delivered (or failed) attempt is never
// sent again, whatever a read model says.
type WebhookDeliveryAttempted struct {
	// DeliveryID identifies the delivery (webhook-id: msg_ and its hex).
	DeliveryID uuid.UUID `json:"delivery_id"`
	// MonitorID is the delivery's monitor; the nil UUID for a research
	// job's delivery.
	MonitorID uuid.UUID `json:"monitor_id"`
	// ResearchJobID is the research job whose result the delivery
	// carries (answer.ResearchJobRequested's webhook); absent for a
	// monitor's.
	ResearchJobID *uuid.UUID `json:"research_job_id,omitempty"`
	// AccountID is the monitor's (or the research job's) account.
	AccountID uuid.UUID `json:"account_id"`
	// Attempt is the attempt's number, from 1.
	Attempt int `json:"attempt"`
	// AttemptedAt is when it was sent (UTC), the webhook-timestamp.
	AttemptedAt time.Time `json:"attempted_at"`
	// Status is the subscriber's HTTP status; 0 when none came.
	Status int `json:"status"`
	// Error says why the attempt failed, without the URL; empty when it
	// succeeded.
	Error string `json:"error,omitempty"`
	// DurationMS is how long the attempt took, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// Outcome is delivered, retrying or failed.
	Outcome string `json:"outcome"`
	// NextAttemptAt is when the next attempt is due, when retrying.
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
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
func (MonitorCreated) EventType() string     { return "MonitorCreated" }
func (MonitorCreated) SchemaVersion() int    { return 1 }
func (MonitorDeleted) EventType() string     { return "MonitorDeleted" }
func (MonitorDeleted) SchemaVersion() int    { return 1 }
func (MonitorDisabled) EventType() string    { return "MonitorDisabled" }
func (MonitorDisabled) SchemaVersion() int   { return 1 }
func (WebhookDeliveryAttempted) EventType() string {
	return "WebhookDeliveryAttempted"
}
func (WebhookDeliveryAttempted) SchemaVersion() int { return 1 }

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
		func() domain.Event { return &MonitorCreated{} },
		func() domain.Event { return &MonitorDeleted{} },
		func() domain.Event { return &MonitorDisabled{} },
		func() domain.Event { return &WebhookDeliveryAttempted{} },
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

// ErrContactDataUnavailable: an account's data key exists but cannot be
// unwrapped (it is wrapped by another master key than the server's, or
// damaged), so its contact data can be neither opened nor sealed until
// the operator restores the master key it was made with.
var ErrContactDataUnavailable = &domain.Error{Kind: domain.ErrUnavailable, Code: "contact_data_unavailable",
	Message: "this account's contact data cannot be opened or added right now: the server cannot unwrap its data key (the operator must restore the master key it was made with); retry later, or leave out include_contact"}
