package main

import (
	"context"
	"flag"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"
	"golang.org/x/oauth2"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/browsertest"
)

// updateScreenshot rewrites the screenshot of the sign-in page that
// docs/oidc.md shows.
var updateScreenshot = flag.Bool("update-screenshot", false, "write the sign-in page's screenshot to docs/signin.png")

// TestBrowserSignIn drives the hosted sign-in page with headless
// Chromium, with JavaScript on and off: the page renders with the
// workspace and the client's name, a wrong password shows the generic
// error, and a right one signs in and goes back to the client with a
// code.
func TestBrowserSignIn(t *testing.T) {
	skipShort(t)
	browsertest.Chromium(t)
	db, key := newDB(t)
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!doctype html><title>back</title><p id=code>%s</p><p id=state>%s</p>",
			html.EscapeString(r.URL.Query().Get("code")), html.EscapeString(r.URL.Query().Get("state")))
	}))
	t.Cleanup(callback.Close)
	id, _ := createClient(t, db, "-redirect-uri", callback.URL+"/cb", "-name", "Example App")
	p := startServe(t, db)
	createUser(t, p.base, key, "ada")
	for _, javascript := range []bool{true, false} {
		t.Run(fmt.Sprintf("javascript=%v", javascript), func(t *testing.T) {
			ctx := browsertest.New(t, javascript, procWait, chromedp.WindowSize(800, 700))
			f := newFlow(1)
			authURL := p.base + "/t/acme/authorize?" + url.Values{
				"client_id": {id}, "redirect_uri": {callback.URL + "/cb"}, "response_type": {"code"}, "scope": {"openid profile"},
				"state": {f.state}, "nonce": {f.nonce}, "code_challenge": {oauth2.S256ChallengeFromVerifier(f.verifier)},
				"code_challenge_method": {"S256"},
			}.Encode()
			if err := chromedp.Do(ctx, chromedp.Navigate(authURL), chromedp.WaitVisible(passwordField)); err != nil {
				t.Fatalf("loading the sign-in page: %v", err)
			}
			text := bodyText(t, ctx)
			if !strings.Contains(strings.ToLower(text), "acme") || !strings.Contains(text, "Example App") {
				t.Errorf("the sign-in page does not show the workspace and the client:\n%s", text)
			}
			if *updateScreenshot && javascript {
				png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join("..", "..", "docs", "signin.png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			err := chromedp.Do(ctx,
				chromedp.SendKeys(loginField, "ada"),
				chromedp.SendKeys(passwordField, "wrong password!"),
				chromedp.Submit(passwordField),
				chromedp.WaitVisible(chromedp.CSS(`.error`)),
			)
			if err != nil {
				t.Fatalf("submitting a wrong password: %v", err)
			}
			if text := bodyText(t, ctx); !strings.Contains(text, "not right") {
				t.Errorf("after a wrong password the page does not show the generic error:\n%s", text)
			}

			err = chromedp.Do(ctx,
				chromedp.Clear(loginField),
				chromedp.SendKeys(loginField, "ada@example.com"),
				chromedp.SendKeys(passwordField, "correct horse battery"),
				chromedp.Submit(passwordField),
				chromedp.WaitVisible(chromedp.ID("code")),
			)
			if err != nil {
				t.Fatalf("signing in: %v", err)
			}
			code, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("code")))
			if err != nil {
				t.Fatal(err)
			}
			state, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("state")))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(code, "idac_") || state != f.state {
				t.Errorf("back at the client with code %q and state %q; want a code and state %q", code, state, f.state)
			}
		})
	}
}

// TestBrowserSignInSecondFactor signs a user with a TOTP factor in
// through identityd with headless Chromium, without JavaScript: the
// password, the code step with a code of the authenticator's key, and
// back at the client with a code.
func TestBrowserSignInSecondFactor(t *testing.T) {
	skipShort(t)
	browsertest.Chromium(t)
	db, _ := newDB(t)
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!doctype html><title>back</title><p id=returned>%s</p><p id=state>%s</p>",
			html.EscapeString(r.URL.Query().Get("code")), html.EscapeString(r.URL.Query().Get("state")))
	}))
	t.Cleanup(callback.Close)
	id, _ := createClient(t, db, "-redirect-uri", callback.URL+"/cb", "-name", "Example App")
	secret := enrolled(t, db, "ada")
	p := startServe(t, db)
	ctx := browsertest.New(t, false, procWait, chromedp.WindowSize(800, 700))
	f := newFlow(1)
	authURL := p.base + "/t/acme/authorize?" + url.Values{
		"client_id": {id}, "redirect_uri": {callback.URL + "/cb"}, "response_type": {"code"}, "scope": {"openid profile"},
		"state": {f.state}, "nonce": {f.nonce}, "code_challenge": {oauth2.S256ChallengeFromVerifier(f.verifier)},
		"code_challenge_method": {"S256"},
	}.Encode()
	err := chromedp.Do(ctx,
		chromedp.Navigate(authURL),
		chromedp.WaitVisible(passwordField),
		chromedp.SendKeys(loginField, "ada"),
		chromedp.SendKeys(passwordField, "correct horse battery"),
		chromedp.Submit(passwordField),
		chromedp.WaitVisible(codeField),
	)
	if err != nil {
		t.Fatalf("signing in with the password: %v", err)
	}
	if text := bodyText(t, ctx); !strings.Contains(text, "Two-step verification") || !strings.Contains(text, "Example App") {
		t.Errorf("the code step does not show itself and the client:\n%s", text)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(codeField, currentCode(t, secret)),
		chromedp.Submit(codeField),
		chromedp.WaitVisible(chromedp.ID("returned")),
	)
	if err != nil {
		t.Fatalf("giving the code: %v", err)
	}
	code, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("returned")))
	if err != nil {
		t.Fatal(err)
	}
	state, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("state")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(code, "idac_") || state != f.state {
		t.Errorf("back at the client with code %q and state %q; want a code and state %q", code, state, f.state)
	}
}

// enrolled creates the user (password "correct horse battery") with a
// confirmed TOTP factor, before serve holds the database, and returns the
// factor's key. The enrolment takes the code of the previous 30-second
// step, so that the current code is new to the factor.
func enrolled(t *testing.T, db, name string) (secret string) {
	t.Helper()
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		u, err := ws.CreateUser(ctx, identity.NewUser{Username: name, Email: name + "@example.com", FullName: "User " + name, Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		e, err := ws.BeginTOTPEnrollment(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		code, err := totp.GenerateCode(e.Secret, time.Now().Add(-30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ws.ConfirmTOTPEnrollment(ctx, u.ID, code); err != nil {
			t.Fatal(err)
		}
		secret = e.Secret
	})
	return secret
}

// currentCode is the TOTP code of the key now, as an authenticator app
// shows it; the key may be written in groups.
func currentCode(t *testing.T, secret string) string {
	t.Helper()
	code, err := totp.GenerateCode(strings.ReplaceAll(secret, " ", ""), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// bodyText returns the text of the page's body.
func bodyText(t *testing.T, ctx context.Context) string {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// passwordField and loginField select the sign-in form's fields: the
// password, and the username-or-email; codeField the second factor's.
const (
	codeField     = chromedp.ID("code")
	passwordField = chromedp.CSS(`input[type="password"]`)
	loginField    = chromedp.CSS(`form input:not([type="hidden"]):not([type="password"]):not([type="submit"])`)
)
