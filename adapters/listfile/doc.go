// Package listfile reads the CSV lists an account imports into the records
// service: each row names a property (an APN and/or a street address,
// optionally its county) and may carry the account's own contact columns
// (phone, e-mail). Other columns are not kept.
package listfile
