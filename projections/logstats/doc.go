// Package logstats counts the event log per type and per stream category,
// with first and last positions and times (arr events stats).
package logstats
