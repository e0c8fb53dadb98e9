// Package wait holds the one context-aware sleep every layer uses: a
// retry's back-off, a poll's interval, a lease's renewal. It is the
// standard library only, so domain may hold it and every layer import it.
package wait
