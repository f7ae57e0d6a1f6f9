package oidc_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// freshRequestID is the form of a request id the handler makes itself.
var freshRequestID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// viaProxy is a RoundTripper that sends every request with a User-Agent
// and, when forwardedFor is set, the headers of a proxy in front of the
// provider: X-Forwarded-For and an X-Request-Id of its own, edge-1,
// edge-2 and so on.
type viaProxy struct {
	ua, forwardedFor string
	n                *atomic.Int64
}

func (v viaProxy) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", v.ua)
	if v.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", v.forwardedFor)
		req.Header.Set("X-Request-Id", fmt.Sprintf("edge-%d", v.n.Add(1)))
	}
	return http.DefaultTransport.RoundTrip(req)
}

// auditSeen is what a test compares of a record: who did what to whom,
// why, from where.
type auditSeen struct {
	Actor   identity.Actor
	Action  identity.AuditAction
	Target  identity.AuditTarget
	Outcome identity.AuditOutcome
	Reason  string
	Request identity.AuditRequest
}

// trail returns the workspace's records that filter keeps, newest first,
// as auditSeen.
func (p *provider) trail(filter identity.AuditFilter) []auditSeen {
	p.t.Helper()
	page, err := p.ws.ListAuditRecords(p.t.Context(), &filter, &identity.AuditPageOptions{Limit: identity.MaxPageLimit})
	if err != nil {
		p.t.Fatal(err)
	}
	var out []auditSeen
	for _, r := range page.Records {
		out = append(out, auditSeen{Actor: r.Actor, Action: r.Action, Target: r.Target, Outcome: r.Outcome, Reason: r.Reason, Request: r.Request})
	}
	return out
}

// requestID returns the X-Request-Id of a reply, checking its form: the
// proxy's own when the request came through one, else a fresh id.
func requestID(t *testing.T, r reply, proxied bool) string {
	t.Helper()
	id := r.header.Get("X-Request-Id")
	switch {
	case proxied && !regexp.MustCompile(`^edge-\d+$`).MatchString(id):
		t.Errorf("X-Request-Id %q, want the trusted proxy's", id)
	case !proxied && !freshRequestID.MatchString(id):
		t.Errorf("X-Request-Id %q, want a fresh id", id)
	}
	return id
}

