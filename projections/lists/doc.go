// Package lists is the read model of the lists accounts imported into the
// records service (contact columns stay sealed) and its queries.
package lists
