package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
)

// TestSigningKeysPage: the keys are listed with their state and, for a
// retired key, until when it stays published; an admin rotates after a
// confirmation, a viewer cannot.
func TestSigningKeysPage(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	ws := e.workspace("acme")
	admin := e.operator("root", console.RoleAdmin)
	viewer := e.operator("watcher", console.RoleViewer)

	before, err := ws.ListSigningKeys(ctx)
	if err != nil || len(before) != 2 {
		t.Fatalf("keys: %v %v", before, err)
	}
	active, next := before[0], before[1]
	if active.State != identity.KeyActive {
		active, next = next, active
	}
	r := admin.get(e.url("workspaces/acme/keys"))
	for _, s := range []string{"<code>" + active.ID + "</code>", "<strong>active</strong>", "<td>next</td>", "while active", "while next",
		`href="` + e.base + `workspaces/acme/keys/rotate"`} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the keys page lacks %q:\n%s", s, r.body)
		}
	}
	if r := viewer.get(e.url("workspaces/acme/keys")); r.status != http.StatusOK || strings.Contains(r.body, "/rotate") {
		t.Errorf("viewer's page: %d", r.status)
	}
	if r := viewer.post(e.url("workspaces/acme/keys/rotate"), nil); r.status != http.StatusForbidden {
		t.Errorf("viewer rotating: %d", r.status)
	}

	r = admin.get(e.url("workspaces/acme/keys/rotate"))
	if r.status != http.StatusOK || !strings.Contains(r.body, "next key (<code>"+next.ID+"</code>)") ||
		!strings.Contains(r.body, `action="`+e.base+`workspaces/acme/keys/rotate"`) {
		t.Fatalf("confirmation: %d\n%s", r.status, r.body)
	}
	r = admin.post(e.url("workspaces/acme/keys/rotate"), nil)
	if want := e.base + "workspaces/acme/keys?rotated=" + next.ID; r.status != http.StatusSeeOther || r.location() != want {
		t.Fatalf("rotate: %d %q, want %q", r.status, r.location(), want)
	}
	after, err := ws.ListSigningKeys(ctx)
	if err != nil || len(after) != 3 {
		t.Fatalf("keys after: %v %v", after, err)
	}
	var retired identity.SigningKey
	for _, k := range after {
		if k.ID == active.ID {
			retired = k
		}
	}
	if retired.State != identity.KeyRetired || retired.RemoveAt == nil {
		t.Fatalf("the old key: %+v", retired)
	}
	r = admin.get(e.url("workspaces/acme/keys?rotated=" + next.ID))
	for _, s := range []string{"Keys rotated: " + next.ID + " signs from now on.", "<td>retired</td>",
		"<td>" + retired.RemoveAt.UTC().Format("2006-01-02 15:04") + " UTC</td>"} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the page after the rotation lacks %q:\n%s", s, r.body)
		}
	}
	// A link naming a key that does not sign makes no claim.
	if r := admin.get(e.url("workspaces/acme/keys?rotated=" + active.ID)); strings.Contains(r.body, "Keys rotated") {
		t.Error("a link made the page claim a rotation")
	}
	if r := admin.get(e.url("workspaces/acme/audit?action=signing_key.")); !strings.Contains(r.body, `<a href="`+e.base+`workspaces/acme/keys">ES256</a>`) {
		t.Errorf("the trail does not link to the keys:\n%s", r.body)
	}
	page, err := ws.ListAuditRecords(ctx, &identity.AuditFilter{Action: "signing_key.rotated",
		ActorKind: identity.ActorOperator, ActorID: e.operatorID("root")}, nil)
	if err != nil || len(page.Records) != 1 || page.Records[0].Target.ID != next.ID {
		t.Errorf("records: %+v %v", page.Records, err)
	}
}
