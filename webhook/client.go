package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/identitylib/identity"
)

// maxResponseBody is how much of a receiver's response is read: enough to
// let a small body end cleanly, never enough for a receiver to make the
// sender buffer or stream without end.
const maxResponseBody = 20 << 10

// userAgent identifies the sender to receivers and their logs.
const userAgent = "identitylib-webhooks/1"

// cloudMetadataAddrs are instance-metadata services, which hand out cloud
// credentials to whoever can reach them. They stay refused even with the
// SSRF guard off, because no local test needs them and a webhook URL
// reaching one leaks the host's credentials.
var cloudMetadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, DigitalOcean, ...
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// The errors of attempts that ran out of time or were stopped (by their
// dispatcher, or by the deletion of their endpoint).
var (
	ErrTimedOut  = errors.New("timed out")
	ErrCancelled = errors.New("attempt cancelled")
)

// blockedAddressError reports a dial the SSRF guard refused.
type blockedAddressError struct {
	addr   string
	reason string
}

func (e *blockedAddressError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s", e.addr, e.reason)
}

// checkDialAddress judges one resolved "ip:port" with
// identity.IsPublicAddress, which judges an IPv6 address carrying an IPv4
// address (IPv4-mapped, NAT64, 6to4) by that address, so
// ::ffff:127.0.0.1 is loopback. A cloud metadata address is refused in
// any of those forms, and IPv4-compatible (::a.b.c.d), even with the
// guard off.
func checkDialAddress(address string, allowPrivate bool) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &blockedAddressError{addr: address, reason: "not an IP address and port"}
	}
	addr := ap.Addr().Unmap().WithZone("")
	if slices.Contains(cloudMetadataAddrs, addr) || slices.Contains(cloudMetadataAddrs, carriedIPv4(addr)) {
		return &blockedAddressError{addr: address, reason: "cloud metadata address"}
	}
	if !allowPrivate && !identity.IsPublicAddress(addr) {
		return &blockedAddressError{addr: address, reason: "not a public address"}
	}
	return nil
}

// Prefixes of IPv6 addresses that carry an IPv4 address.
var (
	compatible = netip.MustParsePrefix("::/96")        // ::a.b.c.d
	nat64      = netip.MustParsePrefix("64:ff9b::/96") // 64:ff9b::a.b.c.d
	sixToFour  = netip.MustParsePrefix("2002::/16")    // 2002:aabb:ccdd::/48
)

// carriedIPv4 returns the IPv4 address an IPv4-compatible, NAT64 or 6to4
// address carries, and the invalid Addr for any other address.
func carriedIPv4(addr netip.Addr) netip.Addr {
	b := addr.As16()
	switch {
	case !addr.Is6():
	case compatible.Contains(addr), nat64.Contains(addr):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixToFour.Contains(addr):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return netip.Addr{}
}

// Options configure a Client. A nil *Options means every default.
type Options struct {
	// AllowPrivate turns the SSRF guard off, so that loopback and private
	// addresses may be dialed (cloud metadata addresses never are). For
	// local testing only; it mirrors identity.Options.AllowPrivateWebhooks.
	AllowPrivate bool
	// RootCAs are the certificate authorities trusted for receivers. nil
	// means the system roots. Certificates are always verified.
	RootCAs *x509.CertPool
	// MaxIdleConnsPerHost is how many idle connections to one receiver
	// are kept for reuse. Default 2.
	MaxIdleConnsPerHost int
}

// Client sends webhook attempts. It is safe for concurrent use.
type Client struct {
	http *http.Client
}

// NewClient returns a Client: no proxy (a proxy would dial on our behalf,
// out of reach of the guard), the guard on every dial (net.Dialer's
// Control runs after name resolution, once for every address tried, so a
// host name that resolves or is rebound to a private address is refused
// whatever the URL said), the system roots unless RootCAs is set, TLS 1.2
// at least, and no redirects.
func NewClient(opts *Options) *Client {
	if opts == nil {
		opts = &Options{}
	}
	conns := opts.MaxIdleConnsPerHost
	if conns <= 0 {
		conns = 2
	}
	allowPrivate := opts.AllowPrivate
	dialer := &net.Dialer{KeepAlive: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		return checkDialAddress(address, allowPrivate)
	}}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    conns,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		// The body is discarded; asking for gzip would only cost CPU.
		DisableCompression: true,
	}
	return &Client{http: &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// CloseIdleConnections closes the connections kept for reuse.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// Response is what an attempt learnt from the receiver.
type Response struct {
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// RetryAfter is the Retry-After header of a 429 or 503 response.
	RetryAfter string
}

// Send makes one attempt and reports a failure as an error: any status
// but 2xx, no response within ctx, or a response body that does not end
// within ctx (the receiver has not finished answering, so the attempt is
// not known to have succeeded). The error is a short sentence fit for a
// delivery's LastError: the guard's refusal, ErrTimedOut, ErrCancelled,
// or the cause without the *url.Error wrapping (whose URL may carry a
// token in its query).
func (c *Client) Send(ctx context.Context, r identity.WebhookRequest) (Response, error) {
	req, err := newRequest(ctx, r)
	if err != nil {
		return Response{}, err
	}
	resp, err := c.http.Do(req)
	if err == nil && ctx.Err() != nil {
		// The answer came as the time ran out (the receiver may have
		// answered because the connection closed): not in time.
		resp.Body.Close()
		err = ctx.Err()
	}
	if err != nil {
		return Response{}, describe(ctx, err)
	}
	defer resp.Body.Close()
	out := Response{Status: resp.StatusCode}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		out.RetryAfter = resp.Header.Get("Retry-After")
	}
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody))
	if err == nil {
		// Cancelling closes the connection, and a receiver that sees it
		// close may end its body in the meantime: a body that ended as the
		// time ran out did not end in time.
		err = ctx.Err()
	}
	if err != nil {
		return out, fmt.Errorf("reading the response: %w", describe(ctx, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return out, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	return out, nil
}

func newRequest(ctx context.Context, r identity.WebhookRequest) (*http.Request, error) {
	signature, err := Sign(r.Secret, r.EventID, r.Timestamp, r.Body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(HeaderID, r.EventID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(r.Timestamp.Unix(), 10))
	req.Header.Set(HeaderSignature, signature)
	return req, nil
}

// describe turns a client error into the short sentence kept as a
// delivery's LastError.
func describe(ctx context.Context, err error) error {
	if blocked, ok := errors.AsType[*blockedAddressError](err); ok {
		return blocked
	}
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return ErrTimedOut
	case context.Canceled:
		return ErrCancelled
	}
	if uerr, ok := errors.AsType[*url.Error](err); ok {
		return uerr.Err
	}
	return err
}

// ParseRetryAfter reads a Retry-After value, delay-seconds or an HTTP
// date, as a duration from now. A date in the past means no wait; a
// negative or unreadable value reports false.
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(value, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		// Cap before multiplying so a huge value cannot overflow; the
		// schedule clamps the wait far below this anyway.
		return time.Duration(min(secs, int64(365*24*time.Hour/time.Second))) * time.Second, true
	}
	if at, err := http.ParseTime(value); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
