package natstest

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Start starts a private `nats-server -js` on a free loopback port with
// its storage in a temporary directory, waits until JetStream answers, and
// kills it when the test ends. It returns the server's URL.
func Start(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs nats-server with JetStream; runs without -short (scripts/test.sh)")
	}
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Fatalf("nats-server not found on PATH (%v): install nats-server (scripts/test.sh does)", err)
	}
	port := FreePort(t)
	out := &syncBuffer{}
	cmd := exec.Command(bin, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", t.TempDir())
	cmd.Stdout, cmd.Stderr = out, out
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for !jetStreamReady(url) {
		select {
		case <-exited:
			t.Fatalf("nats-server exited before accepting connections (%v):\n%s", waitErr, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server on %s did not become ready in 20s:\n%s", url, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return url
}

func jetStreamReady(url string) bool {
	nc, err := nats.Connect(url, nats.Timeout(time.Second), nats.NoReconnect())
	if err != nil {
		return false
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		return false
	}
	_, err = js.AccountInfo()
	return err == nil
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer collects a child process's output while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Node is one server of a Cluster.
type Node struct {
	Name string
	URL  string
	cmd  *exec.Cmd
	done chan struct{}
	out  *syncBuffer
}

// Stop kills the node (SIGKILL) and waits for it to exit.
func (n *Node) Stop() {
	_ = n.cmd.Process.Kill()
	<-n.done
}

// Cluster is a JetStream cluster of nats-server processes on loopback.
type Cluster struct {
	Nodes []*Node
}

// URL is every node's URL, comma-separated, as NATS_URL takes them.
func (c *Cluster) URL() string {
	urls := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		urls[i] = n.URL
	}
	return strings.Join(urls, ",")
}

// Node returns the node named name.
func (c *Cluster) Node(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// StartCluster starts n `nats-server -js` processes clustered on loopback
// (server names n1..nN, cluster "arr-test", each with its own storage),
// waits until JetStream answers through every node (a meta leader is
// elected), and kills them when the test ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Fatalf("nats-server not found on PATH (%v): install nats-server (scripts/test.sh does)", err)
	}
	ports, routes := make([]int, n), make([]string, n)
	for i := range n {
		ports[i] = FreePort(t)
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", FreePort(t))
	}
	c := &Cluster{}
	for i := range n {
		node := &Node{Name: fmt.Sprintf("n%d", i+1), URL: fmt.Sprintf("nats://127.0.0.1:%d", ports[i]), done: make(chan struct{}), out: &syncBuffer{}}
		node.cmd = exec.Command(bin, "-js", "-n", node.Name, "-a", "127.0.0.1", "-p", strconv.Itoa(ports[i]), "-sd", t.TempDir(),
			"--cluster_name", "arr-test", "--cluster", routes[i], "--routes", strings.Join(routes, ","))
		node.cmd.Stdout, node.cmd.Stderr = node.out, node.out
		dieWithParent(node.cmd)
		if err := node.cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", bin, err)
		}
		go func() { _ = node.cmd.Wait(); close(node.done) }()
		t.Cleanup(func() { _ = node.cmd.Process.Kill(); <-node.done })
		c.Nodes = append(c.Nodes, node)
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, node := range c.Nodes {
		for !jetStreamReady(node.URL) {
			select {
			case <-node.done:
				t.Fatalf("nats-server %s exited:\n%s", node.Name, node.out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("the cluster's JetStream was not ready in 60s; %s says:\n%s", node.Name, node.out.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return c
}
