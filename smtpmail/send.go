package smtpmail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/identitylib/identity"
)

// The errors of attempts that ran out of time or were stopped.
var (
	ErrTimedOut  = errors.New("timed out")
	ErrCancelled = errors.New("attempt cancelled")
)

// Result is what one sending attempt learnt.
type Result struct {
	// Code is the SMTP reply code of the last reply: 250 once the message
	// was accepted, the code of a refusal, 0 when no reply came.
	Code int
	// Permanent reports a refusal that retrying cannot cure: the server
	// refused the recipient with a 5xx reply.
	Permanent bool
}

// Sender sends email through the SMTP servers that workspaces' settings
// name. It is safe for concurrent use.
type Sender struct {
	roots *x509.CertPool
}

// NewSender returns a Sender that verifies servers' certificates against
// roots (nil: the system roots; SSL_CERT_FILE and SSL_CERT_DIR work as
// usual). Certificates are always verified.
func NewSender(roots *x509.CertPool) *Sender { return &Sender{roots: roots} }

// SendVerification builds the email m (VerificationMessage: a
// verification or a password reset email, as m.Kind says, in the language
// of m.Locale) and sends it through m.Server, within ctx. A message it
// cannot write (an unknown kind, no workspace name, a bad address or
// link) is a permanent failure: no retry can send it.
func (s *Sender) SendVerification(ctx context.Context, m identity.VerificationMail) (Result, error) {
	msg, err := VerificationMessage(m)
	if err != nil {
		return Result{Permanent: isPermanent(err)}, fmt.Errorf("building the email: %w", err)
	}
	return s.Send(ctx, m.Server, m.From.Address, m.To.Address, msg)
}

// Send sends msg from from to to through the server m describes. ctx
// bounds the whole exchange, from dialing to the server's acceptance of
// the message: when it ends the connection is closed, whatever the server
// is doing. The protocol is go-smtp's; this only chooses and orders it:
// the TLS mode (STARTTLS, which must be offered, implicit TLS, or plain
// text to a loopback address only), SASL PLAIN when a username is set,
// SMTPUTF8 for non-ASCII addresses.
func (s *Sender) Send(ctx context.Context, m identity.SMTPSettings, from, to string, msg []byte) (Result, error) {
	var res Result
	c, err := dialSMTP(ctx, m, s.roots)
	if err != nil {
		return res, smtpError(ctx, &res, "connecting", err)
	}
	defer c.Close()
	if m.Username != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return res, smtpError(ctx, &res, "authenticating", errors.New("the server offers no AUTH"))
		}
		if err := c.Auth(sasl.NewPlainClient("", m.Username, m.Password)); err != nil {
			return res, smtpError(ctx, &res, "authenticating", err)
		}
	}
	var opts *smtp.MailOptions
	if !isASCII(from) || !isASCII(to) {
		opts = &smtp.MailOptions{UTF8: true}
	}
	if err := c.Mail(from, opts); err != nil {
		return res, smtpError(ctx, &res, "MAIL FROM", err)
	}
	if err := c.Rcpt(to, nil); err != nil {
		err = smtpError(ctx, &res, "RCPT TO", err)
		res.Permanent = res.Code >= 500
		return res, err
	}
	w, err := c.Data()
	if err != nil {
		return res, smtpError(ctx, &res, "DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		w.Close()
		return res, smtpError(ctx, &res, "DATA", err)
	}
	if err := w.Close(); err != nil {
		return res, smtpError(ctx, &res, "DATA", err)
	}
	res.Code = 250
	c.Quit() // the message is accepted; a failing QUIT changes nothing
	return res, nil
}

// dialSMTP connects to the server and secures the connection as m.TLS
// says. The connection is closed when ctx ends, which bounds every read
// and write of the client however long the server takes.
func dialSMTP(ctx context.Context, m identity.SMTPSettings, roots *x509.CertPool) (*smtp.Client, error) {
	dialer := &net.Dialer{}
	if m.TLS == identity.SMTPNoTLS {
		dialer.Control = loopbackOnly
	}
	conn, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(m.Host, strconv.Itoa(m.Port)))
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	ok := false
	defer func() {
		if !ok {
			stop()
			conn.Close()
		}
	}()
	tlsConfig := &tls.Config{ServerName: m.Host, RootCAs: roots, MinVersion: tls.VersionTLS12}
	var c *smtp.Client
	switch m.TLS {
	case identity.SMTPImplicitTLS:
		tc := tls.Client(conn, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
		c = smtp.NewClient(tc)
	case identity.SMTPStartTLS, "":
		// NewClientStartTLS fails unless the server offers STARTTLS: the
		// message is never sent in plain text.
		if c, err = smtp.NewClientStartTLS(conn, tlsConfig); err != nil {
			return nil, err
		}
	default:
		c = smtp.NewClient(conn)
	}
	if deadline, has := ctx.Deadline(); has {
		c.CommandTimeout = max(time.Until(deadline), time.Millisecond)
		c.SubmissionTimeout = c.CommandTimeout
	}
	ok = true
	return c, nil
}

// loopbackOnly is the dial Control of plain-text SMTP: whatever the host
// name resolved to, only a loopback address is dialed.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("refused to connect to %s: plain-text SMTP goes to loopback addresses only", address)
	}
	return nil
}

// smtpError describes a failed step as a delivery's LastError, recording
// the server's reply code in res: a timeout or cancellation as such, a
// refusal with its code and text.
func smtpError(ctx context.Context, res *Result, step string, err error) error {
	switch {
	case ctx.Err() == context.Canceled:
		return fmt.Errorf("%s: %w", step, ErrCancelled)
	case ctx.Err() == context.DeadlineExceeded, errors.Is(err, os.ErrDeadlineExceeded):
		// The client's command timeout is the time left in ctx, so a
		// read may time out a moment before ctx says so: the same end.
		return fmt.Errorf("%s: %w", step, ErrTimedOut)
	}
	if se, ok := errors.AsType[*smtp.SMTPError](err); ok {
		res.Code = se.Code
	}
	return fmt.Errorf("%s: %w", step, err)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
