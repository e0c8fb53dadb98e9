package analysis

import (
	"time"

	"github.com/arr-dev/arr/domain"
)

// SQLProjectionDefined: DefinedBy recorded the SQL projection Name, whose
// definition file is SQL, at DefinedAt. The runner builds its read model
// (schema rm_<name>) from the whole log and keeps it up to date.
type SQLProjectionDefined struct {
	// Name is the projection's name (its schema is rm_<name>).
	Name string `json:"name"`
	// SQL is the whole definition file: the -- arr:projection line, the
	// DDL and the arr:on and arr:batch sections
	// (docs/sql-projections.md).
	SQL string `json:"sql"`
	// DefinedBy is who defined it (arr projections create --by, or the
	// operating-system user).
	DefinedBy string `json:"defined_by"`
	// DefinedAt is when it was defined (UTC).
	DefinedAt time.Time `json:"defined_at"`
}

func (SQLProjectionDefined) EventType() string  { return "SQLProjectionDefined" }
func (SQLProjectionDefined) SchemaVersion() int { return 1 }

// SQLProjectionDropped: DroppedBy dropped the SQL projection Name (its read
// model and its role are gone) at DroppedAt. The name may be defined again.
type SQLProjectionDropped struct {
	// Name is the projection dropped.
	Name string `json:"name"`
	// DroppedBy is who dropped it (arr projections drop --by, or the
	// operating-system user).
	DroppedBy string `json:"dropped_by"`
	// DroppedAt is when it was dropped (UTC).
	DroppedAt time.Time `json:"dropped_at"`
}

func (SQLProjectionDropped) EventType() string  { return "SQLProjectionDropped" }
func (SQLProjectionDropped) SchemaVersion() int { return 1 }

// Events lists constructors for every event of this package, for a
// domain.Registry.
func Events() []func() domain.Event {
	return []func() domain.Event{
		func() domain.Event { return &SQLProjectionDefined{} },
		func() domain.Event { return &SQLProjectionDropped{} },
	}
}

// StreamID is the stream of one projection name's definitions and drops.
func StreamID(name string) string { return "sqlprojection-" + name }
