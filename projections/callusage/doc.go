// Package callusage is the read model of metered calls per account, key,
// service and UTC day (CallsCounted events) and its reports.
package callusage
