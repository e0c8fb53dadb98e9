// Package safecsv holds the one rule for writing a CSV cell that a
// spreadsheet will not run as a formula (CSV injection), so every CSV arr
// writes from data someone else wrote (exports of public records, the
// rejects report of a load, an analyst query's rows) applies it the same
// way.
package safecsv
