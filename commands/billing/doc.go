// Package billing is the write side of paid plans: Checkout and
// billing-portal sessions under the plan rules, and Stripe's verified
// webhook events turned into ChangePlan commands. readapi/billingapi serves
// it over HTTP.
package billing
