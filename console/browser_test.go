package console_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/internal/browsertest"
)

// updateScreenshots rewrites the console's screenshots in docs/console/.
var updateScreenshots = flag.Bool("update-screenshots", false, "write screenshots of the console's pages to ../docs/console/")

// screenshotStates are the page states docs/console/ shows.
var screenshotStates = map[string]bool{"setup": true, "dashboard": true, "workspaces": true, "workspace-delete": true}

// browserWait bounds a browser test: a slow machine makes it slow, not
// fail.
const browserWait = 4 * time.Minute

// TestBrowserFirstRun walks the first run in headless Chromium, with
// JavaScript on and off, under /console/ and /admin/: the setup link, the
// setup page, the provider's sign-in with the second factor's
// enrolment, the dashboard, the workspaces page and its form's errors,
// the confirmation of a deletion and an error page. On every page state
// of the console, at 1280 and 390 px, the heading shows, nothing scrolls
// sideways, and axe-core finds no serious or critical violation.
func TestBrowserFirstRun(t *testing.T) {
	browsertest.Chromium(t)
	axe := browsertest.AxeSource(t, "..")
	for _, tt := range []struct {
		base       string
		javascript bool
	}{
		{"/console/", true},
		{"/console/", false},
		{"/admin/", true},
	} {
		t.Run(fmt.Sprintf("%s javascript=%v", strings.Trim(tt.base, "/"), tt.javascript), func(t *testing.T) {
			e := newEnvFrom(t, tt.base, nil, time.Now().Truncate(time.Second))
			e.workspace("acme")
			link, err := e.console.Invite(t.Context(), "", console.RoleAdmin) // the first operator, named admin until they choose
			if err != nil {
				t.Fatal(err)
			}
			ctx := browsertest.New(t, tt.javascript, browserWait)
			shots := *updateScreenshots && tt.javascript && tt.base == "/console/"
			check := func(state, title string) {
				t.Helper()
				checkPage(t, ctx, axe, tt.javascript, state, title, shots)
			}
			run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				if err := chromedp.Do(ctx, actions...); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}

			run("setup page", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("password")))
			check("setup", "Set up your operator account")
			run("setup with different passwords", chromedp.SendKeys(chromedp.ID("email"), "admin@example.com"),
				chromedp.SendKeys(chromedp.ID("password"), "analytical engine"), chromedp.SendKeys(chromedp.ID("password2"), "analytical engin"),
				chromedp.Submit(chromedp.ID("password2")), chromedp.WaitVisible(chromedp.ID("password2-error")))
			check("setup-invalid", "Set up your operator account")
			run("setup", chromedp.SendKeys(chromedp.ID("password"), "analytical engine"), chromedp.SendKeys(chromedp.ID("password2"), "analytical engine"),
				chromedp.Submit(chromedp.ID("password2")), chromedp.WaitVisible(chromedp.CSS("a.button")))
			check("setup-done", "Your account is ready")

			// The provider's pages: sign-in, enrolment, recovery codes.
			run("sign-in", chromedp.Click(chromedp.CSS("a.button")), chromedp.WaitVisible(chromedp.ID("login")),
				chromedp.SendKeys(chromedp.ID("login"), "admin"), chromedp.SendKeys(chromedp.ID("password"), "analytical engine"),
				chromedp.Submit(chromedp.ID("password")), chromedp.WaitVisible(chromedp.ID("secret")))
			secret, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("secret").textContent`))
			if err != nil {
				t.Fatal(err)
			}
			code, err := totp.GenerateCode(strings.ReplaceAll(secret, " ", ""), e.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			run("enrolment", chromedp.SendKeys(chromedp.ID("code"), code), chromedp.Submit(chromedp.ID("code")),
				chromedp.WaitVisible(chromedp.ID("saved")), chromedp.Click(chromedp.ID("saved")), chromedp.Submit(chromedp.ID("saved")),
				chromedp.WaitVisible(chromedp.CSS(".cards")))
			check("dashboard", "Dashboard")
			// The keyboard: the first Tab reaches the skip link, which takes
			// the focus to the page's main content.
			run("keyboard", chromedp.KeyEvent(kb.Tab))
			if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.className`)); got != "skip" {
				t.Errorf("the first Tab focuses %q, want the skip link", got)
			}
			run("skip link", chromedp.KeyEvent(kb.Enter))
			if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`)); got != "main" {
				t.Errorf("the skip link focuses %q, want main", got)
			}

			run("workspaces", chromedp.Click(chromedp.CSS(`nav.side a[href$="workspaces"]`)), chromedp.WaitVisible(chromedp.ID("slug")))
			check("workspaces", "Workspaces")
			run("bad slug", chromedp.SendKeys(chromedp.ID("slug"), "Not A Slug"), chromedp.Submit(chromedp.ID("slug")),
				chromedp.WaitVisible(chromedp.ID("slug-error")))
			check("workspaces-invalid", "Workspaces")
			run("delete confirmation", chromedp.Click(chromedp.CSS(`a.danger-link`)), chromedp.WaitVisible(chromedp.ID("confirm")))
			check("workspace-delete", "Delete workspace acme")
			run("not found", chromedp.Navigate(e.url("nothing-here")), chromedp.WaitVisible(chromedp.CSS("h1")))
			check("not-found", "Not found")
			if _, err := e.svc.GetWorkspace(t.Context(), "acme"); err != nil {
				t.Errorf("acme: %v", err)
			}
		})
	}
}

// checkPage checks the page shown: its heading, no sideways scrolling at
// 1280 and 390 px, and no serious or critical axe-core violation.
// With shots, it writes a screenshot at each width to docs/console/.
func checkPage(t *testing.T, ctx context.Context, axe string, javascript bool, state, title string, shots bool) {
	t.Helper()
	h1, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("h1").textContent`))
	if err != nil || h1 != title {
		t.Errorf("%s: heading %q (%v), want %q", state, h1, err, title)
	}
	for _, width := range []int64{1280, 390} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if overflow {
			t.Errorf("%s at %d px: the page scrolls sideways", state, width)
		}
		violations, err := browsertest.RunAxe(ctx, axe, javascript)
		if err != nil {
			t.Fatalf("%s: axe-core: %v", state, err)
		}
		for _, v := range violations {
			t.Errorf("%s at %d px: %s", state, width, v)
		}
		if shots && screenshotStates[state] {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("..", "docs", "console")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", state, width)), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
