// Package parcelfile writes exports of a county's parcels with their layer
// signals in the formats GIS tools load: CSV (RFC 4180, with lon/lat and
// WKT columns), FlatGeobuf (streamed, without a spatial index) and
// GeoPackage (a SQLite file, written to disk and then sent). Every format
// has the same columns (Columns): the parcel, the URL of the source it
// came from, the keys of the layers naming it, and per layer of the
// export whether it names the parcel, its dates and its source URL. A
// writer is not safe for concurrent use.
package parcelfile
