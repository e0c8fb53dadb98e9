// Package tileflight makes a value once for every caller asking for it
// at the same time, like singleflight, but the work runs detached from
// every caller: under a time limit counted from its own start, each
// caller waiting under its own context (and leaving when it ends), and
// the work cancelled only when the last caller has left. The records
// service makes its vector tiles through it.
package tileflight
