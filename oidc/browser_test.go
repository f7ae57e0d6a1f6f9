package oidc_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/identitylib/identity/internal/browsertest"
)

// updateScreenshots rewrites the pages' screenshots in docs/.
var updateScreenshots = flag.Bool("update-screenshots", false, "write screenshots of the hosted pages to ../docs/pages/")

// browserWait bounds a browser test: a slow machine makes it slow, not
// fail.
const browserWait = 4 * time.Minute

// replay serves the page states under /replay/NAME from the provider's
// own origin, with the headers they were answered with (the CSP among
// them), so that the browser loads each page as it was shown, logos and
// all.
func replay(t *testing.T, p *provider, states []pageState) string {
	t.Helper()
	byName := map[string]reply{}
	for _, s := range states {
		byName[s.name] = s.page
	}
	mux, ok := p.srv.Config.Handler.(*http.ServeMux)
	if !ok {
		t.Fatal("the provider's server has no ServeMux")
	}
	mux.HandleFunc("/replay/", func(w http.ResponseWriter, r *http.Request) {
		page, ok := byName[strings.TrimPrefix(r.URL.Path, "/replay/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for k, vs := range page.header {
			if k != "Set-Cookie" && k != "Content-Length" && k != "Date" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(page.status)
		w.Write([]byte(page.body))
	})
	return p.srv.URL + "/replay/"
}

// screenshots are the page states docs/ shows: language, width, state.
var screenshots = []struct {
	lang  string
	width int64
	state string
}{
	{"en", 1280, "signin"},
	{"en", 390, "signin-wrong"},
	{"de", 1280, "signin"},
	{"en", 1280, "account-mfa-on"},
	{"en", 390, "recovery-codes"},
	{"de", 390, "enrol"},
	{"en", 1280, "logout-confirm"},
	{"en", 1280, "verify-done"},
}

// TestBrowserPages loads every page state in English and German, 1280
// and 390 px wide, with JavaScript on and off, in headless Chromium under
// the pages' own CSP: each shows its heading without a horizontal scroll
// bar, and axe-core, injected through the DevTools protocol, finds no
// serious or critical violation.
func TestBrowserPages(t *testing.T) {
	browsertest.Chromium(t)
	axe := browsertest.AxeSource(t, "..")
	for _, lang := range []string{"en", "de"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			p := newProvider(t)
			states := pageStates(t, p, lang)
			base := replay(t, p, states)
			for _, javascript := range []bool{true, false} {
				t.Run(fmt.Sprintf("javascript=%v", javascript), func(t *testing.T) {
					t.Parallel()
					browsePages(t, lang, javascript, base, states, axe)
				})
			}
		})
	}
}

// browsePages loads the page states in a tab with JavaScript on or off,
// at each width, and checks each.
func browsePages(t *testing.T, lang string, javascript bool, base string, states []pageState, axe string) {
	t.Helper()
	ctx := browsertest.New(t, javascript, browserWait)
	for _, width := range []int64{1280, 390} {
		for _, s := range states {
			name := fmt.Sprintf("%dpx/%s", width, s.name)
			err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(base+s.name),
				chromedp.WaitVisible(chromedp.CSS("h1")))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if overflow {
				t.Errorf("%s: the page scrolls sideways", name)
			}
			violations, err := browsertest.RunAxe(ctx, axe, javascript)
			if err != nil {
				t.Fatalf("%s: axe-core: %v", name, err)
			}
			for _, v := range violations {
				t.Errorf("%s: %s", name, v)
			}
			if *updateScreenshots && javascript {
				writeScreenshot(t, ctx, lang, width, s.name)
			}
		}
	}
}

// writeScreenshot writes the page shown to docs/pages/ if docs shows it.
func writeScreenshot(t *testing.T, ctx context.Context, lang string, width int64, state string) {
	t.Helper()
	for _, s := range screenshots {
		if s.lang != lang || s.width != width || s.state != state {
			continue
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join("..", "docs", "pages")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%s-%d.png", state, lang, width)), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrowserFocus: after a wrong password the browser focuses the
// password, which is marked invalid and described by the message, with
// JavaScript on and off (the page uses autofocus, no script).
func TestBrowserFocus(t *testing.T) {
	browsertest.Chromium(t)
	p := newProvider(t)
	for _, javascript := range []bool{true, false} {
		t.Run(fmt.Sprintf("javascript=%v", javascript), func(t *testing.T) {
			ctx := browsertest.New(t, javascript, browserWait)
			c := p.browser()
			err := chromedp.Do(ctx, chromedp.Navigate(p.authorize(c, p.authParams(nil)).location()), chromedp.WaitVisible(chromedp.ID("login")))
			if err != nil {
				t.Fatal(err)
			}
			focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`))
			if err != nil || focused != "login" {
				t.Errorf("the empty form focuses %q (%v), want login", focused, err)
			}
			err = chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("login"), "ada"), chromedp.SendKeys(chromedp.ID("password"), "wrong password"),
				chromedp.Submit(chromedp.ID("password")), chromedp.WaitVisible(chromedp.CSS(".field-error")))
			if err != nil {
				t.Fatal(err)
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.activeElement.id,
				document.activeElement.getAttribute("aria-invalid"),
				document.getElementById(document.activeElement.getAttribute("aria-describedby")).textContent]`))
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"password", "true", "The username, email or password is not right."}; strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("after a wrong password: %q, want %q", got, want)
			}
		})
	}
}
