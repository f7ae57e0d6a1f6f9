package webhook_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/identitylib/identity/webhook"
)

// TestSignGoldenVector checks the signing against the Standard
// Webhooks specification's published example.
func TestSignGoldenVector(t *testing.T) {
	got, err := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
}

// TestSignMatchesReferenceLibrary signs random messages and has the
// reference library verify them, and checks that a changed body, id or
// timestamp no longer verifies.
func TestSignMatchesReferenceLibrary(t *testing.T) {
	for i := range 50 {
		key := make([]byte, 32)
		rand.Read(key)
		secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
		id := fmt.Sprintf("msg_%d", i)
		ts := time.Unix(1614265330+int64(i)*7919, 0)
		body := []byte(fmt.Sprintf(`{"type":"user.created","data":{"n":%d,"s":"ü\u2028"}}`, i))
		sig, err := webhook.Sign(secret, id, ts, body)
		if err != nil {
			t.Fatal(err)
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set(webhook.HeaderID, id)
		h.Set(webhook.HeaderTimestamp, fmt.Sprint(ts.Unix()))
		h.Set(webhook.HeaderSignature, sig)
		if err := wh.VerifyIgnoringTimestamp(body, h); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if err := wh.VerifyIgnoringTimestamp(append(body, ' '), h); err == nil {
			t.Fatalf("message %d: a changed body verifies", i)
		}
		h.Set(webhook.HeaderTimestamp, fmt.Sprint(ts.Unix()+1))
		if err := wh.VerifyIgnoringTimestamp(body, h); err == nil {
			t.Fatalf("message %d: a changed timestamp verifies", i)
		}
	}
}

func TestSignRejectsBadSecret(t *testing.T) {
	for _, secret := range []string{"", "whsec_", "whsec_not base64!"} {
		if _, err := webhook.Sign(secret, "msg_1", time.Unix(0, 0), nil); err == nil {
			t.Errorf("Sign with secret %q: no error", secret)
		}
	}
}
