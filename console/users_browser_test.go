package console_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/internal/browsertest"
)

// The relying party of the browser journeys: a public client of acme.
const (
	rpRedirect = "https://app.example/cb"
	// rpVerifier's SHA-256 is rpChallenge (docs/oidc.md's pair).
	rpVerifier  = "quickstart-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"
	rpChallenge = "xkMIRQUMyRRobE2PaoNqwyb1nNwbWHPKr2E5BDi5KFg"
)

// tokenAnswer is what the token endpoint answered.
type tokenAnswer struct {
	status int
	body   map[string]any
}

// claims returns the claims of a JWT of the answer ("access_token",
// "id_token").

// The users pages docs/console/ shows.
func init() {
	for _, state := range []string{"users-search", "user", "users-bulk-confirm"} {
		screenshotStates[state] = true
	}
}

func (a tokenAnswer) claims(t *testing.T, name string) map[string]any {
	t.Helper()
	tok, _ := a.body[name].(string)
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%s is no JWT: %q", name, tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// token posts a form to acme's token endpoint over HTTP.
func (e *env) token(form url.Values) tokenAnswer {
	e.t.Helper()
	resp, err := http.PostForm(e.srv.URL+"/t/acme/token", form)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		e.t.Fatal(err)
	}
	return tokenAnswer{resp.StatusCode, body}
}

// userSignIn signs the user in to the client through the provider's
// hosted sign-in over HTTP (authorization code with PKCE) and returns the
// token endpoint's answer.
func (e *env) userSignIn(clientID, login, password, scope string) tokenAnswer {
	e.t.Helper()
	b := e.browser()
	q := url.Values{"client_id": {clientID}, "redirect_uri": {rpRedirect}, "response_type": {"code"}, "scope": {scope},
		"state": {"xyz"}, "code_challenge": {rpChallenge}, "code_challenge_method": {"S256"}}
	r := b.get(e.srv.URL + "/t/acme/authorize?" + q.Encode())
	r = e.follow(b, r)
	r = e.submitForm(b, r, map[string]string{"login": login, "password": password})
	for i := 0; i < 5 && !strings.HasPrefix(r.location(), rpRedirect); i++ {
		r = e.follow(b, r)
	}
	back, err := url.Parse(r.location())
	if err != nil || !strings.HasPrefix(r.location(), rpRedirect) || back.Query().Get("code") == "" {
		e.t.Fatalf("the sign-in did not come back with a code: %d %q", r.status, r.location())
	}
	a := e.token(url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {back.Query().Get("code")},
		"redirect_uri": {rpRedirect}, "code_verifier": {rpVerifier}})
	if a.status != http.StatusOK {
		e.t.Fatalf("code exchange: %d %v", a.status, a.body)
	}
	return a
}

// operatorCookie makes an operator with the roles, as e.operator does,
// and sets their console session's cookie in the browser.
func (e *env) operatorCookie(ctx context.Context, username string, roles ...string) {
	e.t.Helper()
	b := e.operator(username, roles...)
	base, _ := url.Parse(e.url(""))
	var secret string
	for _, c := range b.c.Jar.Cookies(base) {
		if c.Name == "identity_console" {
			secret = c.Value
		}
	}
	_, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: "identity_console", Value: secret,
		URL: e.url(""), Path: e.base, HTTPOnly: new(true), SameSite: network.CookieSameSiteStrict})
	if err != nil {
		e.t.Fatal(err)
	}
}

