// Package tierquality is the read model of feedback per tier and
// difficulty band, and the query the router blends into its quality
// estimates.
package tierquality
