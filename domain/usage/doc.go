// Package usage holds the metering facts of arr's keyed APIs: how many
// requests each key made on each service per UTC day, as CallsCounted
// events. The account pages' "usage of the last 30 days" is a read model of
// them (usage.Projection), so it is rebuilt identically from the log.
//
// Values here are plain data, safe to share once built.
package usage
