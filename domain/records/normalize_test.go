package records_test

import (
	"testing"

	"github.com/arr-dev/arr/domain/records"
)

func TestFormatAPN(t *testing.T) {
	tests := []struct {
		name, format string
		in           []string
		want         string
		fails        bool
	}{
		{"baltimore block and lot", records.APNAsIs, []string{"4275", "026"}, "4275 026", false},
		{"baltimore tax account", records.APNBaltimoreTaxAccount, []string{"042750026"}, "4275 026", false},
		{"baltimore block suffix", records.APNBaltimoreTaxAccount, []string{"7419D0001"}, "7419D 001", false},
		{"baltimore lot suffix", records.APNBaltimoreTaxAccount, []string{"02358048D"}, "2358 048D", false},
		{"baltimore short", records.APNBaltimoreTaxAccount, []string{"12345"}, "", true},
		{"orange tax account", records.APNOrangeTaxAccount, []string{"18-24-28-0000-00009"}, "282418000000009", false},
		{"orange malformed", records.APNOrangeTaxAccount, []string{"18-24-28"}, "", true},
		{"empty", records.APNAsIs, []string{" "}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := records.FormatAPN(tt.format, tt.in)
			if (err != nil) != tt.fails || got != tt.want {
				t.Fatalf("FormatAPN(%q, %v) = %q, %v", tt.format, tt.in, got, err)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	if got := records.NormalizeAddress("2041 West North Avenue, Apt #5"); got != "2041 W NORTH AVE UNIT 5" {
		t.Fatalf("address: %q", got)
	}
	if got := records.NormalizeAddress("9601 Sunrise Lakes Blvd #207"); got != "9601 SUNRISE LAKES BLVD UNIT 207" {
		t.Fatalf("address: %q", got)
	}
	if got := records.NormalizeAPN("4275 026"); got != "4275026" {
		t.Fatalf("apn: %q", got)
	}
}
