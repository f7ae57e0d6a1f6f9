package identitytest

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/store"
)

// Permanent deletion. RunRules checks through the identity package's API
// that DeleteUserPermanently and DeleteWorkspace leave nothing usable of
// what they delete, whatever the store; RunErasure, which a store runs
// with a way to read every byte it holds, checks that they leave nothing
// at all.

// erasureRedirect is the redirect URI of the client of the fixtures.
const erasureRedirect = "https://app.example.com/cb"

// erasureSMTP are SMTP settings with verification and reset links.
var erasureSMTP = &identity.SMTPSettings{
	Host: "smtp.example.com", Port: 587, From: "noreply@example.com",
	VerifyURL: "https://app.example.com/verify?token={token}", ResetURL: "https://app.example.com/reset?token={token}",
}

// tokenLink finds the token in the link of an email.
var tokenLink = regexp.MustCompile(`token=(id[a-z]+_[0-9a-f]{16}_[A-Za-z0-9_-]{43})$`)

// subject is a user with a record of every kind, as subjectIn makes it:
// what a deletion must remove, and the handles that must stop working.
type subject struct {
	user identity.User
	// tokens issues and verifies tokens in the user's workspace.
	tokens *identity.Workspace
	client identity.OAuthClient
	// session is a session token; access and refresh are from a code
	// redeemed, and refresh was exchanged once (refreshUsed is the first);
	// code is a code issued and not redeemed; reset, a password reset
	// token; verify, an email verification token; challenge, a sign-in
	// waiting for the second factor.
	session, access, refresh, refreshUsed, code, reset, verify, challenge string
	// sessionID and grantID name the session and the grant in the store.
	sessionID, grantID string
}

// secrets returns every token of s, whose ids the store must no longer
// hold.
func (s subject) secrets() []string {
	return []string{s.session, s.refresh, s.refreshUsed, s.code, s.reset, s.verify, s.challenge}
}

