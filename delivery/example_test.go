package delivery_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/delivery"
	"github.com/identitylib/identity/store/memstore"
	"github.com/identitylib/identity/webhook"
)

// A program starts one dispatcher beside the Service: every event its
// changes queue reaches the endpoints subscribed to it, signed with the
// endpoint's secret (Standard Webhooks), over HTTPS.
func ExampleStart() {
	ctx := context.Background()
	type event struct{ Type, Signed string }
	received := make(chan event, 1)
	var secret atomic.Value // the endpoint's, known once it is created
	receiver := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct{ Type string }
		json.Unmarshal(body, &ev)
		// A receiver checks the signature of what it gets.
		sec, _ := strconv.ParseInt(r.Header.Get(webhook.HeaderTimestamp), 10, 64)
		want, _ := webhook.Sign(secret.Load().(string), r.Header.Get(webhook.HeaderID), time.Unix(sec, 0), body)
		signed := "bad signature"
		if r.Header.Get(webhook.HeaderSignature) == want {
			signed = "signed"
		}
		w.WriteHeader(http.StatusNoContent)
		received <- event{ev.Type, signed}
	}))
	defer receiver.Close()

	svc, err := identity.New(memstore.New(), &identity.Options{
		AllowPrivateWebhooks: true,                                                    // the receiver is on loopback
		PasswordHashing:      &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}, // fast, for the example
	})
	if err != nil {
		log.Fatal(err)
	}
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		log.Fatal(err)
	}
	hook, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: receiver.URL, Events: []string{"user.created"}})
	if err != nil {
		log.Fatal(err)
	}
	secret.Store(hook.Secret)

	roots := x509.NewCertPool()
	roots.AddCert(receiver.Certificate()) // the receiver's own certificate
	d, err := delivery.Start(ctx, svc, &delivery.Options{RootCAs: roots, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Stop()

	if _, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com",
		FullName: "Ada Lovelace", Password: "correct horse battery"}); err != nil {
		log.Fatal(err)
	}
	ev := <-received
	fmt.Println(ev.Type, ev.Signed)
	// Output: user.created signed
}
