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
	"github.com/identitylib/identity/store"
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
	// The card's heading links to the workspace's users.
	if !strings.Contains(r.body, `<h3 id="ws-acme"><a href="`+e.base+`workspaces/acme/users">acme</a></h3>`) || strings.Contains(r.body, `id="ws-zeta"`) || strings.Contains(r.body, `id="ws-operators"`) ||
		strings.Contains(r.body, "Delivery queue") {
		t.Errorf("acme admin's dashboard:\n%s", r.body)
	}
}

// TestDashboardQueueCapped: a workspace's share of the queue is counted
// among the library's QueueStatsWalkMax earliest due jobs; past them the
// card shows the count as a floor ("9999+"), and the oldest job's wait as
// not known when none of the workspace's jobs is among them. The service's
// own count stays exact.
func TestDashboardQueueCapped(t *testing.T) {
	e := newEnv(t)
	for _, slug := range []string{"acme", "beta", "zeta"} {
		e.workspace(slug)
	}
	now := e.clock.Now()
	mail := func(id int64, due time.Duration) store.Delivery {
		return store.Delivery{ID: id, Kind: store.JobMail, EventType: "email.verification", Payload: []byte("{}"),
			CreatedAt: now, Status: store.DeliveryPending, NextAttemptAt: now.Add(due)}
	}
	// In due order: acme's first (an hour overdue), zeta's 9,999, then
	// acme's second and beta's one, past the first 10,000.
	jobs := map[string][]store.Delivery{
		"acme": {mail(1, -time.Hour), mail(2, 20000*time.Second)},
		"beta": {mail(1, 30000*time.Second)},
	}
	for id := int64(1); id < identity.QueueStatsWalkMax; id++ {
		jobs["zeta"] = append(jobs["zeta"], mail(id, time.Duration(id)*time.Second))
	}
	err := e.st.Update(t.Context(), func(tx store.Tx) error {
		for slug, list := range jobs {
			for _, d := range list {
				if err := tx.PutDelivery(slug, d); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := e.operator("root", console.RoleAdmin).get(e.url(""))
	queue := func(slug string) map[string]string {
		f := cardFacts(t, r.body, slug)
		return map[string]string{"Pending deliveries": f["Pending deliveries"], "Oldest due delivery has waited": f["Oldest due delivery has waited"]}
	}
	got := map[string]map[string]string{"acme": queue("acme"), "beta": queue("beta"), "zeta": queue("zeta")}
	want := map[string]map[string]string{
		"acme": {"Pending deliveries": "1+", "Oldest due delivery has waited": "1h0m0s"},
		"beta": {"Pending deliveries": "0+", "Oldest due delivery has waited": "not known: none among the queue's first 10000"},
		"zeta": {"Pending deliveries": "9999+", "Oldest due delivery has waited": "nothing overdue"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the workspaces' queues (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.body, "Pending webhooks and emails</dt><dd>10002</dd>") {
		t.Errorf("the service's queue is not 10002 exactly:\n%s", r.body)
	}
}
