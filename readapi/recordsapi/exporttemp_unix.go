//go:build unix

package recordsapi

import (
	"errors"
	"os"
	"syscall"
)

// hold takes f's exclusive lock (flock) for as long as f is open, if no
// one holds it; false when someone does.
func hold(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// left reports whether f was left by a process that has ended: no one
// holds its lock (it is then held by f until f is closed).
func left(f *os.File) (bool, error) { return hold(f) }
