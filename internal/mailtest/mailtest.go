// Package mailtest runs a real SMTP server (go-smtp's) on 127.0.0.1 for
// the tests of the packages that send email, and takes the verification
// emails it receives apart with the standard library.
package mailtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
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
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/identitylib/identity"
)

// Server is a real SMTP server on 127.0.0.1, go-smtp's server, that
// records the messages it accepts. A test can take it down (connections
// are reset as soon as they arrive), hold it (connections wait, with
// nothing said, until released), require a login, or refuse recipients.
type Server struct {
	srv *smtp.Server
	ln  net.Listener
	// Port is the port the server listens on, on 127.0.0.1.
	Port int
	// cert is the server's certificate when it speaks TLS.
	cert *x509.Certificate

	cfg Config

	mu       sync.Mutex
	msgs     []Message
	arrived  chan struct{} // closed and replaced when a message is accepted
	down     bool
	hold     chan struct{} // non-nil: new connections wait for it to close
	arrivals int           // connections accepted (held or not, not while down)
	closed   chan struct{}
}

// Message is one accepted message with its envelope.
type Message struct {
	From string
	To   []string
	Data []byte
}

// Config says how a test server behaves.
type Config struct {
	TLS                TLSMode
	Username, Password string // a login is required when set
	RefuseRcpt         bool   // answer RCPT TO with 550
}

// TLSMode says how a test server speaks TLS.
type TLSMode int

const (
	Plain       TLSMode = iota // no TLS at all
	ImplicitTLS                // TLS from the first byte
	StartTLS                   // offers STARTTLS
)

// WaitBound bounds WaitMessages. Nothing is timed: a wait that runs out
// is a failure, not a measurement. The bound is generous, so that a busy
// machine (the race detector, a dispatcher that leases the job first, a
// process starting) never fails a test, and short enough that a message
// that never comes fails its test in minutes rather than at the test
// binary's timeout. A test passes its own bound to WaitMessagesContext.
const WaitBound = 2 * time.Minute

// NewServer starts a server that the test's cleanup stops.
func NewServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	ms := &Server{cfg: cfg, closed: make(chan struct{}), arrived: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ms.Port = ln.Addr().(*net.TCPAddr).Port
	ms.ln = &gateListener{Listener: ln, ms: ms}
	ms.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &session{ms: ms}, nil
	}))
	ms.srv.Domain = "mail.test"
	ms.srv.AllowInsecureAuth = true // loopback: the plain-text mode may log in
	ms.srv.ErrorLog = log.New(io.Discard, "", 0)
	if cfg.TLS != Plain {
		tlsConfig := testCertificate(t)
		ms.cert = tlsConfig.Certificates[0].Leaf
		switch cfg.TLS {
		case ImplicitTLS:
			ms.ln = tls.NewListener(ms.ln, tlsConfig)
		case StartTLS:
			ms.srv.TLSConfig = tlsConfig
		}
	}
	go ms.srv.Serve(ms.ln)
	t.Cleanup(ms.Close)
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

// Close stops the server; the test's cleanup calls it too.
func (ms *Server) Close() {
	ms.mu.Lock()
	select {
	case <-ms.closed:
	default:
		close(ms.closed)
	}
	ms.mu.Unlock()
	ms.srv.Close()
}

// Roots trusts the server's certificate, if it has one.
func (ms *Server) Roots() *x509.CertPool {
	pool := x509.NewCertPool()
	if ms.cert != nil {
		pool.AddCert(ms.cert)
	}
	return pool
}

// SetDown takes the server down (true) or brings it back.
func (ms *Server) SetDown(down bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.down = down
}

// Hold makes new connections wait, unanswered, until the
// returned function is called.
func (ms *Server) Hold() (release func()) {
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

// Messages returns the messages accepted so far.
func (ms *Server) Messages() []Message {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return append([]Message(nil), ms.msgs...)
}

// Connections counts the connections accepted (held or not, not while
// down).
func (ms *Server) Connections() int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.arrivals
}

