package identity_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"html"
	"io"
	"log"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http/httptest"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/identitylib/identity"
)

// mailServer is a real SMTP server on 127.0.0.1, go-smtp's server, that
// records the messages it accepts. A test can take it down (connections
// are reset as soon as they arrive), hold it (connections wait, with
// nothing said, until released), require a login, or refuse recipients.
type mailServer struct {
	srv  *smtp.Server
	ln   net.Listener
	port int
	// cert is the server's certificate when it speaks TLS.
	cert *x509.Certificate

	cfg mailConfig

	mu       sync.Mutex
	msgs     []receivedMail
	down     bool
	hold     chan struct{} // non-nil: new connections wait for it to close
	arrivals int           // connections accepted (held or not, not while down)
	closed   chan struct{}
}

// receivedMail is one accepted message with its envelope.
type receivedMail struct {
	from string
	to   []string
	data []byte
}

// mailConfig says how a test server behaves.
type mailConfig struct {
	tls                mailTLS
	username, password string // a login is required when set
	refuseRcpt         bool   // answer RCPT TO with 550
}

// mailTLS says how a test server speaks TLS.
type mailTLS int

const (
	mailPlain    mailTLS = iota // no TLS at all
	mailImplicit                // TLS from the first byte
	mailStartTLS                // offers STARTTLS
)

// newMailServer starts a server that the test's cleanup stops.
func newMailServer(t testing.TB, cfg mailConfig) *mailServer {
	t.Helper()
	ms := &mailServer{cfg: cfg, closed: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ms.port = ln.Addr().(*net.TCPAddr).Port
	ms.ln = &gateListener{Listener: ln, ms: ms}
	ms.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &mailSession{ms: ms}, nil
	}))
	ms.srv.Domain = "mail.test"
	ms.srv.AllowInsecureAuth = true // loopback: the plain-text mode may log in
	ms.srv.ErrorLog = log.New(io.Discard, "", 0)
	if cfg.tls != mailPlain {
		tlsConfig := testCertificate(t)
		ms.cert = tlsConfig.Certificates[0].Leaf
		switch cfg.tls {
		case mailImplicit:
			ms.ln = tls.NewListener(ms.ln, tlsConfig)
		case mailStartTLS:
			ms.srv.TLSConfig = tlsConfig
		}
	}
	go ms.srv.Serve(ms.ln)
	t.Cleanup(ms.close)
	return ms
}

// testCertificate returns a TLS config with the certificate of httptest's
// TLS servers: self-signed, valid for 127.0.0.1.
func testCertificate(t testing.TB) *tls.Config {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	hs.StartTLS()
	cert := hs.TLS.Certificates[0]
	hs.Close()
	if cert.Leaf == nil {
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		cert.Leaf = leaf
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}}
}

func (ms *mailServer) close() {
	ms.mu.Lock()
	select {
	case <-ms.closed:
	default:
		close(ms.closed)
	}
	ms.mu.Unlock()
	ms.srv.Close()
}

// roots trusts the server's certificate, if it has one.
func (ms *mailServer) roots() *x509.CertPool {
	pool := x509.NewCertPool()
	if ms.cert != nil {
		pool.AddCert(ms.cert)
	}
	return pool
}

// setDown takes the server down (true) or brings it back.
func (ms *mailServer) setDown(down bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.down = down
}

// holdConnections makes new connections wait, unanswered, until the
// returned function is called.
func (ms *mailServer) holdConnections() (release func()) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	hold := make(chan struct{})
	ms.hold = hold
	var once sync.Once
	return func() {
		once.Do(func() {
			ms.mu.Lock()
			ms.hold = nil
			ms.mu.Unlock()
			close(hold)
		})
	}
}

func (ms *mailServer) messages() []receivedMail {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return append([]receivedMail(nil), ms.msgs...)
}

func (ms *mailServer) connections() int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.arrivals
}

// waitMessages waits until the server has accepted n messages and returns
// them.
func (ms *mailServer) waitMessages(t testing.TB, n int) []receivedMail {
	t.Helper()
	waitFor(t, "messages to arrive", func() bool { return len(ms.messages()) >= n })
	return ms.messages()
}

// gateListener passes connections to the server unless it is down (the
// connection is reset) or held (the connection waits).
type gateListener struct {
	net.Listener
	ms *mailServer
}

