package fanout_test

import (
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// lossyProxy relays TCP connections on loopback to a NATS server, and can
// lose what the server sends: while dropping, the bytes the server sends
// are read and thrown away, as a node killed with messages in its buffers
// or a connection cut mid-delivery loses them. cut closes every relayed
// connection, so the client reconnects through the proxy.
type lossyProxy struct {
	ln       net.Listener
	target   string
	dropping atomic.Bool
	mu       sync.Mutex
	conns    []net.Conn
}

// startLossyProxy relays a loopback listener to natsURL's host:port until
// the test ends, and returns the proxy and its nats:// URL.
func startLossyProxy(t testing.TB, natsURL string) (*lossyProxy, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &lossyProxy{ln: ln, target: strings.TrimPrefix(natsURL, "nats://")}
	go p.accept()
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	return p, "nats://" + ln.Addr().String()
}

func (p *lossyProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(server, client); _ = server.Close() }()
		go p.relayFromServer(server, client)
	}
}

// relayFromServer copies the server's bytes to the client unless dropping.
func (p *lossyProxy) relayFromServer(server, client net.Conn) {
	defer client.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 && !p.dropping.Load() {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// drop starts losing what the server sends.
func (p *lossyProxy) drop() { p.dropping.Store(true) }

// cut closes every relayed connection and stops losing bytes, so that the
// client's reconnection goes through whole.
func (p *lossyProxy) cut() {
	p.dropping.Store(false)
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}
