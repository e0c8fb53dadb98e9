// Package natstest starts a private nats-server with JetStream for a test:
// on a free loopback port, with its storage in the test's temporary
// directory, killed when the test ends (and by the kernel if the test binary
// dies first, on Linux).
package natstest
