package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks request headers every attempt carries.
const (
	// HeaderID carries the event's id ("msg_..."), the same on every
	// attempt and for every endpoint the event fans out to, so a receiver
	// can discard duplicates.
	HeaderID = "webhook-id"
	// HeaderTimestamp carries the unix time, in seconds, of the attempt.
	HeaderTimestamp = "webhook-timestamp"
	// HeaderSignature carries "v1," and the base64 of the HMAC-SHA256 of
	// "id.timestamp.body".
	HeaderSignature = "webhook-signature"
)

// secretPrefix starts every signing secret; the key is the base64 after
// it.
const secretPrefix = "whsec_"

// ErrBadSecret reports a signing secret that is not "whsec_" followed by
// base64.
var ErrBadSecret = errors.New("webhook: secret is not whsec_ followed by base64")

// Sign returns the webhook-signature header value of one attempt, as the
// Standard Webhooks specification defines it: "v1," followed by the
// standard base64 of HMAC-SHA256, keyed with the base64-decoded part of
// secret after "whsec_", over msgID, ".", the unix seconds of timestamp,
// ".", and body. A receiver recomputes it to verify a request; programs may
// call it to test their receivers.
func Sign(secret, msgID string, timestamp time.Time, body []byte) (string, error) {
	key, err := decodeSecret(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, timestamp.Unix(), 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// decodeSecret decodes a "whsec_" secret into its HMAC key. The prefix is
// optional, as the reference libraries accept a bare base64 key too.
func decodeSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil || len(key) == 0 {
		return nil, ErrBadSecret
	}
	return key, nil
}
