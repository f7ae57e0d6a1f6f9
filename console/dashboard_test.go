package console_test

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// cardFacts reads the figures of a workspace's card on the dashboard.
func cardFacts(t *testing.T, body, slug string) map[string]string {
	t.Helper()
	start := strings.Index(body, `<h3 id="ws-`+slug+`">`)
	if start < 0 {
		t.Fatalf("no card of %s:\n%s", slug, body)
	}
	card, _, _ := strings.Cut(body[start:], "</section>")
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`<dt>([^<]*)</dt><dd>(?:<span class="bad">)?([^<]*)`).FindAllStringSubmatch(card, -1) {
		out[m[1]] = html.UnescapeString(m[2])
	}
	return out
}

// TestDashboard: per workspace the operator may read, the users, the
// sign-ins and failures of the last 24 hours, the locked accounts, its
// share of the queue and its failing endpoints; the service's delivery
// queue for whoever reads the whole service.
func TestDashboard(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	acme := e.workspace("acme")
	e.workspace("zeta")
	for _, name := range []string{"ada", "bob", "cyd"} {
		if _, err := acme.CreateUser(ctx, identity.NewUser{Username: name, Email: name + "@example.com", FullName: name, Password: "a good password"}); err != nil {
			t.Fatal(err)
		}
	}
	// Two sign-ins and a failure a day ago, not counted; then two and
	// three in the window.
	signIns := func(ok, failed int) {
		for range ok {
			if _, err := acme.Login(ctx, "ada", "a good password"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range failed {
			if _, err := acme.Login(ctx, "nobody"+strconv.Itoa(i), "wrong"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
				t.Fatal(err)
			}
		}
	}
	signIns(2, 1)
	e.clock.Advance(24*time.Hour + time.Second)
	signIns(2, 3)
	// cyd's account locked by the default threshold of wrong passwords,
	// each a failed sign-in too; a webhook endpoint with a delivery
	// pending (no dispatcher runs here).
	for range identity.DefaultLockoutThreshold {
		if _, err := acme.Login(ctx, "cyd", "wrong"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
			t.Fatal(err)
		}
	}
	if _, err := acme.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/in", Events: []string{"user.created"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := acme.CreateUser(ctx, identity.NewUser{Username: "dee", Email: "dee@example.com", FullName: "dee", Password: "a good password"}); err != nil {
		t.Fatal(err)
	}

	admin := e.operator("root", console.RoleAdmin)
	r := admin.get(e.url(""))
	if r.status != 200 || titleOf(r.body) != "Dashboard" {
		t.Fatalf("dashboard: %d %s", r.status, r.body)
	}
	want := map[string]string{
		"Users": "4", "Sign-ins": "2", "Failed sign-ins": "13", "Locked accounts": "1",
		"Pending deliveries": "1", "Oldest due delivery has waited": "nothing overdue", "Failing webhook endpoints": "0",
	}
	if diff := cmp.Diff(want, cardFacts(t, r.body, "acme")); diff != "" {
		t.Errorf("acme (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.body, "Pending webhooks and emails</dt><dd>1</dd>") {
		t.Errorf("no queue figures for console.admin:\n%s", r.body)
	}

	// A workspace's admin sees that workspace alone, and not the
	// service's queue.
	scoped := e.operator("acme-admin", console.WorkspaceRole(console.RoleAdmin, "acme"))
	r = scoped.get(e.url(""))
	if !strings.Contains(r.body, `id="ws-acme"`) || strings.Contains(r.body, `id="ws-zeta"`) || strings.Contains(r.body, `id="ws-operators"`) ||
		strings.Contains(r.body, "Delivery queue") {
		t.Errorf("acme admin's dashboard:\n%s", r.body)
	}
}
