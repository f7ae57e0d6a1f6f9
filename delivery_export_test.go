package identity

import (
	"context"
	"crypto/x509"
	"net/http"
	"time"
)

// Test-only access to the delivery internals, for the tests in package
// identity_test.

// CheckDialAddressForTest is the SSRF guard's judgement of a resolved
// "ip:port".
var CheckDialAddressForTest = checkDialAddress

// NewDeliveryClientForTest returns the client a dispatcher uses.
func NewDeliveryClientForTest(allowPrivate bool, roots *x509.CertPool) *http.Client {
	return newDeliveryClient(allowPrivate, roots, 2)
}

// PostWebhookForTest makes one attempt as a dispatcher would.
func PostWebhookForTest(ctx context.Context, client *http.Client, url, secret, msgID string, ts time.Time, body []byte) (int, error) {
	resp, err := postWebhook(ctx, client, webhookRequest{url: url, secret: secret, msgID: msgID, timestamp: ts, body: body})
	return resp.status, err
}

// ParseRetryAfterForTest reads a Retry-After value relative to now.
var ParseRetryAfterForTest = parseRetryAfter
