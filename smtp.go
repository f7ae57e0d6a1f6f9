package identity

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// smtpResult is what one sending attempt learnt.
type smtpResult struct {
	// code is the SMTP reply code of the last reply: 250 once the
	// message was accepted, the code of a refusal, 0 when no reply came.
	code int
	// permanent reports a refusal that retrying cannot cure: the server
	// refused the recipient with a 5xx reply.
	permanent bool
}

// sendMail sends msg from from to to through the server m describes. ctx
// bounds the whole exchange, from dialing to the server's acceptance of
// the message: when it ends the connection is closed, whatever the server
// is doing. Certificates are verified against roots (nil: the system
// roots). The protocol is go-smtp's; this only chooses and orders it.
func sendMail(ctx context.Context, m SMTPSettings, roots *x509.CertPool, from, to string, msg []byte) (smtpResult, error) {
	var res smtpResult
	c, err := dialSMTP(ctx, m, roots)
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
		res.permanent = res.code >= 500
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
	res.code = 250
	c.Quit() // the message is accepted; a failing QUIT changes nothing
	return res, nil
}

// dialSMTP connects to the server and secures the connection as m.TLS
// says. The connection is closed when ctx ends, which bounds every read
// and write of the client however long the server takes.
func dialSMTP(ctx context.Context, m SMTPSettings, roots *x509.CertPool) (*smtp.Client, error) {
	dialer := &net.Dialer{}
	if m.mode() == SMTPNoTLS {
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
	switch m.mode() {
	case SMTPImplicitTLS:
		tc := tls.Client(conn, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
		c = smtp.NewClient(tc)
	case SMTPStartTLS:
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
		return &blockedAddressError{addr: address, reason: "plain-text SMTP goes to loopback addresses only"}
	}
	return nil
}

// smtpError describes a failed step as a delivery's LastError, recording
// the server's reply code in res: a timeout or cancellation as such, a
// refusal with its code and text.
func smtpError(ctx context.Context, res *smtpResult, step string, err error) error {
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return fmt.Errorf("%s: %w", step, errAttemptTimedOut)
	case context.Canceled:
		return fmt.Errorf("%s: %w", step, errAttemptCancelled)
	}
	if se, ok := errors.AsType[*smtp.SMTPError](err); ok {
		res.code = se.Code
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
