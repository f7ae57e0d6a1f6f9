package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/internal/browsertest"
)

// The integration pages docs/console/ shows.
func init() {
	for _, state := range []string{"webhook-failed", "clients", "keys", "audit-filtered"} {
		screenshotStates[state] = true
	}
}

// signedInTab returns a Chromium tab signed in to the console as b is:
// the browser's session cookie, set through the DevTools protocol.
func signedInTab(t *testing.T, e *env, b *browser, javascript bool) context.Context {
	t.Helper()
	ctx := browsertest.New(t, javascript, browserWait)
	base, _ := url.Parse(e.url(""))
	for _, c := range b.c.Jar.Cookies(base) {
		if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: c.Name, Value: c.Value,
			URL: e.url(""), Path: e.base, HTTPOnly: new(true), SameSite: network.CookieSameSiteStrict}); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}

// TestBrowserIntegrations walks the integration pages in headless
// Chromium, with JavaScript on and off: an operator adds a webhook
// endpoint (its secret shown once, copyable with JavaScript, a plain
// read-only field without), sees a delivery that a real HTTPS receiver
// refused, retries it and sees it delivered, enables an endpoint that
// answered 410 Gone; creates an API key and an OAuth client, whose secrets
// no page shows once their creation page is left; rotates the signing keys
// after a confirmation; filters the audit trail by action. On every page
// state the heading shows, nothing scrolls sideways at 1280 and 390 px,
// and axe-core finds no serious or critical violation.
func TestBrowserIntegrations(t *testing.T) {
	browsertest.Chromium(t)
	axe := browsertest.AxeSource(t, "..")
	for _, javascript := range []bool{true, false} {
		t.Run(fmt.Sprintf("javascript=%v", javascript), func(t *testing.T) {
			flaky := newReceiver(t, 1, http.StatusServiceUnavailable)
			gone := newReceiver(t, 1, http.StatusGone)
			e := newDeliveryEnv(t, flaky.Server, gone.Server)
			ctx := t.Context()
			ws := e.workspace("acme")
			admin := e.operator("root", console.RoleAdmin)
			tab := signedInTab(t, e, admin, javascript)
			check := func(state, title string) {
				t.Helper()
				checkPage(t, tab, axe, javascript, state, title, *updateScreenshots && javascript)
			}
			run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				if err := chromedp.Do(tab, actions...); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			eval := func(js string) string {
				t.Helper()
				s, err := chromedp.Run(tab, chromedp.Evaluate[string](js))
				if err != nil {
					t.Fatalf("%s: %v", js, err)
				}
				return s
			}
			body := func() string { return eval(`document.documentElement.outerHTML`) }

			// Webhooks: add an endpoint, its secret shown once.
			run("webhooks", chromedp.Navigate(e.url("workspaces/acme/webhooks")), chromedp.WaitVisible(chromedp.ID("url")))
			check("webhooks-empty", "Webhooks")
			run("an invalid endpoint", chromedp.SendKeys(chromedp.ID("url"), "http://hooks.example.com"),
				chromedp.Submit(chromedp.ID("url")), chromedp.WaitVisible(chromedp.ID("url-error")))
			check("webhooks-invalid", "Webhooks")
			run("add an endpoint", chromedp.SetValue(chromedp.ID("url"), flaky.URL), chromedp.SendKeys(chromedp.ID("description"), "billing"),
				chromedp.Click(chromedp.CSS(`input[value="user.created"]`)), chromedp.Submit(chromedp.ID("url")),
				chromedp.WaitVisible(chromedp.ID("secret")))
			check("webhook-created", "Webhook endpoint created")
			secret := eval(`document.getElementById("secret").value`)
			if !strings.HasPrefix(secret, "whsec_") || eval(`document.getElementById("secret").readOnly ? "yes" : "no"`) != "yes" {
				t.Fatalf("secret %q, or not read-only", secret)
			}
			if got, want := eval(`document.querySelector("button[data-copy]").hidden ? "hidden" : "shown"`), map[bool]string{true: "shown", false: "hidden"}[javascript]; got != want {
				t.Errorf("the copy button is %s, want %s", got, want)
			}
			if javascript {
				run("copy", chromedp.Click(chromedp.CSS("button[data-copy]")))
				if got, err := chromedp.Run(tab, chromedp.Poll[string](`document.querySelector("button[data-copy]").textContent === "Copied" && "Copied"`,
					chromedp.WithPollingTimeout(10*time.Second))); err != nil || got != "Copied" {
					t.Errorf("the copy button: %q %v", got, err)
				}
			}
			run("the endpoint", chromedp.Click(chromedp.CSS("a.button")), chromedp.WaitVisible(chromedp.ID("deliveries-heading")))
			check("webhook", "Webhook endpoint 1")
			if strings.Contains(body(), secret) {
				t.Error("the endpoint's page shows the secret")
			}
			// Back to the creation page: no-store keeps it from being shown
			// again (Chromium asks to send the form again instead).
			if err := chromedp.Do(tab, chromedp.NavigateBack()); err != nil && !strings.Contains(err.Error(), "ERR_CACHE_MISS") {
				t.Fatalf("back: %v", err)
			}
			if strings.Contains(body(), secret) {
				t.Error("going back shows the secret again")
			}

			// A delivery the receiver refused, retried; an endpoint that
			// answered 410 Gone, enabled again.
			if _, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: gone.URL, Events: []string{"user.created"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com",
				FullName: "Ada Lovelace", Password: "correct horse battery"}); err != nil {
				t.Fatal(err)
			}
			awaitDelivery(t, ws, 1, identity.DeliveryFailed)
			run("the failed delivery", chromedp.Navigate(e.url("workspaces/acme/webhooks/1")),
				chromedp.WaitVisible(chromedp.CSS(`form[action$="/retry"] button`)))
			check("webhook-failed", "Webhook endpoint 1")
			if b := body(); !strings.Contains(b, `<td class="num">503</td>`) {
				t.Errorf("no response code 503:\n%s", b)
			}
			run("retry", chromedp.Click(chromedp.CSS(`form[action$="/retry"] button`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
			check("webhook-retried", "Webhook endpoint 1")
			awaitDelivery(t, ws, 1, identity.DeliverySucceeded)
			run("reload", chromedp.Navigate(e.url("workspaces/acme/webhooks/1")), chromedp.WaitVisible(chromedp.ID("deliveries-heading")))
			if b := body(); !strings.Contains(b, `<td class="num">204</td>`) || strings.Contains(b, "Retry now") {
				t.Errorf("the delivery did not succeed:\n%s", b)
			}
			awaitDelivery(t, ws, 2, identity.DeliveryFailed)
			run("the disabled endpoint", chromedp.Navigate(e.url("workspaces/acme/webhooks/2")),
				chromedp.WaitVisible(chromedp.CSS(`form[action$="/enable"] button`)))
			check("webhook-disabled", "Webhook endpoint 2")
			run("enable", chromedp.Click(chromedp.CSS(`form[action$="/enable"] button`)), chromedp.WaitVisible(chromedp.CSS(".notice")))
			check("webhook-enabled", "Webhook endpoint 2")
			if ep, err := ws.GetWebhook(ctx, 2); err != nil || !ep.Enabled {
				t.Errorf("endpoint 2 after enable: %+v %v", ep, err)
			}
			run("delete confirmation", chromedp.Click(chromedp.CSS("a.danger-link")), chromedp.WaitVisible(chromedp.CSS("button.danger")))
			check("webhook-delete", "Delete webhook endpoint 2")
			run("webhooks", chromedp.Navigate(e.url("workspaces/acme/webhooks")), chromedp.WaitVisible(chromedp.CSS("table")))
			check("webhooks", "Webhooks")

			// API keys and clients.
			run("clients", chromedp.Navigate(e.url("workspaces/acme/clients")), chromedp.WaitVisible(chromedp.ID("keys-heading")))
			check("clients-empty", "API keys & clients")
			run("create a key", chromedp.Click(chromedp.CSS(`details.create summary`)), chromedp.SendKeys(chromedp.ID("key-name"), "ci"),
				chromedp.Click(chromedp.CSS(`input[name="scopes"][value="audit:read"]`)), chromedp.Submit(chromedp.ID("key-name")),
				chromedp.WaitVisible(chromedp.ID("secret")))
			check("apikey-created", "API key created")
			key := eval(`document.getElementById("secret").value`)
			run("back to the keys", chromedp.Click(chromedp.CSS("a.button")), chromedp.WaitVisible(chromedp.ID("keys-heading")))
			if strings.Contains(body(), key) {
				t.Error("the keys page shows the key")
			}
			run("an invalid client", chromedp.Click(chromedp.CSS(`section[aria-labelledby="clients-heading"] summary`)),
				chromedp.SendKeys(chromedp.ID("client-name"), "shop"), chromedp.SendKeys(chromedp.ID("redirectUris"), "ftp://shop.example.com/cb"),
				chromedp.Submit(chromedp.ID("client-name")), chromedp.WaitVisible(chromedp.ID("redirectUris-error")))
			check("clients-invalid", "API keys & clients")
			run("register a client", chromedp.SetValue(chromedp.ID("redirectUris"), "https://shop.example.com/cb"),
				chromedp.Submit(chromedp.ID("client-name")), chromedp.WaitVisible(chromedp.ID("secret")))
			check("client-created", "OAuth client created")
			clientSecret := eval(`document.getElementById("secret").value`)
			run("the client", chromedp.Click(chromedp.CSS("a.button")), chromedp.WaitVisible(chromedp.CSS("dl.props")))
			clients, err := ws.ListClients(ctx)
			if err != nil || len(clients) != 1 {
				t.Fatalf("clients: %v %v", clients, err)
			}
			check("client", "OAuth client "+clients[0].ID)
			if strings.Contains(body(), clientSecret) {
				t.Error("the client's page shows its secret")
			}
			run("delete confirmation", chromedp.Click(chromedp.CSS("a.danger-link")), chromedp.WaitVisible(chromedp.CSS("button.danger")))
			check("client-delete", "Delete OAuth client "+clients[0].ID)
			run("clients", chromedp.Navigate(e.url("workspaces/acme/clients")), chromedp.WaitVisible(chromedp.ID("keys-heading")))
			check("clients", "API keys & clients")
			run("revoke confirmation", chromedp.Click(chromedp.CSS(`a[href$="/revoke"]`)), chromedp.WaitVisible(chromedp.CSS("button.danger")))
			keys, err := ws.ListAPIKeys(ctx)
			if err != nil || len(keys) != 1 {
				t.Fatalf("keys: %v %v", keys, err)
			}
			check("apikey-revoke", "Revoke API key "+keys[0].ID)

			// Signing keys: rotate after a confirmation, a minute later (the
			// trail orders records by their time).
			e.clock.Advance(time.Minute)
			before, err := ws.ListSigningKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			run("keys", chromedp.Navigate(e.url("workspaces/acme/keys")), chromedp.WaitVisible(chromedp.CSS("table")))
			check("keys", "Signing keys")
			run("rotate confirmation", chromedp.Click(chromedp.CSS(`a[href$="/keys/rotate"]`)), chromedp.WaitVisible(chromedp.CSS("button.danger")))
			check("keys-rotate", "Rotate the signing keys")
			run("rotate", chromedp.Click(chromedp.CSS("button.danger")), chromedp.WaitVisible(chromedp.CSS(".notice")))
			check("keys-rotated", "Signing keys")
			after, err := ws.ListSigningKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var wasNext string
			for _, k := range before {
				if k.State == identity.KeyNext {
					wasNext = k.ID
				}
			}
			for _, k := range after {
				if k.ID == wasNext && k.State != identity.KeyActive {
					t.Errorf("the next key %s is %s after the rotation", k.ID, k.State)
				}
			}

			// The audit trail, filtered by action.
			run("audit", chromedp.Navigate(e.url("workspaces/acme/audit")), chromedp.WaitVisible(chromedp.ID("action")))
			check("audit", "Audit trail")
			run("filter", chromedp.SendKeys(chromedp.ID("action"), "signing_key."), chromedp.Submit(chromedp.ID("action")),
				chromedp.WaitVisible(chromedp.CSS("table.audit")))
			check("audit-filtered", "Audit trail")
			actions := eval(`[...document.querySelectorAll("table.audit tbody th")].map(th => th.textContent).join(" ")`)
			if actions != "signing_key.rotated signing_key.rotated" {
				t.Errorf("the filtered trail: %q", actions)
			}
			if b := body(); strings.Contains(b, secret) || strings.Contains(b, key) || strings.Contains(b, clientSecret) {
				t.Error("the trail shows a secret")
			}
			run("an invalid filter", chromedp.SetValue(chromedp.ID("actor"), "robot:1"), chromedp.Submit(chromedp.ID("actor")),
				chromedp.WaitVisible(chromedp.ID("actor-error")))
			check("audit-invalid", "Audit trail")
		})
	}
}
