//go:build !linux

package natstest

import "os/exec"

// dieWithParent is a no-op where Pdeathsig does not exist; the test's
// cleanup still kills the server.
func dieWithParent(*exec.Cmd) {}
