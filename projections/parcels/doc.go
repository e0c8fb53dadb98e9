// Package parcels is the read model of the records service's public data
// (layer loads, parcels as PostGIS points, each parcel's layer signals)
// and its queries.
package parcels
