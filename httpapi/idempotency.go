package httpapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"io"

	"github.com/identitylib/identity"
)

// idempotencyHeader is the request header that makes a POST safe to retry
// (draft-ietf-httpapi-idempotency-key-header).
const idempotencyHeader = "Idempotency-Key"

// idempotentRequest is a POST that carries an Idempotency-Key: the key
// and a copy of the body as the handler reads it.
type idempotentRequest struct {
	c    *call
	key  string
	body bytes.Buffer
}

// idempotent prepares a creating POST for its Idempotency-Key. Without
// the header it returns nil; with it, it tees the body so that of can
// fingerprint it once decodeBody has read it. The key is sent once; its
// other rules are the library's.
func (c *call) idempotent() (*idempotentRequest, error) {
	values := c.r.Header.Values(idempotencyHeader)
	switch len(values) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, invalid("invalid idempotency key", []identity.FieldError{
			{Field: idempotencyHeader, Rule: identity.RuleDuplicate, Message: "must be sent once"},
		})
	}
	ir := &idempotentRequest{c: c, key: values[0]}
	body := c.r.Body
	c.r.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(body, &ir.body), body}
	return ir, nil
}

// of returns the library's Idempotency of the request (nil for none). The
// scope is the API key's id, so keys of different callers never meet. The
// fingerprint is an HMAC-SHA-256, keyed with the API key itself, of the
// route and the body as read: a retry must send the same bytes, and the
// stored fingerprint reveals nothing of a password in the body to someone
// who reads the store without holding the key.
func (ir *idempotentRequest) of() *identity.Idempotency {
	if ir == nil {
		return nil
	}
	scope, _ := identity.APIKeyID(ir.c.key) // the key is authorized, so well formed
	mac := hmac.New(sha256.New, []byte(ir.c.key))
	io.WriteString(mac, ir.c.r.Method+" "+ir.c.pattern+"\n")
	mac.Write(ir.body.Bytes())
	return &identity.Idempotency{Scope: scope, Key: ir.key, Fingerprint: mac.Sum(nil)}
}
