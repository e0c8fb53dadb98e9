package account

import "fmt"

// USD writes the amount as a decimal number of US dollars: two places when
// it is a whole number of cents ("19.00"), else all six ("0.000250").
func (m MicroUSD) USD() string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	if m%10_000 == 0 {
		return fmt.Sprintf("%s%d.%02d", sign, m/1_000_000, m%1_000_000/10_000)
	}
	return fmt.Sprintf("%s%d.%06d", sign, m/1_000_000, m%1_000_000)
}
