package main

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"
)

// loopbackNS is a network namespace where only a loopback interface
// exists, as cmd/arr's TestGatewayClaudeCode runs Claude Code: nothing
// started in it can connect beyond loopback (a DNS server included). Its
// 127.0.0.1:port is relayed to arr's gateway in the bench's own
// namespace, so what runs in it reaches arr and nothing else.
type loopbackNS struct {
	// baseURL is the gateway as seen from inside the namespace.
	baseURL string
	ln      net.Listener
	starts  chan startReq
}

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

// newLoopbackNS makes the namespace and relays it to target. One
// goroutine's thread enters it and stays there, locked and never
// unlocked (the runtime ends the thread with the goroutine), starting
// every command it is sent: a child inherits its parent thread's network
// namespace, and no other goroutine ever runs in it.
func newLoopbackNS(target string) (*loopbackNS, error) {
	ns := &loopbackNS{starts: make(chan startReq)}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ln, err := enterLoopbackNamespace()
		if err != nil {
			ready <- err
			return
		}
		ns.ln, ns.baseURL = ln, "http://"+ln.Addr().String()
		ready <- nil
		for r := range ns.starts {
			r.done <- r.cmd.Start()
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	go ns.relay(target)
	return ns, nil
}

// start starts cmd inside the namespace.
func (ns *loopbackNS) start(cmd *exec.Cmd) error {
	done := make(chan error)
	ns.starts <- startReq{cmd, done}
	return <-done
}

func (ns *loopbackNS) close() {
	close(ns.starts)
	_ = ns.ln.Close()
}

func (ns *loopbackNS) relay(target string) {
	for {
		c, err := ns.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", target)
			if err != nil {
				return
			}
			defer up.Close()
			go func() { _, _ = io.Copy(up, c); _ = up.(*net.TCPConn).CloseWrite() }()
			_, _ = io.Copy(c, up)
		}()
	}
}

// enterLoopbackNamespace moves the calling thread into a new network
// namespace, brings its loopback interface up and listens on it.
func enterLoopbackNamespace() (net.Listener, error) {
	if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var req struct {
		name  [syscall.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(req.name[:], "lo")
	req.flags = syscall.IFF_UP | syscall.IFF_LOOPBACK | syscall.IFF_RUNNING
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&req))); errno != 0 {
		return nil, fmt.Errorf("bringing lo up: %w", errno)
	}
	return net.Listen("tcp", "127.0.0.1:0")
}
