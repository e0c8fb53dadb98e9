// Package listeval builds, from the real county files arr ships
// (adapters/demodata: Baltimore City's vacant building notices and tax
// sale certificates, Orange County FL's code violations), lists in the
// shapes list builders and county assessors export (PropStream,
// DealMachine, BatchData, REISift, an assessor's situs export), with the
// variations real exports have (Avenue/Ave/AVE., W/West, #2/APT 2/Unit 2,
// leading zeros, mixed case, ZIP+4, separate city/state/zip, a mailing
// address that is another property's), and the true parcel of every row:
// the record it was built from names it. The lists are deterministic, so
// a match rate measured on them can be compared run to run
// (docs/lists.md).
package listeval
