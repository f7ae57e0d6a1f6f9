package console_test

import (
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/delivery"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/oidc"
	"github.com/identitylib/identity/store/memstore"
)

// The CSRF rows of the integration pages: webhooks, API keys and
// clients, signing keys.
func init() {
	for path, row := range map[string]struct {
		path string
		form url.Values
	}{
		"workspaces/{slug}/webhooks":                                  {"workspaces/acme/webhooks", url.Values{"url": {"https://hooks.example.com/in"}, "events": {"user.created"}}},
		"workspaces/{slug}/webhooks/{id}/delete":                      {"workspaces/acme/webhooks/1/delete", nil},
		"workspaces/{slug}/webhooks/{id}/enable":                      {"workspaces/acme/webhooks/1/enable", nil},
		"workspaces/{slug}/webhooks/{id}/deliveries/{delivery}/retry": {"workspaces/acme/webhooks/1/deliveries/1/retry", nil},
		"workspaces/{slug}/clients":                                   {"workspaces/acme/clients", url.Values{"redirectUris": {"https://app.example.com/cb"}}},
		"workspaces/{slug}/clients/{id}/delete":                       {"workspaces/acme/clients/idc_0123456789abcdef/delete", nil},
		"workspaces/{slug}/clients/apikeys":                           {"workspaces/acme/clients/apikeys", url.Values{"scopes": {"users:read"}}},
		"workspaces/{slug}/clients/apikeys/{id}/revoke":               {"workspaces/acme/clients/apikeys/0123456789abcdef/revoke", nil},
		"workspaces/{slug}/keys/rotate":                               {"workspaces/acme/keys/rotate", nil},
	} {
		csrfRows[path] = row
	}
}

// newDeliveryEnv starts an env whose Service lets webhooks reach
// loopback receivers, with a dispatcher that makes one attempt of each
// delivery (a failed attempt fails the delivery) and trusts the
// receivers' certificates.
func newDeliveryEnv(t testing.TB, receivers ...*httptest.Server) *env {
	t.Helper()
	ctx := t.Context()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	svc, err := identity.New(st, &identity.Options{
		Now: clock.Now, PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
		IssuerBase: srv.URL, TokenSigner: jws.Signer{}, SigningAlgorithm: identity.ES256,
		AllowPrivateWebhooks: true, // the receivers are on loopback
	})
	if err != nil {
		t.Fatal(err)
	}
	provider, err := oidc.New(svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/t/", provider)
	h, err := console.New(svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	mux.Handle(h.BasePath(), h)
	ops, err := svc.GetWorkspace(ctx, console.DefaultOperatorWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	for _, r := range receivers {
		roots.AddCert(r.Certificate())
	}
	d, err := delivery.Start(ctx, svc, &delivery.Options{RootCAs: roots, Retries: []time.Duration{},
		PollInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return &env{t: t, srv: srv, clock: clock, svc: svc, console: h, ops: ops, base: h.BasePath()}
}

// receiver is an HTTPS webhook receiver that answers its first fail
// requests with status and every later one with 204.
type receiver struct {
	*httptest.Server
	calls atomic.Int32
}

func newReceiver(t testing.TB, fail int32, status int) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if r.calls.Add(1) <= fail {
			w.WriteHeader(status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// awaitDelivery waits until the endpoint's only delivery has the status,
// and returns it. The bound is generous: a slow machine makes the test
// slow, not fail.
func awaitDelivery(t testing.TB, ws *identity.Workspace, endpoint int64, status identity.DeliveryStatus) identity.Delivery {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		list, err := ws.ListDeliveries(t.Context(), endpoint, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 1 && list.Items[0].Status == status {
			return list.Items[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("endpoint %d: deliveries %+v, want one %s", endpoint, list.Items, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var (
	secretValue = regexp.MustCompile(`id="secret" type="text" value="([^"]+)"`)
	postForm    = regexp.MustCompile(`<form method="post" action="([^"]+)"`)
)

// shownSecret returns the secret a creation page shows, failing the
// test when it shows none.
func shownSecret(t testing.TB, body string) string {
	t.Helper()
	m := secretValue.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no secret on the page:\n%s", body)
	}
	return m[1]
}

// writeForms returns the actions of the page's POST forms other than
// the sign-out.
func writeForms(body string) []string {
	var out []string
	for _, m := range postForm.FindAllStringSubmatch(body, -1) {
		if !strings.HasSuffix(m[1], "/logout") {
			out = append(out, m[1])
		}
	}
	return out
}

// operatorID returns the user id of the operator username, as the trail
// names them.
func (e *env) operatorID(username string) string {
	e.t.Helper()
	list, err := e.ops.ListUsers(e.t.Context(), username, nil)
	if err != nil || len(list.Items) == 0 {
		e.t.Fatalf("operator %s: %v %v", username, list, err)
	}
	return strconv.FormatInt(list.Items[0].ID, 10)
}