// waitFor waits until the expression is true in the page, loaded whole
// (chromedp has then seen the new document, and a query that follows
// finds its nodes, not the last page's).
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && (`+expr+`)`))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("%s: waited in vain for %s (%v); the page says:\n%s", what, expr, err, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// noticeIs is the expression true when the page's notice holds text.
func noticeIs(text string) string {
	return fmt.Sprintf(`(document.querySelector(".message.notice p") || {}).textContent === %q`, text)
}

// TestBrowserUsers walks the users pages' journeys in headless Chromium,
// with JavaScript on and off, among 100,000 users: find a user by the
// prefix search, add them to a group and see groups in the next token,
// revoke their session and see their refresh token refused, disable and
// enable them, unlock a locked user and reset their second factor, act
// on a selection in bulk, delete a user and see the username free. On
// every page state, at 1280 and 390 px, axe-core finds no serious or
// critical violation.
func TestBrowserUsers(t *testing.T) {
	browsertest.Chromium(t)
	axe := browsertest.AxeSource(t, "..")
	e := newEnvFrom(t, "/console/", nil, time.Now().Truncate(time.Second))
	ctx := t.Context()
	ws := e.workspace("acme")
	start := time.Now()
	e.importUsers(ws, "p", 100_000, nil)
	t.Logf("100,000 users imported in %v", time.Since(start).Round(time.Millisecond))
	client, err := ws.CreateClient(ctx, identity.NewClient{Name: "App", Public: true, RedirectURIs: []string{rpRedirect}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.CreateGroup(ctx, identity.NewGroup{Name: "staff"}); err != nil {
		t.Fatal(err)
	}
	for _, javascript := range []bool{true, false} {
		t.Run(fmt.Sprintf("javascript=%v", javascript), func(t *testing.T) {
			suffix := map[bool]string{true: "on", false: "off"}[javascript]
			newUser := func(name string) identity.User {
				u, err := ws.CreateUser(ctx, identity.NewUser{Username: name, Email: name + "@example.com", FullName: "User " + name, Password: "correct horse battery"})
				if err != nil {
					t.Fatal(err)
				}
				return u
			}
			ada, lena, gone := newUser("ada-"+suffix), newUser("lena-"+suffix), newUser("gone-"+suffix)
			// lena: a second factor, then locked by wrong passwords.
			en, err := ws.BeginTOTPEnrollment(ctx, lena.ID)
			if err != nil {
				t.Fatal(err)
			}
			code, _ := totp.GenerateCode(en.Secret, e.clock.Now())
			if _, err := ws.ConfirmTOTPEnrollment(ctx, lena.ID, code); err != nil {
				t.Fatal(err)
			}
			for range identity.DefaultLockoutThreshold {
				ws.Authenticate(ctx, lena.Username, "wrong password")
			}
			// ada signs in to the app, asking for her groups.
			signin := e.userSignIn(client.Client.ID, ada.Username, "correct horse battery", "openid profile groups")
			if got := fmt.Sprint(signin.claims(t, "access_token")["groups"]); got != "[]" {
				t.Errorf("groups of the first access token: %s, want []", got)
			}

			bctx := browsertest.New(t, javascript, browserWait)
			e.operatorCookie(bctx, "op-"+suffix, console.RoleAdmin)
			check := func(state, title string) {
				t.Helper()
				checkPage(t, bctx, axe, javascript, state, title, *updateScreenshots && javascript)
			}
			run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				if err := chromedp.Do(bctx, actions...); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			// confirm says yes in the dialog a data-confirm form opens with
			// JavaScript (without, the form goes straight).
			confirm := func(what string) {
				t.Helper()
				if javascript {
					run(what+": the dialog", chromedp.WaitVisible(chromedp.ID("confirm-yes")), chromedp.Click(chromedp.ID("confirm-yes")))
				}
			}
			userLink := func(name string) string {
				return fmt.Sprintf(`document.querySelector('#users-results th a') && document.querySelector('#users-results th a').textContent === %q`, name)
			}

			// Find ada among 100,000 by the start of her name: as she types
			// with JavaScript, by the button without.
			run("users page", chromedp.Navigate(e.url("workspaces/acme/users")), chromedp.WaitVisible(chromedp.ID("q")))
			waitFor(t, bctx, "the first page", `document.querySelector("#results-heading").textContent.startsWith("Users 1–50 of 1000")`)
			check("users", "Users")
			run("search", chromedp.SendKeys(chromedp.ID("q"), "ada-"+suffix))
			if !javascript {
				run("search by the button", chromedp.Submit(chromedp.ID("q")))
			}
			waitFor(t, bctx, "the search", userLink(ada.Username))
			check("users-search", "Users")
			run("user page", chromedp.Click(chromedp.CSS("#users-results th a")), chromedp.WaitVisible(chromedp.ID("groups-heading")))
			check("user", "User "+ada.Username)

			// Add her to staff by the group search: the next token says so.
			run("group search", chromedp.SendKeys(chromedp.ID("groupq"), "sta"), chromedp.Submit(chromedp.ID("groupq")))
			waitFor(t, bctx, "the group search", `!!document.querySelector('form[action$="/groups"] button')`)
			check("user-group-search", "User "+ada.Username)
			run("add to staff", chromedp.Click(chromedp.CSS(`form[action$="/groups"] button`)))
			waitFor(t, bctx, "added", noticeIs("Added to group staff."))
			refreshed := e.token(url.Values{"grant_type": {"refresh_token"}, "client_id": {client.Client.ID}, "refresh_token": {signin.body["refresh_token"].(string)}})
			if refreshed.status != http.StatusOK {
				t.Fatalf("refresh: %d %v", refreshed.status, refreshed.body)
			}
			if got := fmt.Sprint(refreshed.claims(t, "access_token")["groups"]); got != "[staff]" {
				t.Errorf("groups of the next access token: %s, want [staff]", got)
			}

			// Revoke her session: her refresh token is refused.
			run("revoke the session", chromedp.Click(chromedp.CSS(`form[action*="/sessions/"][action$="/revoke"]:not([action$="/sessions/revoke"]) button`)))
			confirm("revoke the session")
			waitFor(t, bctx, "revoked", noticeIs("Session revoked."))
			check("user-session-revoked", "User "+ada.Username)
			refused := e.token(url.Values{"grant_type": {"refresh_token"}, "client_id": {client.Client.ID}, "refresh_token": {refreshed.body["refresh_token"].(string)}})
			if refused.status != http.StatusBadRequest || refused.body["error"] != "invalid_grant" {
				t.Errorf("refresh after the revocation: %d %v, want 400 invalid_grant", refused.status, refused.body)
			}

			// Disable and enable her.
			run("disable", chromedp.Click(chromedp.CSS(`form[action$="/disable"] button`)))
			confirm("disable")
			waitFor(t, bctx, "disabled", noticeIs("User disabled: their sessions and tokens are revoked."))
			check("user-disabled", "User "+ada.Username)
			run("enable", chromedp.Click(chromedp.CSS(`form[action$="/enable"] button`)))
			waitFor(t, bctx, "enabled", noticeIs("User enabled."))
			if u, _ := ws.GetUser(ctx, ada.ID); !u.Enabled {
				t.Error("ada is not enabled again")
			}

			// A refused form: an unknown role, next to its field.
			run("unknown role", chromedp.SendKeys(chromedp.ID("role"), "nobody"), chromedp.Submit(chromedp.ID("role")))
			waitFor(t, bctx, "the role's error", `!!document.getElementById("role-error")`)
			check("user-role-error", "User "+ada.Username)
			run("the user's trail", chromedp.Navigate(e.userPage("acme", ada.ID, "/audit")), chromedp.WaitVisible(chromedp.CSS("table")))
			check("user-audit", "Audit trail of "+ada.Username)

			// lena: unlock, reset the second factor.
			run("lena's page", chromedp.Navigate(e.userPage("acme", lena.ID, "")), chromedp.WaitVisible(chromedp.CSS(`form[action$="/unlock"]`)))
			check("user-locked", "User "+lena.Username)
			run("unlock", chromedp.Click(chromedp.CSS(`form[action$="/unlock"] button`)))
			waitFor(t, bctx, "unlocked", noticeIs("Account unlocked."))
			run("reset the second factor", chromedp.Click(chromedp.CSS(`form[action$="/mfa/reset"] button`)))
			confirm("reset the second factor")
			waitFor(t, bctx, "reset", noticeIs("Second factor reset: the user enrols again at their next sign-in if the workspace requires one."))
			if st, _ := ws.GetLockState(ctx, lena.ID); st.Locked {
				t.Error("lena is still locked")
			}
			if st, _ := ws.GetMFAStatus(ctx, lena.ID); st.Enabled {
				t.Error("lena still has a second factor")
			}

			// Bulk: disable a selection of two, confirmed.
			run("a search for the selection", chromedp.Navigate(e.url("workspaces/acme/users?q=lena-"+suffix)), chromedp.WaitVisible(chromedp.ID("bulk-action")))
			run("select", chromedp.Click(chromedp.ID("select-"+strconv.FormatInt(lena.ID, 10))),
				chromedp.Click(chromedp.CSS(`.bulk button`)), chromedp.WaitReady(chromedp.CSS(`input[name=confirm]`)))
			check("users-bulk-confirm", "Disable users")
			run("confirm", chromedp.Click(chromedp.CSS(`main form button[type=submit]`)))
			waitFor(t, bctx, "bulk done", noticeIs("1 users disabled."))
			check("users-bulk-done", "Disable users: done")
			run("the disabled", chromedp.Navigate(e.url("workspaces/acme/users?disabled=1")), chromedp.WaitVisible(chromedp.ID("results-heading")))
			check("users-scan", "Users")

			// Delete gone for good: the username is free.
			run("delete page", chromedp.Navigate(e.userPage("acme", gone.ID, "/delete")), chromedp.WaitVisible(chromedp.ID("confirm")))
			check("user-delete", "Delete user "+gone.Username)
			run("delete", chromedp.SendKeys(chromedp.ID("confirm"), gone.Username), chromedp.Submit(chromedp.ID("confirm")))
			waitFor(t, bctx, "deleted", noticeIs("User "+gone.Username+" deleted permanently; the username is free."))
			check("users-deleted", "Users")
			if _, err := ws.CreateUser(ctx, identity.NewUser{Username: gone.Username, Email: gone.Email, FullName: "Again", Password: "correct horse battery"}); err != nil {
				t.Errorf("the username is not free: %v", err)
			}
		})
	}
}