// TestSignInAudit: the sign-in page's calls name the client as their
// actor until the user is known, and the successful sign-in the user;
// every record carries the browser's address (a trusted proxy's
// X-Forwarded-For honoured, an untrusted peer's ignored), its User-Agent
// and the request's id, which the answer's X-Request-Id names.
func TestSignInAudit(t *testing.T) {
	const ua = "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	tests := []struct {
		name         string
		trusted      []netip.Prefix
		forwardedFor string
		address      string
		proxied      bool
	}{
		{"no proxy", nil, "", "127.0.0.1", false},
		{"an untrusted peer's headers ignored", nil, "203.0.113.9", "127.0.0.1", false},
		{"a trusted proxy's headers honoured", loopback, "198.51.100.4, 203.0.113.9", "203.0.113.9", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProviderWith(t, func(o *identity.Options) { o.TrustedProxies = tt.trusted }, nil)
			c := p.browser()
			c.Transport = viaProxy{ua: ua, forwardedFor: tt.forwardedFor, n: new(atomic.Int64)}
			form := p.loginForm(c, p.authorize(c, p.authParams(nil)))
			refused := p.signIn(c, form, "ada", "not the password")
			if refused.status != http.StatusBadRequest {
				t.Fatalf("wrong password: %d %s", refused.status, refused.body)
			}
			p.clock.Advance(time.Second) // records of one microsecond have no order
			signedIn := p.signIn(c, form, "ada", adaPassword)
			p.codeFrom(signedIn, appURI)

			ada := identity.AuditTarget{Kind: identity.TargetUser, ID: fmt.Sprint(p.ada.ID), Display: "ada"}
			want := []auditSeen{
				{
					Actor:  identity.Actor{Kind: identity.ActorUser, ID: fmt.Sprint(p.ada.ID), Display: "ada"},
					Action: identity.AuditSignInSucceeded, Target: ada, Outcome: identity.OutcomeSuccess,
					Request: identity.AuditRequest{Address: tt.address, UserAgent: ua, RequestID: requestID(t, signedIn, tt.proxied)},
				},
				{
					Actor:  identity.Actor{Kind: identity.ActorClient, ID: p.web.Client.ID, Display: "Web App"},
					Action: identity.AuditSignInFailed, Target: ada, Outcome: identity.OutcomeFailure, Reason: "wrong_password",
					Request: identity.AuditRequest{Address: tt.address, UserAgent: ua, RequestID: requestID(t, refused, tt.proxied)},
				},
			}
			if diff := cmp.Diff(want, p.trail(identity.AuditFilter{Action: "sign_in."})); diff != "" {
				t.Errorf("sign-in records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSecondFactorAudit: a wrong code at the sign-in page is recorded
// with the client as its actor, since the page does not know the user
// yet; everything the right code's request writes (the sign-in, the
// session) is the user's.
func TestSecondFactorAudit(t *testing.T) {
	p := newProvider(t)
	secret, _ := p.enrol(p.ada.ID)
	c := p.browser()
	page := p.codeStep(c)
	right := p.totpCode(secret)
	refused := p.postCode(c, page, wrong(right))
	if refused.status != http.StatusBadRequest {
		t.Fatalf("wrong code: %d %s", refused.status, refused.body)
	}
	p.clock.Advance(time.Second) // records of one microsecond have no order
	done := p.postCode(c, page, right)
	p.codeFrom(done, appURI)

	ada := identity.AuditTarget{Kind: identity.TargetUser, ID: fmt.Sprint(p.ada.ID), Display: "ada"}
	adaActor := identity.Actor{Kind: identity.ActorUser, ID: fmt.Sprint(p.ada.ID), Display: "ada"}
	want := []auditSeen{{
		Actor:  identity.Actor{Kind: identity.ActorClient, ID: p.web.Client.ID, Display: "Web App"},
		Action: identity.AuditSignInFailed, Target: ada, Outcome: identity.OutcomeFailure, Reason: "wrong_code",
		Request: identity.AuditRequest{Address: "127.0.0.1", UserAgent: "Go-http-client/1.1", RequestID: requestID(t, refused, false)},
	}}
	if diff := cmp.Diff(want, p.trail(identity.AuditFilter{Action: string(identity.AuditSignInFailed)})); diff != "" {
		t.Errorf("sign_in.failed (-want +got):\n%s", diff)
	}
	id := requestID(t, done, false)
	var actions []identity.AuditAction
	for _, r := range p.trail(identity.AuditFilter{}) {
		if r.Request.RequestID != id {
			continue
		}
		actions = append(actions, r.Action)
		if r.Actor != adaActor || r.Request.Address != "127.0.0.1" {
			t.Errorf("%s of the code step: actor %+v, address %q; want ada, 127.0.0.1", r.Action, r.Actor, r.Request.Address)
		}
	}
	if !slices.Contains(actions, identity.AuditSignInSucceeded) {
		t.Errorf("the code step wrote %v, want sign_in.succeeded among them", actions)
	}
}

// TestAccountAudit: the account page's actions are the signed-in user's:
// revoking another of the user's sessions is recorded with the user as
// actor and target, the session's id among the changes, and the
// browser's request.
func TestAccountAudit(t *testing.T) {
	p := newProvider(t)
	p.signedInAccount()
	c, page := p.signedInAccount()
	list := sessionsListed(page.body)
	// Both sessions start at the fake clock's one time, so their order
	// is their ids': the other one is whichever is not current.
	if len(list) != 2 || list[0].current == list[1].current {
		t.Fatalf("sessions listed: %+v", list)
	}
	older := list[0].id
	if list[0].current {
		older = list[1].id
	}
	r := p.accountPost(c, page, "revoke", map[string]string{"session": older})
	if r.status != http.StatusFound {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	page2, err := p.ws.ListAuditRecords(t.Context(), &identity.AuditFilter{Action: string(identity.AuditSessionRevoked)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page2.Records) != 1 {
		t.Fatalf("session.revoked records: %+v, want one", page2.Records)
	}
	rec := page2.Records[0]
	ada := fmt.Sprint(p.ada.ID)
	want := auditSeen{
		Actor: identity.Actor{Kind: identity.ActorUser, ID: ada, Display: "ada"}, Action: identity.AuditSessionRevoked,
		Target: identity.AuditTarget{Kind: identity.TargetUser, ID: ada, Display: "ada"}, Outcome: identity.OutcomeSuccess,
		Reason:  "revoked",
		Request: identity.AuditRequest{Address: "127.0.0.1", UserAgent: "Go-http-client/1.1", RequestID: requestID(t, r, false)},
	}
	got := auditSeen{Actor: rec.Actor, Action: rec.Action, Target: rec.Target, Outcome: rec.Outcome, Reason: rec.Reason, Request: rec.Request}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session.revoked (-want +got):\n%s", diff)
	}
	if ch := rec.Changes["sessionId"]; ch.Before != older && ch.After != older {
		t.Errorf("changes %+v, want sessionId %s", rec.Changes, older)
	}
}

// TestLogoutAudit: a logout confirmed by a signed-in user is the user's;
// the session's revocation names the user as its actor.
func TestLogoutAudit(t *testing.T) {
	p := newProvider(t)
	c := p.browser()
	p.signedIn(c)
	ask := get(t, c, p.issuer+"/end_session")
	if ask.status != http.StatusOK {
		t.Fatalf("logout confirmation: %d %s", ask.status, ask.body)
	}
	r := p.submit(c, "/end_session", ask, map[string]string{"confirm": "1"})
	if r.status != http.StatusOK {
		t.Fatalf("confirmed logout: %d %s", r.status, r.body)
	}
	ada := fmt.Sprint(p.ada.ID)
	want := []auditSeen{{
		Actor: identity.Actor{Kind: identity.ActorUser, ID: ada, Display: "ada"}, Action: identity.AuditSessionRevoked,
		Target: identity.AuditTarget{Kind: identity.TargetUser, ID: ada, Display: "ada"}, Outcome: identity.OutcomeSuccess,
		Reason:  "logout",
		Request: identity.AuditRequest{Address: "127.0.0.1", UserAgent: "Go-http-client/1.1", RequestID: requestID(t, r, false)},
	}}
	if diff := cmp.Diff(want, p.trail(identity.AuditFilter{Action: string(identity.AuditSessionRevoked)})); diff != "" {
		t.Errorf("session.revoked (-want +got):\n%s", diff)
	}
}

// TestProtocolAudit: the token and revocation endpoints make their calls
// as the client that authenticated: the tokens a code, a refresh and the
// client's own credentials issue, and a revocation, are the client's
// doing.
func TestProtocolAudit(t *testing.T) {
	p := newProvider(t)
	tok := p.tokens()
	// Records of one microsecond have no order: a second between calls.
	p.clock.Advance(time.Second)
	refreshed := p.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}})
	if refreshed.status != http.StatusOK {
		t.Fatalf("refresh: %d %s", refreshed.status, refreshed.body)
	}
	p.clock.Advance(time.Second)
	if r := p.token(url.Values{"grant_type": {"client_credentials"}}); r.status != http.StatusOK {
		t.Fatalf("client credentials: %d %s", r.status, r.body)
	}
	p.clock.Advance(time.Second)
	revoke := postForm(t, http.DefaultClient, p.issuer+"/revoke", url.Values{"token": {refreshed.json(t)["refresh_token"].(string)}},
		p.web.Client.ID, p.web.Secret)
	if revoke.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", revoke.status, revoke.body)
	}
	web := identity.Actor{Kind: identity.ActorClient, ID: p.web.Client.ID, Display: "Web App"}
	var got []string
	for _, r := range p.trail(identity.AuditFilter{Action: "token."}) {
		if r.Actor != web {
			t.Errorf("%s: actor %+v, want the web client", r.Action, r.Actor)
		}
		got = append(got, string(r.Action)+" "+r.Target.Kind)
	}
	want := []string{"token.revoked user", "token.issued client", "token.refreshed user", "token.issued user"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token records, newest first (-want +got):\n%s", diff)
	}
}

// TestRequestIDHeader: every answer of the handler carries the request's
// id, pages and JSON endpoints alike, a refusal too.
func TestRequestIDHeader(t *testing.T) {
	p := newProvider(t)
	for _, u := range []string{
		p.issuer + "/.well-known/openid-configuration", p.issuer + "/account", p.issuer + "/login?request=nope",
		p.issuer + "/nothing-here", p.srv.URL + "/t/nobody/keys",
	} {
		r := get(t, http.DefaultClient, u)
		if id := r.header.Get("X-Request-Id"); !freshRequestID.MatchString(id) {
			t.Errorf("GET %s: %d, X-Request-Id %q, want a fresh id", u, r.status, id)
		}
	}
}

// TestSecondFactorSignInRecordedOnce: a sign-in at the hosted pages with
// a second factor writes exactly one sign_in.succeeded, when the request
// is completed, whose method says which code was given, with the client
// and the session.
func TestSecondFactorSignInRecordedOnce(t *testing.T) {
	for _, tt := range []struct {
		name   string
		code   func(p *provider, secret string, codes []string) string
		method string
	}{
		{"a TOTP code", func(p *provider, secret string, _ []string) string { return p.totpCode(secret) }, "password+totp"},
		{"a recovery code", func(_ *provider, _ string, codes []string) string { return codes[0] }, "recovery_code"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t)
			secret, codes := p.enrol(p.ada.ID)
			c := p.browser()
			page := p.codeStep(c)
			p.codeFrom(p.postCode(c, page, tt.code(p, secret, codes)), appURI)
			page2, err := p.ws.ListAuditRecords(t.Context(), &identity.AuditFilter{Action: string(identity.AuditSignInSucceeded)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			for _, r := range page2.Records {
				got = append(got, map[string]any{"method": r.Changes["method"].After, "clientId": r.Changes["clientId"].After})
			}
			want := []map[string]any{{"method": tt.method, "clientId": p.web.Client.ID}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sign_in.succeeded of one sign-in (-want +got):\n%s", diff)
			}
		})
	}
}
