package analysis_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/analysis"
)

func TestDefineAndDrop(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	d := analysis.New("spend_by_model")
	if _, err := d.Drop("ann", at); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("dropping an undefined projection: %v, want not found", err)
	}
	e, err := d.Define("-- arr:projection spend_by_model\n", " ann ", at)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "spend_by_model" || e.DefinedBy != "ann" || !e.DefinedAt.Equal(at) || e.DefinedAt.Location() != time.UTC {
		t.Fatalf("defined %+v", e)
	}
	d.Apply(e)
	if _, err := d.Define("x", "bob", at); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("defining twice: %v, want conflict", err)
	}
	dr, err := d.Drop("bob", at)
	if err != nil {
		t.Fatal(err)
	}
	d.Apply(dr)
	if d.Defined() || d.Version() != 1 {
		t.Fatalf("after drop: defined %v version %d", d.Defined(), d.Version())
	}
	if _, err := d.Define("again", "ann", at); err != nil {
		t.Fatalf("defining again after a drop: %v", err)
	}
}

func TestDefineRefuses(t *testing.T) {
	at := time.Now()
	for _, tc := range []struct {
		name, proj, sql, by, code string
	}{
		{"upper case name", "Spend", "x", "ann", "invalid_projection_name"},
		{"leading digit", "1spend", "x", "ann", "invalid_projection_name"},
		{"too long name", strings.Repeat("a", 41), "x", "ann", "invalid_projection_name"},
		{"empty sql", "spend", " \n", "ann", "sql_required"},
		{"control character", "spend", "SELECT 1;\r\n", "ann", "sql_control_character"},
		{"nobody", "spend", "x", "  ", "defined_by_required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := analysis.New(tc.proj).Define(tc.sql, tc.by, at)
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != tc.code {
				t.Fatalf("got %v, want code %s", err, tc.code)
			}
		})
	}
}
