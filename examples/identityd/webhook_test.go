package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// received is one request a webhook receiver got.
type received struct {
	header http.Header
	body   []byte
}

// TestServeDeliversWebhooks runs identityd serve as a process with an
// HTTPS receiver on loopback that it trusts through SSL_CERT_FILE, as a
// deployment with its own CA would: a user created over the API reaches
// the subscribed endpoint, signed with the endpoint's secret.
func TestServeDeliversWebhooks(t *testing.T) {
	skipShort(t)
	got := make(chan received, 16)
	receiver := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{header: r.Header.Clone(), body: body}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	certFile := filepath.Join(t.TempDir(), "receiver.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: receiver.Certificate().Raw})
	if err := os.WriteFile(certFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}

	db, key := newDB(t)
	p := startServeWith(t, db, []string{"SSL_CERT_FILE=" + certFile}, "-allow-private-webhooks")
	status, body := call(t, "POST", p.base+"/t/acme/api/v1/webhooks", key, map[string]any{
		"url": receiver.URL + "/hook", "events": []string{"user.created"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", status, body)
	}
	var created struct{ Secret string }
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	createUser(t, p.base, key, "ada")

	var req received
	select {
	case req = <-got:
	case <-time.After(procWait):
		t.Fatalf("no delivery within %v; log:\n%s", procWait, p.log)
	}
	var event struct {
		Type string
		Data struct{ Username string }
	}
	if err := json.Unmarshal(req.body, &event); err != nil || event.Type != "user.created" || event.Data.Username != "ada" {
		t.Fatalf("delivered body %s (%v)", req.body, err)
	}
	if want := signature(t, created.Secret, req); req.header.Get("webhook-signature") != want {
		t.Errorf("webhook-signature = %q, want %q", req.header.Get("webhook-signature"), want)
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t, procWait); code != 0 {
		t.Errorf("exit status %d after SIGTERM; log:\n%s", code, p.log)
	}
}

// signature computes the Standard Webhooks signature of a request from the
// specification: base64 HMAC-SHA256, keyed with the secret's bytes, over
// "id.timestamp.body".
func signature(t *testing.T, secret string, req received) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(req.header.Get("webhook-id") + "." + req.header.Get("webhook-timestamp") + "."))
	mac.Write(req.body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
