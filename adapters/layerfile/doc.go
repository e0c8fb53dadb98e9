// Package layerfile reads the public-record files a layer is loaded from
// (CSV, or GeoJSON FeatureCollections; either optionally gzip-compressed)
// through a column Mapping into records.Row values, reporting each row it
// cannot use with its line number and why. A Reader is not safe for
// concurrent use.
package layerfile
