// Package builtin lists the read models arr ships, each in its own package
// beside this one, for the runner that keeps them.
package builtin