// subjectIn makes, in the workspace slug of e's store, the user nu with
// a record of every kind: attributes, roles, a session, a grant with
// refresh tokens (one used), a code not redeemed, a TOTP factor, a
// sign-in waiting for it, failed password attempts, a verification
// token and a reset token (their emails sent), a verification email
// still queued. The workspace gets SMTP settings, a lockout policy, and
// an OAuth client.
func (e *env) subjectIn(slug string, nu identity.NewUser) subject {
	e.t.Helper()
	t := e.t
	svc, err := identity.New(e.store, &identity.Options{
		Now: e.clock.Now, PasswordHashing: &testArgon2,
		IssuerBase: "https://id.example.com", TokenSigner: jws.Signer{}, SigningAlgorithm: identity.ES256,
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.GetWorkspace(e.ctx, slug)
	if err != nil {
		t.Fatal(err)
	}
	settings := identity.Settings{PasswordPolicy: identity.DefaultPasswordPolicy(), SMTP: erasureSMTP,
		Lockout: identity.LockoutPolicy{Threshold: 5, Duration: time.Hour}}
	if err := ws.UpdateSettings(e.ctx, settings); err != nil {
		t.Fatal(err)
	}
	c, err := ws.CreateClient(e.ctx, identity.NewClient{RedirectURIs: []string{erasureRedirect}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := ws.CreateUser(e.ctx, nu) // queues a verification email
	if err != nil {
		t.Fatalf("CreateUser(%q): %v", nu.Username, err)
	}
	s := subject{user: u, tokens: ws, client: c.Client}
	if _, err := ws.SetAttribute(e.ctx, u.ID, "born", "1815 in London", nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"admin", "auditor"} {
		role, err := ws.GetRoleByName(e.ctx, name)
		if identity.ErrorCode(err) == identity.CodeNotFound {
			role, err = ws.CreateRole(e.ctx, identity.NewRole{Name: name})
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.AssignRole(e.ctx, u.ID, role.ID); err != nil {
			t.Fatal(err)
		}
	}
	// A member of a group that carries a role: memberships and what the
	// user holds through them are the user's records too.
	group, err := ws.GetGroupByName(e.ctx, "eng")
	if identity.ErrorCode(err) == identity.CodeNotFound {
		if group, err = ws.CreateGroup(e.ctx, identity.NewGroup{Name: "eng"}); err == nil {
			var viewer identity.Role
			if viewer, err = ws.CreateRole(e.ctx, identity.NewRole{Name: "viewer"}); err == nil {
				err = ws.AssignGroupRole(e.ctx, group.ID, viewer.ID)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.AddGroupMember(e.ctx, group.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	created, err := ws.CreateSession(e.ctx, u.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	session, token := created.Session, created.Secret
	s.session, s.sessionID = token, session.ID
	req := identity.AuthorizationRequest{ClientID: c.Client.ID, RedirectURI: erasureRedirect, ResponseType: "code",
		Scopes: []string{"openid", "email"}, State: "state-of-" + nu.Username}
	auth, err := ws.Provider().Authorize(e.ctx, req, token)
	if err != nil || auth.Code == "" {
		t.Fatalf("Authorize = %+v, %v; want a code", auth, err)
	}
	tok, err := ws.Provider().ExchangeCode(e.ctx, c.Client, auth.Code, erasureRedirect, "")
	if err != nil {
		t.Fatal(err)
	}
	s.access, s.refreshUsed, s.grantID = tok.AccessToken, tok.RefreshToken, tok.GrantID
	next, err := ws.Provider().RefreshTokens(e.ctx, c.Client, tok.RefreshToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.refresh, s.access = next.RefreshToken, next.AccessToken
	if auth, err = ws.Provider().Authorize(e.ctx, req, token); err != nil || auth.Code == "" {
		t.Fatalf("Authorize = %+v, %v; want a code", auth, err)
	}
	s.code = auth.Code

	// The reset email and the verification email of the creation are
	// sent (Begin makes their tokens); another verification email waits.
	if err := ws.RequestPasswordReset(e.ctx, nu.Email, nil); err != nil {
		t.Fatal(err)
	}
	s.verify, s.reset = e.sendEmails(svc, slug)
	if err := ws.SendVerificationEmail(e.ctx, u.ID); err != nil {
		t.Fatal(err)
	}

	en, err := ws.BeginTOTPEnrollment(e.ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ConfirmTOTPEnrollment(e.ctx, u.ID, e.totpCode(en.Secret)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := ws.Authenticate(e.ctx, nu.Username, "not the password")
		WantCode(t, err, identity.CodeUnauthenticated)
	}
	_, err = ws.Authenticate(e.ctx, nu.Username, nu.Password)
	WantCode(t, err, identity.CodeMFARequired)
	s.challenge = err.(*identity.Error).Challenge
	return s
}

// sendEmails leases every due job of the workspace and begins its
// attempt, as a dispatcher would before sending, and returns the tokens
// of the verification and reset emails among them.
func (e *env) sendEmails(svc *identity.Service, slug string) (verify, reset string) {
	e.t.Helper()
	q, err := svc.Queue(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	due, err := q.ListDue(e.ctx, q.Now(), 100)
	if err != nil {
		e.t.Fatal(err)
	}
	leased, err := q.Lease(e.ctx, "suite", q.Now(), time.Minute, due)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, job := range leased.Jobs {
		if job.Workspace != slug || job.Kind != identity.MailJob {
			continue
		}
		att, err := q.Begin(e.ctx, "suite", job)
		if err != nil || att.Mail == nil {
			e.t.Fatalf("Begin = %+v, %v; want an email", att, err)
		}
		m := tokenLink.FindStringSubmatch(att.Mail.Link)
		if m == nil {
			e.t.Fatalf("link %q has no token", att.Mail.Link)
		}
		if att.Mail.Kind == identity.MailPasswordReset {
			reset = m[1]
		} else {
			verify = m[1]
		}
	}
	if verify == "" || reset == "" {
		e.t.Fatalf("sent emails: verification token %q, reset token %q; want both", verify, reset)
	}
	return verify, reset
}

// wantGone checks that nothing of the deleted subject works any more:
// the user, its session, its tokens, its codes and its links.
func (e *env) wantGone(s subject) {
	e.t.Helper()
	t, ws := e.t, s.tokens
	_, err := ws.GetUser(e.ctx, s.user.ID)
	WantCode(t, err, identity.CodeNotFound)
	_, err = ws.VerifySession(e.ctx, s.session)
	WantCode(t, err, identity.CodeUnauthenticated)
	_, err = ws.VerifyAccessToken(e.ctx, s.access)
	WantCode(t, err, identity.CodeUnauthenticated)
	for _, refresh := range []string{s.refresh, s.refreshUsed} {
		_, err = ws.Provider().RefreshTokens(e.ctx, s.client, refresh, nil)
		WantCode(t, err, identity.CodeInvalidGrant)
	}
	_, err = ws.Provider().ExchangeCode(e.ctx, s.client, s.code, erasureRedirect, "")
	WantCode(t, err, identity.CodeInvalidGrant)
	_, err = ws.ResetPassword(e.ctx, s.reset, "a brand new passphrase")
	WantCode(t, err, identity.CodeTokenInvalid)
	_, err = ws.ConfirmEmail(e.ctx, s.verify)
	WantCode(t, err, identity.CodeTokenInvalid)
	if _, err = ws.VerifySecondFactor(e.ctx, s.challenge, "000000"); err == nil {
		t.Error("VerifySecondFactor with the deleted user's challenge succeeded")
	}
	_, err = ws.Authenticate(e.ctx, s.user.Username, "s3cret-passphrase")
	WantCode(t, err, identity.CodeUnauthenticated)
}

// testRuleDeleteUserPermanently: a user with a record of every kind is
// deleted with all of them; the other user keeps theirs; the event
// carries the id and username alone; the username and email are free.
func testRuleDeleteUserPermanently(t *testing.T, e *env) {
	hook := e.endpoint(identity.EventUserDeleted)
	bob := e.user("bob")
	s := e.subjectIn("acme", newUser("ada"))
	created, err := e.ws.CreateSession(e.ctx, bob.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	bobToken := created.Secret
	deleted, err := e.ws.DeleteUserPermanently(e.ctx, s.user.ID)
	if err != nil {
		t.Fatalf("DeleteUserPermanently: %v", err)
	}
	got := []int{deleted.Roles, deleted.Groups, deleted.Attributes, deleted.Sessions, deleted.Grants}
	if want := []int{2, 1, 1, 1, 1}; !slices.Equal(got, want) || !deleted.SecondFactor || deleted.User.Username != "ada" {
		t.Errorf("DeletedUser = %+v; want roles, groups, attributes, sessions and grants %v and a second factor", deleted, want)
	}
	if evs := eventTypes(e.events(hook)); len(evs) != 1 || evs[0] != "user.deleted" {
		t.Fatalf("events = %v, want user.deleted", evs)
	}
	if data := string(e.events(hook)[0].Data); data != `{"userId":2,"username":"ada"}` {
		t.Errorf("user.deleted data = %s, want {\"userId\":2,\"username\":\"ada\"}", data)
	}
	e.wantGone(s)
	err = e.store.View(e.ctx, func(tx store.Tx) error {
		for _, name := range []string{"UserSessions", "UserGrants", "LoginAttempts", "SecondFactor"} {
			var n int
			var err error
			switch name {
			case "UserSessions":
				var ss []store.Session
				ss, err = tx.UserSessions("acme", s.user.ID)
				n = len(ss)
			case "UserGrants":
				var gs []store.Grant
				gs, err = tx.UserGrants("acme", s.user.ID)
				n = len(gs)
			case "LoginAttempts":
				_, err = tx.LoginAttempts("acme", s.user.ID)
				n = 1
			case "SecondFactor":
				_, err = tx.SecondFactor("acme", s.user.ID)
				n = 1
			}
			if n > 0 && err == nil {
				t.Errorf("%s of the deleted user: still there", name)
			}
		}
		jobs, err := tx.MailJobs("acme")
		for _, j := range jobs {
			if j.UserID == s.user.ID || bytes.Contains(j.Payload, []byte("ada@example.com")) {
				t.Errorf("mail job %d of the deleted user: still there", j.ID)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Bob keeps what is his.
	if _, err := e.ws.VerifySession(e.ctx, bobToken); err != nil {
		t.Errorf("bob's session: %v", err)
	}
	// The username and email are free at once.
	again, err := e.ws.CreateUser(e.ctx, identity.NewUser{Username: "ADA", Email: "Ada@Example.com", FullName: "Ada Again", Password: "s3cret-passphrase"})
	if err != nil {
		t.Fatalf("CreateUser with the deleted username and email: %v", err)
	}
	if again.ID == s.user.ID || again.MFAEnabled {
		t.Errorf("the new user = %+v, want a new id and no second factor", again)
	}
	if u, err := e.ws.Authenticate(e.ctx, "ada", "s3cret-passphrase"); err != nil || u.ID != again.ID {
		t.Errorf("Authenticate(ada) = %+v, %v; want the new user", u, err)
	}
	_, err = e.ws.DeleteUserPermanently(e.ctx, s.user.ID)
	WantCode(t, err, identity.CodeNotFound)
}

// testRuleDeleteWorkspace: a workspace with a user of every record, a
// webhook and its deliveries and an API key is deleted with all of them;
// its key, session and tokens are refused; another workspace keeps its
// own; the slug makes an empty workspace again.
func testRuleDeleteWorkspace(t *testing.T, e *env) {
	other, err := e.svc.CreateWorkspace(e.ctx, "globex", nil)
	if err != nil {
		t.Fatal(err)
	}
	created, err := other.CreateAPIKey(e.ctx, "", []identity.Scope{identity.ScopeUsersRead})
	if err != nil {
		t.Fatal(err)
	}
	otherKey := created.Secret
	otherUser, err := other.CreateUser(e.ctx, newUser("ada"))
	if err != nil {
		t.Fatal(err)
	}
	e.endpoint(identity.EventUserCreated)
	created, err = e.ws.CreateAPIKey(e.ctx, "", []identity.Scope{identity.ScopeUsersRead})
	if err != nil {
		t.Fatal(err)
	}
	key := created.Secret
	e.user("bob")
	s := e.subjectIn("acme", newUser("ada"))

	deleted, err := e.svc.DeleteWorkspace(e.ctx, "acme")
	if err != nil {
		t.Fatalf("DeleteWorkspace: %v", err)
	}
	if want := (identity.DeletedWorkspace{Slug: "acme", Users: 2, Roles: 3, Groups: 1, Webhooks: 1, APIKeys: 1, Clients: 1}); deleted != want {
		t.Errorf("DeleteWorkspace = %+v, want %+v", deleted, want)
	}
	_, err = e.svc.AuthorizeAPIKey(e.ctx, key, "acme", identity.ScopeUsersRead)
	WantCode(t, err, identity.CodeUnauthenticated)
	if _, err := e.svc.AuthorizeAPIKey(e.ctx, otherKey, "globex", identity.ScopeUsersRead); err != nil {
		t.Errorf("the other workspace's key: %v", err)
	}
	if _, err := s.tokens.VerifySession(e.ctx, s.session); err == nil {
		t.Error("a session of the deleted workspace still verifies")
	}
	if _, err := s.tokens.VerifyAccessToken(e.ctx, s.access); err == nil {
		t.Error("an access token of the deleted workspace still verifies")
	}
	if _, err := other.GetUser(e.ctx, otherUser.ID); err != nil {
		t.Errorf("the other workspace's user: %v", err)
	}
	q, err := e.svc.Queue(nil)
	if err != nil {
		t.Fatal(err)
	}
	// globex's user was created without SMTP settings: it queued nothing.
	if n, err := q.CountPending(e.ctx); err != nil || n != 0 {
		t.Errorf("pending jobs = %d, %v; want none", n, err)
	}
	_, err = e.svc.DeleteWorkspace(e.ctx, "acme")
	WantCode(t, err, identity.CodeNotFound)

	again, err := e.svc.CreateWorkspace(e.ctx, "acme", nil)
	if err != nil {
		t.Fatalf("CreateWorkspace(acme) again: %v", err)
	}
	if list, err := again.ListUsers(e.ctx, "", nil); err != nil || list.Total != 0 {
		t.Errorf("ListUsers = %+v, %v; want none", list, err)
	}
	u, err := again.CreateUser(e.ctx, newUser("ada"))
	if err != nil || u.ID != 1 {
		t.Errorf("CreateUser in the workspace made again = %+v, %v; want id 1", u, err)
	}
	if _, err := s.tokens.VerifyAccessToken(e.ctx, s.access); err == nil {
		t.Error("an access token of the deleted workspace verifies in the one made again")
	}
}

// Record is one record of what a store holds, as a Dump reads it: where
// it is (a bucket and key, a table, a field), for messages, and its
// bytes, with whatever the store encodes inside it decoded (base64 or
// hex of byte strings), so that a search for a string finds it.
type Record struct {
	Where string
	Data  []byte
}

// Erasure is what RunErasure needs of a store beyond the store itself.
type Erasure struct {
	// Dump returns every record st holds, whatever its workspace: every
	// key and value, every row. It must not change st.
	Dump func(tb testing.TB, st store.Store) []Record
	// HoldsID reports whether data names the user id in a form the store
	// writes it in (an id key, a user_id column or field). RunErasure
	// looks for the JSON "userId":id of payloads itself. It must not
	// match another id that merely contains the digits.
	HoldsID func(data []byte, id int64) bool
}

// RunErasure checks that permanent deletion leaves nothing of what it
// deletes in the store, over Services on the stores newStore returns (as
// for RunRules): after DeleteUserPermanently of a user with a record of
// every kind, no record holds the user's id (HoldsID, or "userId":id),
// username, email, full name, or the id of any of its sessions, grants,
// codes and tokens; after DeleteWorkspace, no record holds the
// workspace's slug, the ids of its API key, client and tokens, or its
// user's username and email. Webhook deliveries keep the events they
// carry, so the workspaces of these tests have no webhook subscribed to
// events about the user.
func RunErasure(t *testing.T, newStore func(t *testing.T) store.Store, x Erasure) {
	t.Helper()
	t.Run("DeleteUserPermanently", func(t *testing.T) {
		e := newEnv(t, newStore, nil)
		e.user("bob") // user 1, who stays, as does everything of his
		nu := identity.NewUser{Username: "Ada.Lovelace", Email: "Augusta.Ada@Analytical.example", FullName: "Augusta Ada King", Password: "s3cret-passphrase"}
		s := e.subjectIn("acme", nu)
		if s.user.ID != 2 {
			t.Fatalf("the user to delete has id %d, want 2", s.user.ID)
		}
		own := e.actAs(s, nu)
		deleted, err := e.ws.DeleteUserPermanently(e.ctx, s.user.ID)
		if err != nil {
			t.Fatalf("DeleteUserPermanently: %v", err)
		}
		e.wantPseudonymized(s.user.ID, deleted, own)
		needles := []string{nu.Username, nu.Email, nu.FullName, strings.ToLower(nu.Username), strings.ToLower(nu.Email),
			strings.ToLower(nu.FullName), s.sessionID, s.grantID}
		needles = append(needles, own.personal()...)
		needles = append(needles, tokenIDs(t, s.secrets())...)
		holds := found(x.Dump(t, e.store), needles, func(data []byte) bool {
			return x.HoldsID(data, s.user.ID) || holdsJSONUserID(data, s.user.ID)
		})
		for _, h := range holds {
			t.Errorf("after DeleteUserPermanently, %s", h)
		}
		// The dump is not empty: bob and the workspace are in it.
		if len(found(x.Dump(t, e.store), []string{"bob@example.com"}, nil)) == 0 {
			t.Error("the dump does not hold bob's email: it reads nothing")
		}
	})

	t.Run("DeleteWorkspace", func(t *testing.T) {
		e := newEnv(t, newStore, nil)
		const slug = "doomed-workspace-7f3a"
		ws, err := e.svc.CreateWorkspace(e.ctx, slug, nil)
		if err != nil {
			t.Fatal(err)
		}
		created, err := ws.CreateAPIKey(e.ctx, "", []identity.Scope{identity.ScopeUsersRead})
		if err != nil {
			t.Fatal(err)
		}
		apiKey := created.APIKey
		if _, err := ws.CreateWebhook(e.ctx, identity.NewWebhook{URL: "https://hooks.example.com/doomed", Events: []string{"user.created"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.SetClaimMapper(e.ctx, "born", identity.ClaimMapperSpec{ClaimName: "born_in"}); err != nil {
			t.Fatal(err)
		}
		nu := identity.NewUser{Username: "Doomed.User", Email: "doomed.user@Doomed.example", FullName: "Doomed User", Password: "s3cret-passphrase"}
		s := e.subjectIn(slug, nu)
		if _, err := e.svc.DeleteWorkspace(e.ctx, slug); err != nil {
			t.Fatalf("DeleteWorkspace: %v", err)
		}
		needles := []string{slug, apiKey.ID, s.client.ID, "hooks.example.com/doomed", "born_in", nu.Username, strings.ToLower(nu.Email),
			nu.FullName, s.sessionID, s.grantID}
		needles = append(needles, tokenIDs(t, s.secrets())...)
		for _, h := range found(x.Dump(t, e.store), needles, nil) {
			t.Errorf("after DeleteWorkspace, %s", h)
		}
	})
}

// ownDoings are the user's own requests before an erasure (actAs), and
// what they left in the trail.
type ownDoings struct {
	// user is the user as it was; attributes the values it was given.
	user       identity.User
	attributes []string
	// address and userAgent are the client of the user's own requests;
	// othersAddress that of a sign-in someone else tried on the account.
	address, userAgent, othersAddress string
}

// personal returns what of the user no record may keep after the
// erasure: the values of its attributes and the client of its own
// requests.
func (o ownDoings) personal() []string {
	return append([]string{o.address, o.userAgent}, o.attributes...)
}

// actAs makes the trail of s's user hold what an erasure must remove:
// requests of the user's own, from their address and browser, as the
// hosted pages make them (the user the actor: a confirmed email, an
// attribute of their own), and a sign-in someone else tried, from
// another address, which stays.
func (e *env) actAs(s subject, nu identity.NewUser) ownDoings {
	e.t.Helper()
	o := ownDoings{user: s.user, attributes: []string{"1815 in London", "Poetical science"},
		address: "198.51.100.23", userAgent: "AdaPhone/2.0 (Augusta)", othersAddress: "203.0.113.99"}
	mine := identity.WithRequestInfo(e.ctx, identity.RequestInfo{
		Address: netip.MustParseAddr(o.address), UserAgent: o.userAgent, RequestID: "req-own",
	})
	if _, err := s.tokens.ConfirmEmail(mine, s.verify); err != nil { // the user is its actor
		e.t.Fatal(err)
	}
	self := identity.WithActor(mine, identity.Actor{Kind: identity.ActorUser, ID: strconv.FormatInt(s.user.ID, 10), Display: nu.Username})
	if _, err := s.tokens.SetAttribute(self, s.user.ID, "motto", o.attributes[1], nil); err != nil {
		e.t.Fatal(err)
	}
	others := identity.WithActor(identity.WithRequestInfo(e.ctx, identity.RequestInfo{
		Address: netip.MustParseAddr(o.othersAddress), UserAgent: "curl/8.5.0",
	}), identity.Actor{Kind: identity.ActorClient, ID: s.client.ID, Display: "someone's client"})
	_, err := s.tokens.Authenticate(others, nu.Email, "a guess")
	WantCode(e.t, err, identity.CodeUnauthenticated)
	return o
}

// wantPseudonymized checks the trail after the erasure of the user
// with the id: read through ListAuditRecords, a page at a time, no record holds
// the user's username, email, full name, attribute values, or the address
// and browser of their own requests; every record that names the user,
// as its target or its actor, keeps the id and shows the pseudonym (and
// deleted counts them, user.deleted aside); a sign-in someone else tried
// keeps its address.
func (e *env) wantPseudonymized(id int64, deleted identity.DeletedUser, own ownDoings) {
	e.t.Helper()
	t := e.t
	if !strings.HasPrefix(deleted.Pseudonym, "erased-") || len(deleted.Pseudonym) != len("erased-")+12 {
		t.Errorf("Pseudonym = %q, want erased- and 12 hex digits", deleted.Pseudonym)
	}
	uid := strconv.FormatInt(id, 10)
	personal := append([]string{own.user.Username, own.user.Email, own.user.FullName, strings.ToLower(own.user.Username),
		strings.ToLower(own.user.Email), strings.ToLower(own.user.FullName)}, own.personal()...)
	naming, asActor, othersKept := 0, 0, false
	var actions []string
	for _, r := range trail(t, e, e.ws, 5) {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range personal {
			if strings.Contains(string(data), p) {
				t.Errorf("after the erasure, a record holds %q: %s", p, data)
			}
		}
		byUser := r.Actor.Kind == identity.ActorUser && r.Actor.ID == uid
		aboutUser := r.Target.Kind == identity.TargetUser && r.Target.ID == uid
		if byUser {
			asActor++
			if r.Actor.Display != deleted.Pseudonym || r.Request.Address != "" || r.Request.UserAgent != "" {
				t.Errorf("a record by the erased user shows %+v from %+v, want the pseudonym and no client", r.Actor, r.Request)
			}
		}
		if aboutUser && r.Target.Display != deleted.Pseudonym {
			t.Errorf("a record about the erased user shows %+v, want the pseudonym %s", r.Target, deleted.Pseudonym)
		}
		if aboutUser && r.Actor.Kind == identity.ActorClient && r.Request.Address == own.othersAddress {
			othersKept = true
		}
		if byUser || aboutUser {
			naming++
			actions = append(actions, string(r.Action))
		}
	}
	if naming != deleted.AuditRecords+1 {
		t.Errorf("%d records name the erased user (%v); DeletedUser.AuditRecords = %d, and user.deleted makes one more",
			naming, actions, deleted.AuditRecords)
	}
	if asActor == 0 {
		t.Error("no record has the erased user as its actor: the erasure of their requests is not tested")
	}
	if !othersKept {
		t.Errorf("the sign-in someone else tried from %s lost its address, or was not recorded", own.othersAddress)
	}
	if !slices.Contains(actions, string(identity.AuditUserDeleted)) {
		t.Errorf("no user.deleted among the erased user's records %v", actions)
	}
}

// tokenIDs returns the ids of tokens of the form prefix_id_secret.
func tokenIDs(t *testing.T, tokens []string) []string {
	t.Helper()
	var ids []string
	for _, tok := range tokens {
		parts := strings.Split(tok, "_")
		if len(parts) < 3 || len(parts[1]) != 16 {
			t.Fatalf("token %q is not prefix_id_secret", tok)
		}
		ids = append(ids, parts[1])
	}
	return ids
}

// found returns a description of every record that holds one of the
// needles, or of which holdsID (when not nil) reports the id.
func found(records []Record, needles []string, holdsID func([]byte) bool) []string {
	var out []string
	for _, r := range records {
		for _, n := range needles {
			if n != "" && bytes.Contains(r.Data, []byte(n)) {
				out = append(out, r.Where+" holds "+strconv.Quote(n)+": "+strconv.Quote(string(r.Data)))
			}
		}
		if holdsID != nil && holdsID(r.Data) {
			out = append(out, r.Where+" holds the user id: "+strconv.Quote(string(r.Data)))
		}
	}
	return out
}

// holdsJSONUserID reports whether data holds the JSON member "userId"
// (or "user_id") with the value id, as event and email payloads do.
func holdsJSONUserID(data []byte, id int64) bool {
	return HoldsJSONNumber(data, "userId", id) || HoldsJSONNumber(data, "user_id", id)
}

// HoldsJSONNumber reports whether data holds the JSON member name with
// the number n: "name":n (spaces allowed around the colon) not followed
// by another digit. Stores' HoldsID functions use it for their JSON
// encodings.
func HoldsJSONNumber(data []byte, name string, n int64) bool {
	re := regexp.MustCompile(`"` + regexp.QuoteMeta(name) + `"\s*:\s*` + strconv.FormatInt(n, 10) + `(?:[^0-9.eE]|$)`)
	return re.Match(data)
}
