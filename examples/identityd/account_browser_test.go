package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/identitylib/identity/internal/browsertest"
)

// TestBrowserAccountEnrol enrols a TOTP factor on identityd's account
// page with headless Chromium: sign in, set up an authenticator app (the
// QR code loads: the page's CSP lets its data: image in), type the code
// of the key the page shows, see the ten recovery codes, and the account
// then says the factor is on.
func TestBrowserAccountEnrol(t *testing.T) {
	skipShort(t)
	browsertest.Chromium(t)
	db, key := newDB(t)
	p := startServe(t, db)
	createUser(t, p.base, key, "ada")
	// JavaScript on, for the check of the image; the pages have none.
	ctx := browsertest.New(t, true, procWait, chromedp.WindowSize(800, 700))
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.base+"/t/acme/account"),
		chromedp.WaitVisible(passwordField),
		chromedp.SendKeys(loginField, "ada"),
		chromedp.SendKeys(passwordField, "correct horse battery"),
		chromedp.Submit(passwordField),
		chromedp.WaitVisible(chromedp.ID("mfa")),
		chromedp.Click(chromedp.CSS("#mfa button")),
		chromedp.WaitVisible(chromedp.ID("secret")),
	)
	if err != nil {
		t.Fatalf("signing in and setting up: %v", err)
	}
	loaded, err := chromedp.Run(ctx, chromedp.Poll[int](`document.querySelector("img.qr").complete && document.querySelector("img.qr").naturalWidth + 1`))
	if err != nil || loaded != 256+1 {
		t.Errorf("the QR code image: naturalWidth+1 = %d, %v; want 257 (a 256-pixel image that loaded)", loaded, err)
	}
	secret, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("secret")))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(codeField, currentCode(t, secret)),
		chromedp.Submit(codeField),
		chromedp.WaitVisible(chromedp.ID("recovery-codes")),
	)
	if err != nil {
		t.Fatalf("giving the first code: %v", err)
	}
	codes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll("#recovery-codes li")))
	if err != nil || len(codes) != 10 {
		t.Fatalf("%d recovery codes shown (%v), want 10:\n%s", len(codes), err, bodyText(t, ctx))
	}
	// Continue needs the box that says the codes are saved.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("saved")),
		chromedp.Submit(chromedp.ID("saved")),
		chromedp.WaitVisible(chromedp.ID("codes-left")),
	)
	if err != nil {
		t.Fatalf("back to the account: %v", err)
	}
	if text := bodyText(t, ctx); !strings.Contains(text, "On since") || !strings.Contains(text, "Recovery codes left: 10") {
		t.Errorf("the account after enrolling:\n%s", text)
	}
}
