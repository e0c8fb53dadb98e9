package analysis

import (
	"strings"
	"time"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
)

// Limits of a definition.
const (
	// MaxNameChars bounds a projection name: its schema (rm_<name>__shadow)
	// and role names must fit PostgreSQL's 63-byte identifiers.
	MaxNameChars = 40
	// MaxSQLChars bounds a definition file, in characters.
	MaxSQLChars = 256 << 10
	// MaxByChars bounds who defined or dropped it.
	MaxByChars = 200
)

// CheckName refuses a name that cannot be a projection's: lowercase ASCII
// letters, digits and _, starting with a letter, at most MaxNameChars, and
// no "__", which arr keeps for the schemas of rebuilds (NAME__shadow,
// NAME__retired): a projection named identity__shadow would be dropped by
// the next rebuild of identity.
func CheckName(name string) error {
	ok := len(name) > 0 && len(name) <= MaxNameChars && name[0] >= 'a' && name[0] <= 'z'
	for _, c := range name {
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')
	}
	if !ok {
		return domain.Invalid("invalid_projection_name", "name",
			"projection name %q: use 1 to %d lowercase letters, digits and _, starting with a letter", name, MaxNameChars)
	}
	if strings.Contains(name, "__") {
		return domain.Invalid("invalid_projection_name", "name",
			"projection name %q: \"__\" is reserved for the schemas of rebuilds (NAME__shadow, NAME__retired); use a single _", name)
	}
	return nil
}

// Definition is the aggregate of one projection name. Its state is rebuilt
// from its stream by Apply; Define and Drop return new events or a domain
// error and change nothing.
type Definition struct {
	name    string
	defined bool
	by      string
	at      time.Time
	version int64 // events applied, -1 for none (the stream's expected version)
}

// New returns the aggregate of name before any event.
func New(name string) *Definition { return &Definition{name: name, version: -1} }

// Apply folds one event of the stream into the state; nil stands for an
// event this build does not know (counted, not interpreted).
func (d *Definition) Apply(e domain.Event) {
	d.version++
	switch e := e.(type) {
	case *SQLProjectionDefined:
		d.defined, d.by, d.at = true, e.DefinedBy, e.DefinedAt
	case *SQLProjectionDropped:
		d.defined = false
	}
}

// Version is the stream version the state was loaded at (-1: no stream).
func (d *Definition) Version() int64 { return d.version }

// Defined reports whether the name is defined now.
func (d *Definition) Defined() bool { return d.defined }

// Define decides the definition of the projection by `by`. sql is the
// definition file, already checked by its compiler; here it must be
// caller text (UTF-8, no control characters but tab and newline) of at
// most MaxSQLChars.
func (d *Definition) Define(sql, by string, at time.Time) (*SQLProjectionDefined, error) {
	if err := CheckName(d.name); err != nil {
		return nil, err
	}
	if d.defined {
		return nil, domain.Conflict("projection_exists",
			"SQL projection %s is already defined (by %s at %s); drop it first to define it again", d.name, d.by, d.at.Format(time.RFC3339))
	}
	if strings.TrimSpace(sql) == "" {
		return nil, domain.Invalid("sql_required", "sql", "the definition of %s is empty", d.name)
	}
	if err := text.Check("sql", sql, MaxSQLChars); err != nil {
		return nil, err
	}
	by, err := checkBy("defined_by", by)
	if err != nil {
		return nil, err
	}
	return &SQLProjectionDefined{Name: d.name, SQL: sql, DefinedBy: by, DefinedAt: at.UTC()}, nil
}

// Drop decides dropping the projection by `by`.
func (d *Definition) Drop(by string, at time.Time) (*SQLProjectionDropped, error) {
	if !d.defined {
		return nil, domain.NotFound("projection_not_found", "no SQL projection named %s is defined", d.name)
	}
	by, err := checkBy("dropped_by", by)
	if err != nil {
		return nil, err
	}
	return &SQLProjectionDropped{Name: d.name, DroppedBy: by, DroppedAt: at.UTC()}, nil
}

func checkBy(field, by string) (string, error) {
	by = strings.TrimSpace(by)
	if by == "" {
		return "", domain.Invalid(field+"_required", field, "%s must name who does this (--by)", field)
	}
	if err := text.Check(field, by, MaxByChars); err != nil {
		return "", err
	}
	return by, nil
}
