package identity_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// Permanent deletion of a user (DeleteUserPermanently) and of a workspace
// (DeleteWorkspace).

// TestDeleteUserPermanently: a user with a record of every kind is
// deleted with all of them in one call, which emits user.deleted with
// the id and username alone; the username and email are free at once,
// and every session and token of the user is refused.
func TestDeleteUserPermanently(t *testing.T) {
	e := newOIDCEnv(t, nil)
	hook := e.hook(identity.EventUserDeleted)
	e.setSMTP(resetSMTP())
	ada := e.ada.ID
	resetToken := e.resetToken(e.queue(nil))                       // sent
	if err := e.ws.SendVerificationEmail(e.ctx, ada); err != nil { // pending
		t.Fatal(err)
	}
	e.attr(ada, "dept", "R&D")
	if err := e.ws.AssignRole(e.ctx, ada, e.role("admin").ID); err != nil {
		t.Fatal(err)
	}
	tokens, signed := e.codeTokens("openid", "offline_access")
	if tokens.RefreshToken == "" {
		t.Fatalf("tokens = %+v, want a refresh token", tokens)
	}
	e.wantActive(tokens.AccessToken)
	e.enrol(ada)
	for range 2 {
		_, err := e.ws.Authenticate(e.ctx, "ada", "not the password")
		identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	}
	challenge := e.challenge(identity.CodeMFARequired)
	// The store holds every kind of record of ada.
	err := e.st.Store.View(e.ctx, func(tx store.Tx) error {
		if a, err := tx.LoginAttempts("acme", ada); err != nil || a.Failures != 2 {
			t.Errorf("LoginAttempts = %+v, %v; want 2 failures", a, err)
		}
		mail, err := tx.MailJobs("acme")
		if err != nil || len(mail) != 2 {
			t.Errorf("MailJobs = %d, %v; want the reset and the verification email", len(mail), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	deleted, err := e.ws.DeleteUserPermanently(e.ctx, ada)
	if err != nil {
		t.Fatalf("DeleteUserPermanently: %v", err)
	}
	want := identity.DeletedUser{
		User: identity.User{
			ID: 1, Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Enabled: true, MFAEnabled: true,
			CreatedAt: t0, UpdatedAt: deleted.User.UpdatedAt, Version: deleted.User.Version,
		},
		Roles: 1, Attributes: 1, Sessions: 1, Grants: 1, SecondFactor: true,
		// user.created, password.reset_requested,
		// email.verification_sent, user.attribute.set,
		// user.role.assigned, sign_in.succeeded, token.issued,
		// second_factor.enrollment_started, second_factor.enrolled and
		// two sign_in.failed: each once, the sign-in that names ada as
		// its actor and its target included.
		Pseudonym: deleted.Pseudonym, AuditRecords: 11,
	}
	if !strings.HasPrefix(deleted.Pseudonym, "erased-") {
		t.Errorf("Pseudonym = %q, want erased-…", deleted.Pseudonym)
	}
	if diff := cmp.Diff(want, deleted); diff != "" {
		t.Errorf("DeleteUserPermanently (-want +got):\n%s", diff)
	}
	var events []string
	for _, p := range e.payloads(hook) {
		events = append(events, typeAndData(t, p))
	}
	if diff := cmp.Diff([]string{`{"type":"user.deleted","data":{"userId":1,"username":"ada"}}`}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	_, err = e.ws.GetUser(e.ctx, ada)
	identitytest.WantCode(t, err, identity.CodeNotFound)
	_, err = e.ws.VerifySession(e.ctx, signed.sessionToken)
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	_, err = e.ws.GetSession(e.ctx, signed.session.ID)
	identitytest.WantCode(t, err, identity.CodeNotFound)
	e.wantRefused(tokens.AccessToken)
	_, err = e.ws.Provider().RefreshTokens(e.ctx, e.web, tokens.RefreshToken, nil)
	identitytest.WantCode(t, err, identity.CodeInvalidGrant)
	_, err = e.ws.ResetPassword(e.ctx, resetToken, "a brand new passphrase")
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)
	_, err = e.ws.VerifySecondFactor(e.ctx, challenge, "000000")
	if identity.ErrorCode(err) == "" {
		t.Error("VerifySecondFactor with the deleted user's challenge succeeded")
	}
	jobs, err := listItems(e.ws.ListEmailJobs(e.ctx, nil))
	if err != nil || len(jobs) != 0 {
		t.Errorf("EmailJobs = %+v, %v; want none", jobs, err)
	}
	err = e.st.Store.View(e.ctx, func(tx store.Tx) error {
		if _, err := tx.LoginAttempts("acme", ada); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LoginAttempts: %v, want ErrNotFound", err)
		}
		if _, err := tx.SecondFactor("acme", ada); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SecondFactor: %v, want ErrNotFound", err)
		}
		grants, err := tx.UserGrants("acme", ada)
		if err != nil || len(grants) != 0 {
			t.Errorf("UserGrants = %+v, %v; want none", grants, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.DeleteUserPermanently(e.ctx, ada)
	identitytest.WantCode(t, err, identity.CodeNotFound)

	// The username and email are free: a new user takes them, with a new
	// id, and none of ada's records.
	again, err := e.ws.CreateUser(e.ctx, identity.NewUser{Username: "ADA", Email: "Ada@Example.com", FullName: "Ada Again", Password: adaPassword})
	if err != nil {
		t.Fatalf("CreateUser with the deleted username and email: %v", err)
	}
	if again.ID != 2 || again.MFAEnabled {
		t.Errorf("the new user = %+v, want id 2 without MFA", again)
	}
	if attrs, err := e.ws.ListAttributes(e.ctx, again.ID); err != nil || len(attrs) != 0 {
		t.Errorf("Attributes of the new user = %v, %v; want none", attrs, err)
	}
	if u, err := e.ws.Authenticate(e.ctx, "ada", adaPassword); err != nil || u.ID != 2 {
		t.Errorf("Authenticate(ada) = %+v, %v; want the new user, unlocked and without a second factor", u, err)
	}
}

// TestDeleteUserPermanentlyRollsBack: a deletion whose event cannot be
// queued writes nothing: the user and its records stay.
func TestDeleteUserPermanentlyRollsBack(t *testing.T) {
	e := newTestEnv(t, nil)
	hook := e.hook(identity.EventUserDeleted)
	created, err := e.ws.CreateSession(e.ctx, e.ada.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	token := created.Secret
	e.st.breakMethod("PutDelivery", errFlaky)
	_, err = e.ws.DeleteUserPermanently(e.ctx, e.ada.ID)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.mend()
	if _, err := e.ws.GetUser(e.ctx, e.ada.ID); err != nil {
		t.Errorf("GetUser after a failed deletion: %v", err)
	}
	if _, err := e.ws.VerifySession(e.ctx, token); err != nil {
		t.Errorf("VerifySession after a failed deletion: %v", err)
	}
	if got := e.payloads(hook); len(got) != 0 {
		t.Errorf("events after a failed deletion: %v", got)
	}
}

// TestDeleteUserPermanentlyUnknown: an unknown user is CodeNotFound.
func TestDeleteUserPermanentlyUnknown(t *testing.T) {
	e := newTestEnv(t, nil)
	for _, id := range []int64{0, -1, 2} {
		_, err := e.ws.DeleteUserPermanently(e.ctx, id)
		identitytest.WantCode(t, err, identity.CodeNotFound)
	}
}

// watcherLog is a QueueWatcher that records the endpoints it is told
// of.
type watcherLog struct{ deleted []identity.Lane }

func (w *watcherLog) JobsQueued() {}
func (w *watcherLog) EndpointDeleted(workspace string, endpointID int64) {
	w.deleted = append(w.deleted, identity.Lane{Workspace: workspace, EndpointID: endpointID})
}

// TestDeleteWorkspace: every record of the workspace goes in one call;
// its API key, session and tokens are refused at the next call, the
// watchers abandon its lanes, and the slug makes an empty workspace
// again.
func TestDeleteWorkspace(t *testing.T) {
	e := newOIDCEnv(t, nil)
	other, err := e.svc.CreateWorkspace(e.ctx, "globex", nil)
	if err != nil {
		t.Fatal(err)
	}
	created, err := other.CreateAPIKey(e.ctx, "globex's", []identity.Scope{identity.ScopeUsersRead})
	if err != nil {
		t.Fatal(err)
	}
	otherKey := created.Secret
	hook := e.hook(identity.EventUserCreated)
	created, err = e.ws.CreateAPIKey(e.ctx, "acme's", []identity.Scope{identity.ScopeUsersRead})
	if err != nil {
		t.Fatal(err)
	}
	key := created.Secret
	e.user("bob")
	tokens, signed := e.codeTokens("openid", "offline_access")
	log := &watcherLog{}
	stop := e.svc.WatchQueue(log)
	defer stop()

	deleted, err := e.svc.DeleteWorkspace(e.ctx, "acme")
	if err != nil {
		t.Fatalf("DeleteWorkspace: %v", err)
	}
	want := identity.DeletedWorkspace{Slug: "acme", Users: 2, Webhooks: 1, APIKeys: 1, Clients: 3}
	if diff := cmp.Diff(want, deleted); diff != "" {
		t.Errorf("DeleteWorkspace (-want +got):\n%s", diff)
	}
	wantLanes := []identity.Lane{{Workspace: "acme", EndpointID: hook}, {Workspace: "acme", EndpointID: 0}}
	if diff := cmp.Diff(wantLanes, log.deleted); diff != "" {
		t.Errorf("lanes the watchers were told of (-want +got):\n%s", diff)
	}

	_, err = e.svc.VerifyAPIKey(e.ctx, key)
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	_, err = e.svc.AuthorizeAPIKey(e.ctx, key, "acme", identity.ScopeUsersRead)
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
	if _, err := e.svc.AuthorizeAPIKey(e.ctx, otherKey, "globex", identity.ScopeUsersRead); err != nil {
		t.Errorf("the other workspace's key: %v", err)
	}
	_, err = e.svc.GetWorkspace(e.ctx, "acme")
	identitytest.WantCode(t, err, identity.CodeNotFound)
	_, err = e.ws.VerifySession(e.ctx, signed.sessionToken)
	if identity.ErrorCode(err) == "" {
		t.Error("VerifySession of the deleted workspace's session succeeded")
	}
	_, err = e.ws.VerifyAccessToken(e.ctx, tokens.AccessToken)
	if identity.ErrorCode(err) == "" {
		t.Error("VerifyAccessToken of the deleted workspace's token succeeded")
	}
	_, err = e.svc.DeleteWorkspace(e.ctx, "acme")
	identitytest.WantCode(t, err, identity.CodeNotFound)
	if ws, err := e.svc.ListWorkspaces(e.ctx); err != nil || len(ws) != 1 || ws[0].Slug() != "globex" {
		t.Errorf("Workspaces = %v, %v; want globex alone", ws, err)
	}
	q, err := e.svc.Queue(nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := q.CountPending(e.ctx); err != nil || n != 0 {
		t.Errorf("pending jobs = %d, %v; want none", n, err)
	}

	// The slug is free, and its workspace starts empty.
	again, err := e.svc.CreateWorkspace(e.ctx, "acme", nil)
	if err != nil {
		t.Fatalf("CreateWorkspace(acme) again: %v", err)
	}
	list, err := again.ListUsers(e.ctx, "", nil)
	if err != nil || list.Total != 0 {
		t.Errorf("ListUsers = %+v, %v; want none", list, err)
	}
	if keys, err := again.ListAPIKeys(e.ctx); err != nil || len(keys) != 0 {
		t.Errorf("APIKeys = %v, %v; want none", keys, err)
	}
	if clients, err := again.ListClients(e.ctx); err != nil || len(clients) != 0 {
		t.Errorf("Clients = %v, %v; want none", clients, err)
	}
	u, err := again.CreateUser(e.ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada", Password: adaPassword})
	if err != nil || u.ID != 1 {
		t.Errorf("CreateUser in the new workspace = %+v, %v; want id 1", u, err)
	}
	// Its tokens are signed with new keys; the old token is still refused.
	keys, err := again.ListSigningKeys(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	kid := headerOf(t, tokens.AccessToken)["kid"]
	if slices.ContainsFunc(keys, func(k identity.SigningKey) bool { return k.ID == kid }) {
		t.Errorf("the new workspace publishes the old key %v", kid)
	}
	_, err = again.VerifyAccessToken(e.ctx, tokens.AccessToken)
	identitytest.WantCode(t, err, identity.CodeUnauthenticated)
}
