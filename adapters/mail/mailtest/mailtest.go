package mailtest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options configure the server.
type Options struct {
	// TLS, when set, makes the server offer STARTTLS (or, with Implicit,
	// speak TLS from the first byte).
	TLS      *tls.Config
	Implicit bool
	// User and Password, when set, make the server offer AUTH PLAIN and
	// refuse mail from clients that did not authenticate.
	User, Password string
}

// Message is one received mail.
type Message struct {
	From     string
	To       []string
	Raw      []byte
	Header   mail.Header
	Subject  string
	Text     string // the body, transfer-decoded
	TLS      bool   // received over TLS
	AuthUser string // the user that authenticated, if any
}

// Server is a running SMTP server. Safe for concurrent use.
type Server struct {
	// Addr is host:port; URL is an SMTP_URL for it (with the credentials).
	Addr string
	URL  string
	msgs chan Message
	o    Options
}

// Start starts a server on 127.0.0.1 and stops it when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: listening: %v", err)
	}
	s := &Server{Addr: ln.Addr().String(), msgs: make(chan Message, 100), o: o}
	scheme := "smtp"
	if o.Implicit {
		scheme = "smtps"
		ln = tls.NewListener(ln, o.TLS)
	}
	cred := ""
	if o.User != "" {
		cred = o.User + ":" + o.Password + "@"
	}
	s.URL = scheme + "://" + cred + s.Addr
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s, conn: c}, nil
	}))
	srv.Domain = "mailtest.localhost"
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	srv.MaxMessageBytes = 1 << 20
	srv.AllowInsecureAuth = o.TLS == nil
	if !o.Implicit {
		srv.TLSConfig = o.TLS
	}
	srv.ErrorLog = logger{t}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = ln.Close() // Close misses a listener Serve has not registered yet
		wg.Wait()
	})
	return s
}

type logger struct{ t testing.TB }

func (l logger) Printf(format string, v ...any) { l.t.Logf("mailtest: "+format, v...) }
func (l logger) Println(v ...any)               { l.t.Log(append([]any{"mailtest:"}, v...)...) }

// Next returns the next received message, failing the test if none
// arrives within a minute (a bound against hanging, not a timing check).
func (s *Server) Next(t testing.TB) Message {
	t.Helper()
	select {
	case m := <-s.msgs:
		return m
	case <-time.After(time.Minute):
		t.Fatalf("mailtest: no message arrived at %s", s.Addr)
		return Message{}
	}
}

// Pending returns the messages received and not yet taken, without waiting.
func (s *Server) Pending() []Message {
	var out []Message
	for {
		select {
		case m := <-s.msgs:
			out = append(out, m)
		default:
			return out
		}
	}
}

var urlRE = regexp.MustCompile(`https?://[^\s<>"]+`)

// Link returns the first URL in the message body that contains part.
func (m Message) Link(t testing.TB, part string) string {
	t.Helper()
	for _, u := range urlRE.FindAllString(m.Text, -1) {
		if strings.Contains(u, part) {
			return u
		}
	}
	t.Fatalf("mailtest: no link containing %q in the message:\n%s", part, m.Text)
	return ""
}

type session struct {
	s        *Server
	conn     *smtp.Conn
	authUser string
	from     string
	to       []string
}

func (se *session) AuthMechanisms() []string {
	if se.s.o.User == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (se *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != se.s.o.User || pass != se.s.o.Password {
			return errors.New("invalid credentials")
		}
		se.authUser = user
		return nil
	}), nil
}

func (se *session) Mail(from string, _ *smtp.MailOptions) error {
	if se.s.o.User != "" && se.authUser == "" {
		return smtp.ErrAuthRequired
	}
	se.from = from
	return nil
}

func (se *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	se.to = append(se.to, to)
	return nil
}

func (se *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := Message{From: se.from, To: se.to, Raw: raw, AuthUser: se.authUser}
	_, m.TLS = se.conn.TLSConnectionState()
	m.TLS = m.TLS || se.s.o.Implicit
	pm, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("mailtest: unparsable message: %w", err)
	}
	m.Header = pm.Header
	m.Subject, _ = new(mime.WordDecoder).DecodeHeader(pm.Header.Get("Subject"))
	body := pm.Body
	if strings.EqualFold(pm.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	text, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("mailtest: body: %w", err)
	}
	m.Text = string(text)
	select {
	case se.s.msgs <- m:
	default:
		return errors.New("mailtest: mailbox full")
	}
	return nil
}

func (se *session) Reset()        { se.from, se.to = "", nil }
func (se *session) Logout() error { return nil }