// WaitMessages waits until the server has accepted n messages and returns
// them; it fails the test when they have not arrived within WaitBound, by
// the test's end, or by the server's Close.
func (ms *Server) WaitMessages(t testing.TB, n int) []Message {
	t.Helper()
	return ms.waitWithin(t, n, WaitBound)
}

// waitWithin is WaitMessages with the bound d.
func (ms *Server) waitWithin(t testing.TB, n int, d time.Duration) []Message {
	t.Helper()
	ctx, cancel := context.WithTimeoutCause(t.Context(), d, fmt.Errorf("none more within %s", d))
	defer cancel()
	return ms.WaitMessagesContext(ctx, t, n)
}

// WaitMessagesContext is WaitMessages bounded by ctx instead of
// WaitBound, for a test whose messages come after something slower than
// a message on its way (a process starting): it fails the test when ctx
// ends first, or the server is closed.
func (ms *Server) WaitMessagesContext(ctx context.Context, t testing.TB, n int) []Message {
	t.Helper()
	for {
		ms.mu.Lock()
		msgs, arrived := append([]Message(nil), ms.msgs...), ms.arrived
		ms.mu.Unlock()
		if len(msgs) >= n {
			return msgs
		}
		select {
		case <-arrived:
		case <-ms.closed:
			t.Fatalf("the server was closed with %d messages, want %d", len(msgs), n)
		case <-ctx.Done():
			t.Fatalf("%d messages arrived, want %d: %v", len(msgs), n, context.Cause(ctx))
		}
	}
}

// gateListener passes connections to the server unless it is down (the
// connection is reset) or held (the connection waits).
type gateListener struct {
	net.Listener
	ms *Server
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

// session is one SMTP session of a Server.
type session struct {
	ms     *Server
	authed bool
	from   string
	to     []string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if s.ms.cfg.Username == "" || username != s.ms.cfg.Username || password != s.ms.cfg.Password {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.ms.cfg.Username != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.ms.cfg.RefuseRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.ms.mu.Lock()
	s.ms.msgs = append(s.ms.msgs, Message{From: s.from, To: s.to, Data: b})
	close(s.ms.arrived)
	s.ms.arrived = make(chan struct{})
	s.ms.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

// Parsed is a received verification or password reset email taken apart.
type Parsed struct {
	Header  mail.Header
	Subject string
	To      *mail.Address
	From    *mail.Address
	// Structure is the tree of the body's media types, such as
	// "multipart/alternative(text/plain, multipart/related(text/html,
	// image/png))".
	Structure string
	// Types are the content types of the text parts, in order; Plain and
	// HTML their decoded bodies.
	Types       []string
	Plain, HTML string
	// Images are the image parts (a logo), in order.
	Images []Image
	// Link is the link of the plain part, Token the token in it.
	Link, Token string
}

// Image is an image part of a message, decoded.
type Image struct {
	// ContentType is the part's Content-Type header; ContentID its
	// Content-ID without angle brackets; Disposition its
	// Content-Disposition header.
	ContentType, ContentID, Disposition string
	Data                                []byte
}

// tokenPattern matches a verification (idv_) or password reset (idr_)
// token.
var tokenPattern = regexp.MustCompile(`id[vr]_[0-9a-f]{16}_[A-Za-z0-9_-]{43}`)

// Parse takes a verification or password reset email apart with the
// standard library, checking on the way what every message must satisfy:
// CRLF line ends, no line over 998 characters, a multipart/alternative
// body whose text parts are quoted-printable and whose image parts are
// base64 in lines of at most 76 characters, multipart parts nested within
// it (multipart/related) taken apart likewise.
func Parse(t testing.TB, data []byte) Parsed {
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
	var p Parsed
	p.Header = msg.Header
	dec := new(mime.WordDecoder)
	if p.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		t.Fatal(err)
	}
	if p.To, err = mail.ParseAddress(msg.Header.Get("To")); err != nil {
		t.Fatalf("To %q: %v", msg.Header.Get("To"), err)
	}
	if p.From, err = mail.ParseAddress(msg.Header.Get("From")); err != nil {
		t.Fatalf("From %q: %v", msg.Header.Get("From"), err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	p.Structure = mt + "(" + p.parseMultipart(t, msg.Body, params["boundary"]) + ")"
	for _, line := range strings.Split(p.Plain, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "http") {
			p.Link = line
		}
	}
	p.Token = tokenPattern.FindString(p.Link)
	return p
}

// parseMultipart reads the parts of a multipart body into p and returns
// their structure, the media types separated by ", ".
func (p *Parsed) parseMultipart(t testing.TB, body io.Reader, boundary string) string {
	t.Helper()
	if boundary == "" {
		t.Fatal("a multipart part without boundary")
	}
	var types []string
	mr := multipart.NewReader(body, boundary)
	for {
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, p.parsePart(t, part))
	}
	return strings.Join(types, ", ")
}

// parsePart reads one part into p and returns its structure.
func (p *Parsed) parsePart(t testing.TB, part *multipart.Part) string {
	t.Helper()
	ct := part.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		t.Fatalf("part Content-Type %q: %v", ct, err)
	}
	cte := part.Header.Get("Content-Transfer-Encoding")
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		if cte != "" {
			t.Errorf("multipart part %q has Content-Transfer-Encoding %q", ct, cte)
		}
		return mt + "(" + p.parseMultipart(t, part, params["boundary"]) + ")"
	case strings.HasPrefix(mt, "image/"):
		p.Images = append(p.Images, Image{
			ContentType: ct, Disposition: part.Header.Get("Content-Disposition"),
			ContentID: strings.TrimSuffix(strings.TrimPrefix(part.Header.Get("Content-ID"), "<"), ">"),
			Data:      decodeBase64(t, part, ct, cte),
		})
		return mt
	}
	if cte != "quoted-printable" {
		t.Errorf("part %q has Content-Transfer-Encoding %q", ct, cte)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(part))
	if err != nil {
		t.Fatal(err)
	}
	p.Types = append(p.Types, ct)
	switch mt {
	case "text/plain":
		p.Plain = string(body)
	case "text/html":
		p.HTML = string(body)
	}
	return mt
}

