package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// auditAction reads the actions of the audit page's rows, in order.
var auditAction = regexp.MustCompile(`<th scope="row">([a-z_.]+)</th>`)

func auditActions(body string) []string {
	var out []string
	for _, m := range auditAction.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestAuditPage: the trail newest first, each entry linking to its
// object and showing its changes as before -> after, hostile values
// escaped; filtered by actor, target, action or prefix, outcome and
// time; invalid filters named next to their inputs.
func TestAuditPage(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	viewer := e.operator("watcher", console.RoleViewer)
	step := func() { e.clock.Advance(time.Second) } // one record a second: an order to read
	e.clock.Advance(time.Minute)
	ada, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com",
		FullName: `<script>alert("a")</script>`, Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	step()
	hook, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/in", Events: []string{"user.created"}})
	if err != nil {
		t.Fatal(err)
	}
	step()
	client, err := ws.CreateClient(ctx, identity.NewClient{Name: "shop", RedirectURIs: []string{"https://shop.example.com/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	step()
	if _, err := ws.AuthenticateClient(ctx, client.Client.ID, "idcs_wrong"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
		t.Fatalf("a wrong secret: %v", err)
	}
	step()
	r := admin.post(e.url("workspaces/acme/clients/apikeys"), url.Values{"name": {"ci"}, "scopes": {"users:read"}})
	if r.status != http.StatusOK {
		t.Fatalf("creating a key: %d", r.status)
	}
	keys, err := ws.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 {
		t.Fatal(keys, err)
	}
	opID := e.operatorID("root")

	r = admin.get(e.url("workspaces/acme/audit"))
	if diff := cmp.Diff([]string{"api_key.created", "client.authentication_failed", "client.created", "webhook.created",
		"user.created", "workspace.created"}, auditActions(r.body)); diff != "" {
		t.Errorf("actions, newest first (-want +got):\n%s", diff)
	}
	for _, s := range []string{
		`href="` + e.base + fmt.Sprintf("workspaces/acme/users/%d", ada.ID) + `">ada</a>`,
		`href="` + e.base + fmt.Sprintf("workspaces/acme/webhooks/%d", hook.Endpoint.ID) + `">https://hooks.example.com/in</a>`,
		`href="` + e.base + "workspaces/acme/clients/" + client.Client.ID + `">shop</a>`,
		`href="` + e.base + "workspaces/acme/clients#apikey-" + keys[0].ID + `">ci</a>`,
		`operator <strong>root</strong> <span class="hint">(` + opID + `)</span>`,
		`<span class="bad">failure</span>`,
		`<code>fullName</code>: none → <code>` + html.EscapeString(`"<script>alert(\"a\")</script>"`) + `</code>`,
		`<code>scopes</code>: none → <code>[&#34;users:read&#34;]</code>`,
	} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the trail lacks %s", s)
		}
	}
	if strings.Contains(r.body, "<script>alert") {
		t.Error("a hostile value is markup")
	}
	if r := viewer.get(e.url("workspaces/acme/audit")); r.status != http.StatusOK || len(auditActions(r.body)) != 6 {
		t.Errorf("viewer: %d", r.status)
	}

	for _, c := range []struct {
		query string
		want  []string
	}{
		{"action=client.", []string{"client.authentication_failed", "client.created"}},
		{"action=webhook.created", []string{"webhook.created"}},
		{"actor=operator:" + opID, []string{"api_key.created"}},
		{"actor=system", []string{"client.authentication_failed", "client.created", "webhook.created", "user.created", "workspace.created"}},
		{fmt.Sprintf("target=user:%d", ada.ID), []string{"user.created"}},
		{"outcome=failure", []string{"client.authentication_failed"}},
		{"outcome=success&action=client.", []string{"client.created"}},
		{"since=2026-03-01T12:01&until=2026-03-01T12:02", []string{"api_key.created", "client.authentication_failed",
			"client.created", "webhook.created", "user.created"}},
		{"until=2026-03-01T12:01", []string{"workspace.created"}},
		{"since=2026-03-02T00:00", nil},
	} {
		r := admin.get(e.url("workspaces/acme/audit?" + c.query))
		if diff := cmp.Diff(c.want, auditActions(r.body)); r.status != http.StatusOK || diff != "" {
			t.Errorf("%s: %d (-want +got):\n%s", c.query, r.status, diff)
		}
		if !strings.Contains(r.body, "Clear the filters") {
			t.Errorf("%s: no way back to the whole trail", c.query)
		}
	}
	if r := admin.get(e.url("workspaces/acme/audit?since=2026-03-02T00:00")); !strings.Contains(r.body, "No record matches the filters.") {
		t.Errorf("an empty result says nothing")
	}
	for _, c := range []struct{ query, field string }{
		{"actor=robot:1", "actor"},
		{"target=planet:3", "target"},
		{"action=nothing.such", "action"},
		{"outcome=maybe", "outcome"},
		{"since=yesterday", "since"},
		{"until=2026-13-01T00:00", "until"},
	} {
		r := admin.get(e.url("workspaces/acme/audit?" + c.query))
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="`+c.field+`-error"`) {
			t.Errorf("%s: %d, no message next to %s", c.query, r.status, c.field)
		}
	}
}

// TestAuditPaging: a page of the trail at a time, by cursor, with the
// filters kept across pages.
func TestAuditPaging(t *testing.T) {
	e := newEnv(t)
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	for i := range 55 {
		e.clock.Advance(time.Millisecond)
		if _, err := ws.CreateRole(t.Context(), identity.NewRole{Name: fmt.Sprintf("role-%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	r := admin.get(e.url("workspaces/acme/audit?action=role."))
	if got := len(auditActions(r.body)); got != 50 || strings.Contains(r.body, "Newest records") {
		t.Fatalf("first page: %d rows", got)
	}
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">Older records</a>`).FindStringSubmatch(r.body)
	if next == nil {
		t.Fatalf("no link to older records:\n%s", r.body)
	}
	u, err := url.Parse(html.UnescapeString(next[1]))
	if err != nil || u.Query().Get("action") != "role." || u.Query().Get("cursor") == "" {
		t.Fatalf("the next page's link %q: %v", next[1], err)
	}
	r = admin.get(e.srv.URL + u.String())
	if diff := cmp.Diff([]string{"role.created", "role.created", "role.created", "role.created", "role.created"}, auditActions(r.body)); diff != "" {
		t.Errorf("second page (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.body, "role-00") || strings.Contains(r.body, "role-05") || strings.Contains(r.body, "Older records") ||
		!strings.Contains(r.body, `<a href="`+e.base+`workspaces/acme/audit?action=role.">Newest records</a>`) {
		t.Errorf("second page:\n%s", r.body)
	}
}
