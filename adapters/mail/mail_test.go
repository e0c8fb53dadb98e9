package mail_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/mail"
	"github.com/arr-dev/arr/adapters/mail/mailtest"
)

// selfSigned returns a server TLS config for 127.0.0.1 and a client one
// that trusts it.
func selfSigned(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mailtest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool}
}

func TestSMTPDelivers(t *testing.T) {
	srvTLS, cliTLS := selfSigned(t)
	cases := []struct {
		name     string
		opts     mailtest.Options
		wantTLS  bool
		wantUser string
	}{
		{name: "plain, no STARTTLS offered, no auth", opts: mailtest.Options{}},
		{name: "STARTTLS offered and used, AUTH PLAIN", opts: mailtest.Options{TLS: srvTLS, User: "arr", Password: "s3cret"}, wantTLS: true, wantUser: "arr"},
		{name: "implicit TLS (smtps), AUTH PLAIN", opts: mailtest.Options{TLS: srvTLS, Implicit: true, User: "arr", Password: "s3cret"}, wantTLS: true, wantUser: "arr"},
		{name: "auth over loopback without TLS", opts: mailtest.Options{User: "arr", Password: "pw"}, wantUser: "arr"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, tc.opts)
			m, err := mail.NewSMTP(mail.SMTPConfig{URL: srv.URL, From: "arr <no-reply@arr.example>", TLS: cliTLS})
			if err != nil {
				t.Fatal(err)
			}
			link := "http://127.0.0.1:8082/account/signin/verify?link=4f0c4a8e-7a53-4bd4-9c56-8f2b0f6f7d11&token=" + strings.Repeat("A_b-", 11)
			body := "Sign in to arr — gateway:\n\n" + link + "\n\nThe link works once, for 15 minutes.\n"
			if err := m.Send(t.Context(), "who@example.com", "Your arr sign-in link ✓", body); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := srv.Next(t)
			if got.Link(t, "/account/signin/verify") != link {
				t.Fatalf("link in the mail = %q, want %q", got.Link(t, "/account/signin/verify"), link)
			}
			if got.Subject != "Your arr sign-in link ✓" || got.From != "no-reply@arr.example" || len(got.To) != 1 || got.To[0] != "who@example.com" {
				t.Fatalf("envelope/subject: from %q to %v subject %q", got.From, got.To, got.Subject)
			}
			if got.TLS != tc.wantTLS || got.AuthUser != tc.wantUser {
				t.Fatalf("TLS %v auth %q; want %v %q", got.TLS, got.AuthUser, tc.wantTLS, tc.wantUser)
			}
			if !strings.Contains(got.Text, "Sign in to arr — gateway:") {
				t.Fatalf("body not decoded as sent:\n%s", got.Text)
			}
		})
	}
}

func TestSMTPRefusals(t *testing.T) {
	srvTLS, _ := selfSigned(t)
	cases := []struct {
		name, url string
		opts      *mailtest.Options
		wantErr   string
	}{
		{name: "wrong password", opts: &mailtest.Options{User: "arr", Password: "right"}, url: "smtp://arr:wrong@%s", wantErr: "AUTH"},
		{name: "untrusted certificate", opts: &mailtest.Options{TLS: srvTLS}, url: "smtp://%s", wantErr: "STARTTLS"},
		{name: "credentials but no AUTH offered", opts: &mailtest.Options{}, url: "smtp://u:p@%s", wantErr: "offers no AUTH"},
		{name: "nobody listening", url: "smtp://%s", wantErr: "connect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := "127.0.0.1:1"
			if tc.opts != nil {
				addr = mailtest.Start(t, *tc.opts).Addr
			}
			m, err := mail.NewSMTP(mail.SMTPConfig{URL: strings.Replace(tc.url, "%s", addr, 1), From: "no-reply@arr.example", Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			err = m.Send(context.Background(), "who@example.com", "s", "b")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Send error = %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
}

func TestNewSMTPValidates(t *testing.T) {
	cases := []struct{ name, url, from string }{
		{"wrong scheme", "http://mail.example:25", "a@example.com"},
		{"no host", "smtp://", "a@example.com"},
		{"bad sender", "smtp://mail.example", "not an address"},
		{"no sender", "smtp://mail.example", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := mail.NewSMTP(mail.SMTPConfig{URL: tc.url, From: tc.from}); err == nil {
				t.Fatalf("NewSMTP(%q, %q) accepted", tc.url, tc.from)
			}
		})
	}
	m, err := mail.NewSMTP(mail.SMTPConfig{URL: "smtp://u:p@mail.example", From: "a@example.com"})
	if err != nil || m.Addr() != "mail.example:587" {
		t.Fatalf("default port: %v %v", m, err)
	}
}

func TestSendRefusesHeaderInjection(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	m, err := mail.NewSMTP(mail.SMTPConfig{URL: srv.URL, From: "a@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(t.Context(), "who@example.com", "hi\r\nBcc: evil@example.com", "b"); err == nil {
		t.Fatal("a subject with a line break was sent")
	}
}

func TestLogMailerPrintsTheMessageAndSaysSo(t *testing.T) {
	var buf bytes.Buffer
	m := mail.NewLog(slog.New(slog.NewTextHandler(&buf, nil)))
	if err := m.Send(t.Context(), "who@example.com", "Your arr sign-in link", "http://127.0.0.1:8082/account/signin/verify?link=x&token=y"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"no SMTP server configured", "SMTP_URL", "who@example.com", "/account/signin/verify?link=x&token=y"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
}
