package main

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/arr-dev/arr/readapi/httpx"
)

// publicBase is a service's public base URL: ARR_PUBLIC_BASE_URL with
// {service} replaced, else the default of the address it listens on
// (httpx.DefaultBaseURL); unspecified reports that the listen host was an
// all-interfaces address replaced by loopback.
func (c *Config) publicBase(service, listen string) (base string, unspecified bool, err error) {
	if c.PublicBaseURL != "" {
		return strings.TrimRight(strings.ReplaceAll(c.PublicBaseURL, "{service}", service), "/"), false, nil
	}
	return httpx.DefaultBaseURL(listen)
}

// listenAddr is the address a service listens on for its site: the
// configured host (a name stays a name) with the listener's actual port
// (so ":0" becomes the port chosen).
func listenAddr(configured string, ln net.Addr) string {
	host, _, err := net.SplitHostPort(configured)
	tcp, ok := ln.(*net.TCPAddr)
	if err != nil || !ok {
		return ln.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}

// site is the public site of a service listening on listen: its links'
// base URL and the hosts that may ask for them. It warns when the base URL
// had to fall back to loopback.
func (c *Config) site(service, listen string, log *slog.Logger) (httpx.Site, error) {
	base, unspecified, err := c.publicBase(service, listen)
	if err != nil {
		return httpx.Site{}, fmt.Errorf("%s service: %w", service, err)
	}
	if unspecified {
		log.Warn("ARR_PUBLIC_BASE_URL is unset and the "+service+" service listens on all interfaces: its sign-in and billing links point to "+base+
			", which works on this machine only, and requests to other host names get 421; set ARR_PUBLIC_BASE_URL to the address clients use, e.g. https://{service}.arr.example",
			"listen", listen)
	}
	s, err := httpx.NewSite(base, listen)
	if err != nil {
		return httpx.Site{}, fmt.Errorf("%s service: %w", service, err)
	}
	return s, nil
}

// serviceBase is the public base URL of a service as configured (for
// documentation links; a running server uses its site).
func (c *Config) serviceBase(service string) string {
	addr := map[string]string{"answer": c.AnswerAddr, "gateway": c.GatewayAddr, "records": c.RecordsAddr}[service]
	base, _, err := c.publicBase(service, addr)
	if err != nil {
		return "http://" + addr
	}
	return base
}
