package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/records"
)

// TestQueryCSVNeutralizesFormulas: an analyst query's CSV quotes a text
// value a spreadsheet would run (it comes from events someone else wrote)
// and leaves numbers, a negative one too, as they are.
func TestQueryCSVNeutralizesFormulas(t *testing.T) {
	var buf bytes.Buffer
	w := newResultWriter(&buf, "csv")
	vals := []json.RawMessage{json.RawMessage(`"=HYPERLINK(\"x\")"`), json.RawMessage(`-5`), json.RawMessage(`"@SUM(A1)"`), json.RawMessage(`"plain"`)}
	if err := w.row([]string{"=who", "n", "at", "name"}, vals); err != nil {
		t.Fatal(err)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	want := "'=who,n,at,name\n\"'=HYPERLINK(\"\"x\"\")\",-5,'@SUM(A1),plain\n"
	if buf.String() != want {
		t.Fatalf("csv = %q, want %q", buf.String(), want)
	}
}

// TestRejectsReportNeutralizesFormulas: a reject's reason quotes the
// file's cells, so the report an operator opens quotes a formula.
func TestRejectsReportNeutralizesFormulas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rejects.csv")
	if err := writeRejects(path, []records.Reject{{Line: 3, Reason: "=cmd|' /C calc'!A0"}, {Line: 4, Reason: "apn is empty"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, "3,'=cmd|' /C calc'!A0\n") || !strings.Contains(got, "4,apn is empty\n") {
		t.Fatalf("rejects = %q", got)
	}
}