func (l *gateListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.ms.mu.Lock()
		down, hold := l.ms.down, l.ms.hold
		if !down {
			l.ms.arrivals++
		}
		l.ms.mu.Unlock()
		if down {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0) // a reset, as from a port nobody listens on
			}
			c.Close()
			continue
		}
		if hold != nil {
			select {
			case <-hold:
			case <-l.ms.closed:
				c.Close()
				return nil, net.ErrClosed
			}
		}
		return c, nil
	}
}

// mailSession is one SMTP session of a mailServer.
type mailSession struct {
	ms     *mailServer
	authed bool
	from   string
	to     []string
}

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if s.ms.cfg.username == "" || username != s.ms.cfg.username || password != s.ms.cfg.password {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.ms.cfg.username != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.ms.cfg.refuseRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.ms.mu.Lock()
	s.ms.msgs = append(s.ms.msgs, receivedMail{from: s.from, to: s.to, data: b})
	s.ms.mu.Unlock()
	return nil
}

func (s *mailSession) Reset()        { s.from, s.to = "", nil }
func (s *mailSession) Logout() error { return nil }

// parsedMail is a received verification email taken apart.
type parsedMail struct {
	header  mail.Header
	subject string
	to      *mail.Address
	from    *mail.Address
	// parts are the content types of the parts, in order, and their
	// decoded bodies.
	types      []string
	plain, htm string
	// link is the link of the plain part, token the token in it.
	link, token string
}

var tokenPattern = regexp.MustCompile(`idv_[0-9a-f]{16}_[A-Za-z0-9_-]{43}`)

// parseMail takes a verification email apart with the standard library,
// checking on the way what every message must satisfy: CRLF line ends,
// no line over 998 characters, a multipart/alternative body whose parts
// are quoted-printable.
func parseMail(t testing.TB, data []byte) parsedMail {
	t.Helper()
	for i, line := range strings.Split(string(data), "\r\n") {
		if strings.Contains(line, "\n") || len(line) > 998 {
			t.Fatalf("line %d is malformed or too long (%d bytes): %q", i, len(line), line)
		}
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("reading the message: %v\n%s", err, data)
	}
	var p parsedMail
	p.header = msg.Header
	dec := new(mime.WordDecoder)
	if p.subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		t.Fatal(err)
	}
	if p.to, err = mail.ParseAddress(msg.Header.Get("To")); err != nil {
		t.Fatalf("To %q: %v", msg.Header.Get("To"), err)
	}
	if p.from, err = mail.ParseAddress(msg.Header.Get("From")); err != nil {
		t.Fatalf("From %q: %v", msg.Header.Get("From"), err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if cte := part.Header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
			t.Errorf("part %q has Content-Transfer-Encoding %q", part.Header.Get("Content-Type"), cte)
		}
		body, err := io.ReadAll(quotedprintable.NewReader(part))
		if err != nil {
			t.Fatal(err)
		}
		ct := part.Header.Get("Content-Type")
		p.types = append(p.types, ct)
		switch {
		case strings.HasPrefix(ct, "text/plain"):
			p.plain = string(body)
		case strings.HasPrefix(ct, "text/html"):
			p.htm = string(body)
		}
	}
	for _, line := range strings.Split(p.plain, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "http") {
			p.link = line
		}
	}
	p.token = tokenPattern.FindString(p.link)
	return p
}

// htmlLink returns the href of the HTML part's first link, unescaped.
func (p parsedMail) htmlLink() string {
	_, rest, ok := strings.Cut(p.htm, `href="`)
	if !ok {
		return ""
	}
	href, _, _ := strings.Cut(rest, `"`)
	return html.UnescapeString(href)
}

// mailSettings are SMTP settings for the server: plain text for a plain
// server, else the given mode.
func (ms *mailServer) settings(mode identity.SMTPTLSMode) *identity.SMTPSettings {
	return &identity.SMTPSettings{
		Host: "127.0.0.1", Port: ms.port, TLS: mode,
		Username: ms.cfg.username, Password: ms.cfg.password,
		From: "noreply@acme.test", FromName: "Acme",
		VerifyURL: "https://app.acme.test/verify?token={token}&lang=en",
	}
}
