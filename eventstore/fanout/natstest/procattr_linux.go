package natstest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd if the test binary dies without
// running its cleanups (a panic or -timeout), so no nats-server outlives it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
