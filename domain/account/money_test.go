package account_test

import (
	"testing"

	"github.com/arr-dev/arr/domain/account"
)

func TestMicroUSDAsDollars(t *testing.T) {
	cases := []struct {
		name string
		in   account.MicroUSD
		want string
	}{
		{"zero", 0, "0.00"},
		{"whole dollars", 19_000_000, "19.00"},
		{"cents", 1_990_000, "1.99"},
		{"sub-cent", 250, "0.000250"},
		{"negative", -2_500_000, "-2.50"},
		{"enterprise", 2_000_000_000, "2000.00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.USD(); got != tc.want {
				t.Fatalf("%d.USD() = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
