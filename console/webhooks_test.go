package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// TestWebhooksPages: an admin adds an endpoint (its secret shown on the
// creation page only, a hostile description escaped), sees it listed
// and on its page, and deletes it after a confirmation; invalid values
// are shown next to their inputs; a viewer sees no write control and a
// forged POST is refused.
func TestWebhooksPages(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	viewer := e.operator("watcher", console.RoleViewer)
	const hostile = `<script>alert("x")</script>'`

	r := admin.get(e.url("workspaces/acme/webhooks"))
	if r.status != http.StatusOK || !strings.Contains(r.body, "no webhook endpoint") || !strings.Contains(r.body, `value="user.created"`) {
		t.Fatalf("empty list: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/webhooks"), url.Values{"url": {"http://hooks.example.com/in"},
		"description": {hostile}, "events": {"user.created", "no.such"}})
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("invalid endpoint: %d\n%s", r.status, r.body)
	}
	for _, s := range []string{`id="url-error"`, `id="events-error"`, `unknown event type &#34;no.such&#34;`,
		`value="http://hooks.example.com/in"`, `value="user.created" checked`, `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&#39;`} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the form sent back lacks %q", s)
		}
	}

	r = admin.post(e.url("workspaces/acme/webhooks"), url.Values{"url": {"https://hooks.example.com/in"},
		"description": {hostile}, "events": {"user.created", "user.deleted"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "<h1>Webhook endpoint created</h1>") {
		t.Fatalf("create: %d\n%s", r.status, r.body)
	}
	secret := shownSecret(t, r.body)
	if !strings.HasPrefix(secret, "whsec_") || !strings.Contains(r.body, `data-copy="secret" hidden`) {
		t.Errorf("secret %q, or no copy button", secret)
	}
	list, err := ws.ListWebhooks(t.Context(), nil)
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("endpoints: %v %v", list, err)
	}
	ep := list.Items[0]
	if diff := cmp.Diff([]identity.EventType{"user.created", "user.deleted"}, ep.Events); diff != "" || ep.Description != hostile {
		t.Errorf("endpoint %+v (-want +got events):\n%s", ep, diff)
	}

	// Once the creation page is left, no page shows the secret.
	epPath := fmt.Sprintf("workspaces/acme/webhooks/%d", ep.ID)
	for _, p := range []string{"workspaces/acme/webhooks", epPath, "workspaces/acme/audit"} {
		r := admin.get(e.url(p))
		if r.status != http.StatusOK || strings.Contains(r.body, secret) || strings.Contains(r.body, "<script>alert") {
			t.Errorf("%s: %d, the secret or the raw description shown:\n%s", p, r.status, r.body)
		}
	}
	r = admin.get(e.url(epPath))
	for _, s := range []string{"<code>https://hooks.example.com/in</code>", "user.created, user.deleted", "No delivery yet",
		`href="` + e.base + epPath + `/delete"`} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the endpoint's page lacks %q:\n%s", s, r.body)
		}
	}

	// A viewer reads, and has nothing to send.
	for _, p := range []string{"workspaces/acme/webhooks", epPath} {
		r := viewer.get(e.url(p))
		if r.status != http.StatusOK || len(writeForms(r.body)) > 0 || strings.Contains(r.body, "/delete") {
			t.Errorf("viewer's %s: %d, forms %v", p, r.status, writeForms(r.body))
		}
	}
	if r := viewer.post(e.url("workspaces/acme/webhooks"), url.Values{"url": {"https://x.example.com"}, "events": {"user.created"}}); r.status != http.StatusForbidden {
		t.Errorf("viewer creating: %d", r.status)
	}
	if r := viewer.post(e.url(epPath+"/delete"), nil); r.status != http.StatusForbidden {
		t.Errorf("viewer deleting: %d", r.status)
	}

	// Deleting: a confirmation page, then the endpoint is gone.
	r = admin.get(e.url(epPath + "/delete"))
	if r.status != http.StatusOK || !strings.Contains(r.body, `action="`+e.base+epPath+`/delete"`) {
		t.Fatalf("confirmation: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url(epPath+"/delete"), nil)
	if want := fmt.Sprintf("%sworkspaces/acme/webhooks?deleted=%d", e.base, ep.ID); r.status != http.StatusSeeOther || r.location() != want {
		t.Fatalf("delete: %d %q, want %q", r.status, r.location(), want)
	}
	if _, err := ws.GetWebhook(t.Context(), ep.ID); identity.ErrorCode(err) != identity.CodeNotFound {
		t.Errorf("the endpoint is still there: %v", err)
	}
	if r := admin.get(e.url(r.location()[len(e.base):])); !strings.Contains(r.body, fmt.Sprintf("Webhook endpoint %d deleted.", ep.ID)) {
		t.Errorf("no notice:\n%s", r.body)
	}
	other, err := ws.CreateWebhook(t.Context(), identity.NewWebhook{URL: "https://other.example.com", Events: []string{"user.created"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := admin.get(e.url(fmt.Sprintf("workspaces/acme/webhooks?deleted=%d", other.Endpoint.ID))); strings.Contains(r.body, "deleted.") {
		t.Error("a link made the page claim a deletion")
	}
	for _, p := range []string{epPath, epPath + "/delete", "workspaces/acme/webhooks/0", "workspaces/acme/webhooks/x", "workspaces/nope/webhooks"} {
		if r := admin.get(e.url(p)); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
}

// TestWebhookDeliveries: a delivery that a real HTTPS receiver refused is
// shown failed with its response code and error, "retry now" queues it
// again and the receiver then takes it; an endpoint that answered 410
// Gone is disabled, its failed delivery cannot be retried until
// "enable". Each action is audited with the operator as its actor.
func TestWebhookDeliveries(t *testing.T) {
	flaky := newReceiver(t, 1, http.StatusInternalServerError)
	gone := newReceiver(t, 1, http.StatusGone)
	e := newDeliveryEnv(t, flaky.Server, gone.Server)
	ctx := t.Context()
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	viewer := e.operator("watcher", console.RoleViewer)
	create := func(url string) identity.WebhookEndpoint {
		c, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: url, Events: []string{"user.created"}})
		if err != nil {
			t.Fatal(err)
		}
		return c.Endpoint
	}
	first, second := create(flaky.URL), create(gone.URL)
	if _, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com",
		FullName: "Ada Lovelace", Password: "correct horse battery"}); err != nil {
		t.Fatal(err)
	}
	failed := awaitDelivery(t, ws, first.ID, identity.DeliveryFailed)
	path := fmt.Sprintf("workspaces/acme/webhooks/%d", first.ID)
	retry := fmt.Sprintf("%s/deliveries/%d/retry", path, failed.ID)

	r := admin.get(e.url(path))
	for _, s := range []string{`<span class="bad">failed</span>`, `<td class="num">500</td>`, `<td class="num">1</td>`,
		`action="` + e.base + retry + `"`, "Retry now", "user.created"} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the endpoint's page lacks %q:\n%s", s, r.body)
		}
	}
	if r := viewer.get(e.url(path)); len(writeForms(r.body)) > 0 || strings.Contains(r.body, "Retry now") {
		t.Errorf("a viewer has forms %v", writeForms(r.body))
	}
	if r := viewer.post(e.url(retry), nil); r.status != http.StatusForbidden {
		t.Errorf("viewer retrying: %d", r.status)
	}
	// Another endpoint's path does not reach the delivery.
	if r := admin.post(e.url(fmt.Sprintf("workspaces/acme/webhooks/%d/deliveries/%d/retry", second.ID, failed.ID)), nil); r.status != http.StatusNotFound {
		t.Errorf("retry through another endpoint: %d, want 404", r.status)
	}

	r = admin.post(e.url(retry), nil)
	if want := fmt.Sprintf("%s%s?retried=%d", e.base, path, failed.ID); r.status != http.StatusSeeOther || r.location() != want {
		t.Fatalf("retry: %d %q, want %q", r.status, r.location(), want)
	}
	done := awaitDelivery(t, ws, first.ID, identity.DeliverySucceeded)
	if done.LastStatus != http.StatusNoContent || flaky.calls.Load() != 2 {
		t.Errorf("after the retry: %+v, %d calls", done, flaky.calls.Load())
	}
	r = admin.get(e.url(r.location()[len(e.base):]))
	if !strings.Contains(r.body, fmt.Sprintf("Delivery %d queued again.", failed.ID)) || !strings.Contains(r.body, `<td class="num">204</td>`) ||
		strings.Contains(r.body, "Retry now") {
		t.Errorf("the page after the retry:\n%s", r.body)
	}
	// A delivery that succeeded cannot be retried: the page says why.
	r = admin.post(e.url(retry), nil)
	if r.status != http.StatusConflict || !strings.Contains(r.body, "only a failed delivery can be retried") {
		t.Errorf("retrying a success: %d\n%s", r.status, r.body)
	}

	// 410 Gone disabled the second endpoint; its delivery failed.
	goneFailed := awaitDelivery(t, ws, second.ID, identity.DeliveryFailed)
	path2 := fmt.Sprintf("workspaces/acme/webhooks/%d", second.ID)
	r = admin.get(e.url(path2))
	if !strings.Contains(r.body, `<span class="bad">disabled</span>`) || !strings.Contains(r.body, `action="`+e.base+path2+`/enable"`) ||
		strings.Contains(r.body, "Retry now") || !strings.Contains(r.body, `<td class="num">410</td>`) {
		t.Errorf("the disabled endpoint's page:\n%s", r.body)
	}
	if r := admin.get(e.url("workspaces/acme/webhooks")); !strings.Contains(r.body, `<span class="bad">disabled</span>`) {
		t.Errorf("the list does not show the disabled endpoint:\n%s", r.body)
	}
	retry2 := fmt.Sprintf("%s/deliveries/%d/retry", path2, goneFailed.ID)
	if r := admin.post(e.url(retry2), nil); r.status != http.StatusConflict || !strings.Contains(r.body, "is disabled") {
		t.Errorf("retrying to a disabled endpoint: %d\n%s", r.status, r.body)
	}
	if r := viewer.post(e.url(path2+"/enable"), nil); r.status != http.StatusForbidden {
		t.Errorf("viewer enabling: %d", r.status)
	}
	r = admin.post(e.url(path2+"/enable"), nil)
	if r.status != http.StatusSeeOther || r.location() != e.base+path2+"?enabled=1" {
		t.Fatalf("enable: %d %q", r.status, r.location())
	}
	r = admin.get(e.url(path2 + "?enabled=1"))
	if !strings.Contains(r.body, "The endpoint is enabled") || !strings.Contains(r.body, `action="`+e.base+retry2+`"`) {
		t.Errorf("the enabled endpoint's page:\n%s", r.body)
	}
	admin.post(e.url(retry2), nil)
	awaitDelivery(t, ws, second.ID, identity.DeliverySucceeded)

	// The trail links a retried delivery to its endpoint.
	r = admin.get(e.url("workspaces/acme/audit?action=delivery.retried"))
	if want := fmt.Sprintf(`<a href="%sworkspaces/acme/webhooks/%d">user.created</a>`, e.base, first.ID); !strings.Contains(r.body, want) {
		t.Errorf("the trail lacks %s:\n%s", want, r.body)
	}

	// The trail names the operator for each action.
	page, err := ws.ListAuditRecords(ctx, &identity.AuditFilter{ActorKind: identity.ActorOperator, ActorID: e.operatorID("root")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range page.Records {
		got = append(got, fmt.Sprintf("%s %s %s:%s", rec.Actor.Display, rec.Action, rec.Target.Kind, rec.Target.ID))
	}
	// The fake clock stands still: records of one microsecond have no
	// order among them.
	slices.Sort(got)
	want := []string{
		fmt.Sprintf("root delivery.retried delivery:%d", failed.ID),
		fmt.Sprintf("root delivery.retried delivery:%d", goneFailed.ID),
		fmt.Sprintf("root webhook.enabled webhook:%d", second.ID),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the operator's records (-want +got):\n%s", diff)
	}
}

// TestWebhookDeliveriesPaged: an endpoint's deliveries are shown 50 a
// page, with their total.
func TestWebhookDeliveriesPaged(t *testing.T) {
	e := newEnv(t) // no dispatcher: the deliveries stay pending
	ctx := t.Context()
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	hook, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/in", Events: []string{"role.created"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 53 {
		if _, err := ws.CreateRole(ctx, identity.NewRole{Name: fmt.Sprintf("role-%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	path := fmt.Sprintf("workspaces/acme/webhooks/%d", hook.Endpoint.ID)
	r := admin.get(e.url(path))
	if !strings.Contains(r.body, "Deliveries 1–50 of 53, oldest first") || !strings.Contains(r.body, `<a href="?offset=50" rel="next">`) ||
		strings.Count(r.body, "<td>role.created") != 50 || strings.Contains(r.body, "Retry now") {
		t.Fatalf("first page:\n%s", r.body)
	}
	r = admin.get(e.url(path + "?offset=50"))
	if !strings.Contains(r.body, "Deliveries 51–53 of 53") || strings.Count(r.body, "<td>role.created") != 3 || !strings.Contains(r.body, `rel="prev"`) {
		t.Errorf("second page:\n%s", r.body)
	}
}

// TestIntegrationsUnderPrefix: mounted under /admin/, every link and form
// of the integration pages stays under it.
func TestIntegrationsUnderPrefix(t *testing.T) {
	e := newEnvAt(t, "/admin/", nil)
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	hook, err := ws.CreateWebhook(t.Context(), identity.NewWebhook{URL: "https://hooks.example.com/in", Events: []string{"user.created"}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ws.CreateClient(t.Context(), identity.NewClient{RedirectURIs: []string{"https://app.example.com/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"webhooks", fmt.Sprintf("webhooks/%d", hook.Endpoint.ID), "clients", "clients/" + client.Client.ID, "keys", "keys/rotate", "audit"} {
		r := admin.get(e.url("workspaces/acme/" + p))
		if r.status != http.StatusOK {
			t.Errorf("%s: %d", p, r.status)
			continue
		}
		for _, m := range regexp.MustCompile(`(?:href|action)="(/[^"]*)"`).FindAllStringSubmatch(r.body, -1) {
			if !strings.HasPrefix(m[1], "/admin/") {
				t.Errorf("%s links to %s", p, m[1])
			}
		}
	}
}
