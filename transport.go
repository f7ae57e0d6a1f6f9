package identity

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
)

// maxResponseBody is how much of a receiver's response is read: enough to
// let a small body end cleanly, never enough for a receiver to make the
// dispatcher buffer or stream without end.
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

// blockedAddressError reports a dial the SSRF guard refused.
type blockedAddressError struct {
	addr   string
	reason string
}

func (e *blockedAddressError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s", e.addr, e.reason)
}

// dialControl returns the net.Dialer Control function of the delivery
// client. Control runs after name resolution, once for every address the
// dialer tries, so it judges the address actually connected to: a host
// name that resolves (or is rebound between creation and delivery) to a
// private address is refused here, whatever the URL said.
func dialControl(allowPrivate bool) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		return checkDialAddress(address, allowPrivate)
	}
}

// checkDialAddress judges one resolved "ip:port". IPv4-mapped IPv6
// addresses are judged by their IPv4 address, so ::ffff:127.0.0.1 is
// loopback.
func checkDialAddress(address string, allowPrivate bool) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &blockedAddressError{addr: address, reason: "not an IP address and port"}
	}
	addr := ap.Addr().Unmap().WithZone("")
	if slices.Contains(cloudMetadataAddrs, addr) {
		return &blockedAddressError{addr: address, reason: "cloud metadata address"}
	}
	if !allowPrivate && !IsPublicAddress(addr) {
		return &blockedAddressError{addr: address, reason: "not a public address"}
	}
	return nil
}

// newDeliveryClient returns the HTTP client of a dispatcher: no proxy (a
// proxy would dial on our behalf, out of reach of the guard), the guard on
// every dial, the system roots unless roots is set, and no redirects (a
// 3xx is returned as the response and counts as a failure, so a receiver
// cannot bounce a signed request to another address).
func newDeliveryClient(allowPrivate bool, roots *x509.CertPool, conns int) *http.Client {
	dialer := &net.Dialer{KeepAlive: 30 * time.Second, Control: dialControl(allowPrivate)}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    conns,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		// The body is discarded; asking for gzip would only cost CPU.
		DisableCompression: true,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// webhookRequest is one attempt to send.
type webhookRequest struct {
	url       string
	secret    string
	msgID     string
	timestamp time.Time
	body      []byte
}

// webhookResponse is what an attempt learnt from the receiver.
type webhookResponse struct {
	// status is the HTTP status, 0 when no response arrived.
	status int
	// retryAfter is the Retry-After header of a 429 or 503 response.
	retryAfter string
}

// postWebhook makes one attempt and reports a failure as an error: any
// status but 2xx, no response within ctx, or a response body that does not
// end within ctx (the receiver has not finished answering, so the attempt
// is not known to have succeeded). At most maxResponseBody bytes are read.
func postWebhook(ctx context.Context, client *http.Client, r webhookRequest) (webhookResponse, error) {
	req, err := newWebhookHTTPRequest(ctx, r)
	if err != nil {
		return webhookResponse{}, err
	}
	resp, err := client.Do(req)
	if err == nil && ctx.Err() != nil {
		// The answer came as the time ran out (the receiver may have
		// answered because the connection closed): not in time.
		resp.Body.Close()
		err = ctx.Err()
	}
	if err != nil {
		return webhookResponse{}, describeAttemptError(ctx, err)
	}
	defer resp.Body.Close()
	out := webhookResponse{status: resp.StatusCode}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		out.retryAfter = resp.Header.Get("Retry-After")
	}
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody))
	if err == nil {
		// Cancelling closes the connection, and a receiver that sees it
		// close may end its body in the meantime: a body that ended as the
		// time ran out did not end in time.
		err = ctx.Err()
	}
	if err != nil {
		return out, fmt.Errorf("reading the response: %w", describeAttemptError(ctx, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return out, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	return out, nil
}

func newWebhookHTTPRequest(ctx context.Context, r webhookRequest) (*http.Request, error) {
	signature, err := SignWebhook(r.secret, r.msgID, r.timestamp, r.body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(r.body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(HeaderWebhookID, r.msgID)
	req.Header.Set(HeaderWebhookTimestamp, strconv.FormatInt(r.timestamp.Unix(), 10))
	req.Header.Set(HeaderWebhookSignature, signature)
	return req, nil
}

// The errors of attempts that ran out of time or were stopped (by their
// dispatcher, or by the deletion of their endpoint).
var (
	errAttemptTimedOut  = errors.New("timed out")
	errAttemptCancelled = errors.New("attempt cancelled")
)

// describeAttemptError turns a client error into the short sentence kept
// as a delivery's LastError: the guard's refusal, a timeout, or the cause
// without the *url.Error wrapping (whose URL may carry a token in its query
// and only repeats what the endpoint says).
func describeAttemptError(ctx context.Context, err error) error {
	if blocked, ok := errors.AsType[*blockedAddressError](err); ok {
		return blocked
	}
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return errAttemptTimedOut
	case context.Canceled:
		return errAttemptCancelled
	}
	if uerr, ok := errors.AsType[*url.Error](err); ok {
		return uerr.Err
	}
	return err
}

// parseRetryAfter reads a Retry-After value, delay-seconds or an HTTP
// date, as a duration from now. A date in the past means no wait.
func parseRetryAfter(value string, now time.Time) (time.Duration, bool) {
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
