// Package records holds the records service's domain: the data layers and
// their keys, the bounding-box rule of the parcel search, APN and address
// normalization, the versioned motivation-score weights and the score's
// arithmetic, and the events of layer loads, list imports and contact-data
// erasure. It imports the standard library and uuid only.
package records