// decodeBase64 decodes a base64 part, checking that it is base64 in
// lines of at most 76 characters (RFC 2045 6.8).
func decodeBase64(t testing.TB, part io.Reader, ct, cte string) []byte {
	t.Helper()
	if cte != "base64" {
		t.Errorf("part %q has Content-Transfer-Encoding %q", ct, cte)
	}
	raw, err := io.ReadAll(part)
	if err != nil {
		t.Fatal(err)
	}
	var encoded strings.Builder
	for _, line := range strings.Split(string(raw), "\r\n") {
		if len(line) > 76 {
			t.Errorf("part %q has a base64 line of %d characters", ct, len(line))
		}
		encoded.WriteString(line)
	}
	data, err := base64.StdEncoding.DecodeString(encoded.String())
	if err != nil {
		t.Fatalf("part %q: %v", ct, err)
	}
	return data
}

// HTMLLink returns the href of the HTML part's first link, unescaped.
func (p Parsed) HTMLLink() string {
	_, rest, ok := strings.Cut(p.HTML, `href="`)
	if !ok {
		return ""
	}
	href, _, _ := strings.Cut(rest, `"`)
	return html.UnescapeString(href)
}

// Settings are SMTP settings for the server: plain text for a plain
// server, else the given mode.
func (ms *Server) Settings(mode identity.SMTPTLSMode) *identity.SMTPSettings {
	return &identity.SMTPSettings{
		Host: "127.0.0.1", Port: ms.Port, TLS: mode,
		Username: ms.cfg.Username, Password: ms.cfg.Password,
		From: "noreply@acme.test", FromName: "Acme",
		VerifyURL: "https://app.acme.test/verify?token={token}&lang=en",
	}
}
