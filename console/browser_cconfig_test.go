package console_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/internal/browsertest"
)

// byID selects the element with the id, which may hold dots (the
// settings' inputs are named by the library's fields:
// "passwordPolicy.minLength").

// The configuration pages docs/console/ shows.
func init() {
	for _, state := range []string{"settings", "settings-preview", "groups", "group-member", "roles", "mappers"} {
		screenshotStates[state] = true
	}
}

func byID(id string) chromedp.CSS { return chromedp.CSS(`[id="` + id + `"]`) }

// TestBrowserConfig walks the configuration pages of a workspace in
// headless Chromium, with JavaScript on and off, in three journeys: the
// password policy with a bad value shown next to its input, then saved,
// a test email and the branding's preview; a group created, a member
// found and added, a role given, and the roles' pages; a mapper with a
// reserved claim name refused next to its input, the confirmations of
// deletions, and a viewer's pages without a form that writes. axe-core
// finds no serious or critical violation on any page state, at 1280 and
// 390 px, and nothing scrolls sideways.
func TestBrowserConfig(t *testing.T) {
	browsertest.Chromium(t)
	axe := browsertest.AxeSource(t, "..")
	// Each journey has a browser of its own, within browserWait.
	journeys := map[string]func(t *testing.T, j *configJourney){
		"settings": func(t *testing.T, j *configJourney) {
			e, bctx, check, run := j.e, j.bctx, j.check, j.run
			// Settings: a bad value, then a good one.
			run("settings", chromedp.Navigate(e.url("workspaces/acme/settings")), chromedp.WaitVisible(byID("passwordPolicy.minLength")))
			check("settings", "Settings of acme")
			run("bad minimum", chromedp.SetValue(byID("passwordPolicy.minLength"), "2"), chromedp.Submit(byID("passwordPolicy.minLength")),
				chromedp.WaitVisible(byID("passwordPolicy.minLength-error")))
			msg, err := chromedp.Run(bctx, chromedp.Text(byID("passwordPolicy.minLength-error")))
			if err != nil || msg != "must be at least 4" {
				t.Errorf("the error next to the minimum: %q (%v)", msg, err)
			}
			check("settings-invalid", "Settings of acme")
			run("good minimum", chromedp.SetValue(byID("passwordPolicy.minLength"), "12"), chromedp.Submit(byID("passwordPolicy.minLength")),
				chromedp.WaitVisible(chromedp.CSS(".message.notice")))
			if got := e.settings("acme").PasswordPolicy.MinLength; got != 12 {
				t.Errorf("minimum length %d, want 12", got)
			}
			run("test email", chromedp.SendKeys(chromedp.ID("to"), "admin@example.com"), chromedp.Submit(chromedp.ID("to")),
				chromedp.WaitVisible(chromedp.CSS(".message.notice")))
			check("settings-test-email", "Settings of acme")
			run("preview", chromedp.SetValue(byID("branding.displayName"), "Acme Corp"), chromedp.SetValue(byID("branding.accentColor"), "#7a1f1f"),
				chromedp.Click(chromedp.CSS(`button.secondary`)), chromedp.WaitVisible(chromedp.CSS(`.message.notice`)))
			// The preview's style sheet loads after the page's.
			var accent string
			for deadline := time.Now().Add(browserWait); accent != "rgb(122, 31, 31)" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				accent, err = chromedp.Run(bctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".sp-button")).backgroundColor`))
			}
			if err != nil || accent != "rgb(122, 31, 31)" {
				t.Errorf("the preview's button: %q (%v)", accent, err)
			}
			check("settings-preview", "Settings of acme")
			if strings.Contains(e.settings("acme").Branding.DisplayName, "Acme") {
				t.Error("the preview saved the branding")
			}
		},
		"groups": func(t *testing.T, j *configJourney) {
			e, ws, ctx, check, run, alice := j.e, j.ws, t.Context(), j.check, j.run, j.alice
			// A group: created, a member added, a role given.
			run("groups", chromedp.Navigate(e.url("workspaces/acme/groups")), chromedp.WaitVisible(chromedp.ID("name")))
			check("groups-empty", "Groups of acme")
			run("create group", chromedp.SendKeys(chromedp.ID("name"), "eng"), chromedp.Submit(chromedp.ID("name")),
				chromedp.WaitVisible(chromedp.ID("member")))
			check("group", "Group eng")
			run("find alice", chromedp.SendKeys(chromedp.ID("member"), "ali"))
			if !j.javascript { // with JavaScript, the search sends itself
				run("send the search", chromedp.Submit(chromedp.ID("member")))
			}
			run("add alice", chromedp.WaitVisible(chromedp.CSS(`form[action$="/members"] button`)))
			check("group-search", "Group eng")
			run("add alice", chromedp.Click(chromedp.CSS(`form[action$="/members"] button`)), chromedp.WaitVisible(chromedp.CSS(".message.notice")))
			check("group-member", "Group eng")
			run("unknown role", chromedp.SendKeys(chromedp.ID("role"), "nope"), chromedp.Submit(chromedp.ID("role")),
				chromedp.WaitVisible(chromedp.ID("role-error")))
			check("group-invalid", "Group eng")
			run("give role", chromedp.SetValue(chromedp.ID("role"), "deploy"), chromedp.Submit(chromedp.ID("role")),
				chromedp.WaitVisible(chromedp.CSS(`ul.plain a[href$="/roles/1"]`)))
			roles, err := ws.ListUserRoles(ctx, alice.ID)
			if err != nil || len(roles) != 1 || roles[0].Name != "deploy" {
				t.Errorf("alice's roles: %+v (%v)", roles, err)
			}
			run("group list", chromedp.Navigate(e.url("workspaces/acme/groups")), chromedp.WaitVisible(chromedp.CSS("table")))
			check("groups", "Groups of acme")
			run("roles", chromedp.Navigate(e.url("workspaces/acme/roles")), chromedp.WaitVisible(chromedp.CSS("table")))
			check("roles", "Roles of acme")
			run("role", chromedp.Click(chromedp.CSS(`table a`)), chromedp.WaitVisible(chromedp.ID("holders-heading")))
			check("role", "Role deploy")
			run("role delete", chromedp.Click(chromedp.CSS(`a.danger-link`)), chromedp.WaitVisible(chromedp.CSS("button.danger")))
			check("role-delete", "Delete role deploy")

		},
		"mappers": func(t *testing.T, j *configJourney) {
			e, ws, ctx, bctx, check, run, signIn, viewer := j.e, j.ws, t.Context(), j.bctx, j.check, j.run, j.signIn, j.viewer
			if _, err := ws.CreateGroup(ctx, identity.NewGroup{Name: "eng"}); err != nil {
				t.Fatal(err)
			}
			// Mappers: a reserved claim name.
			run("mappers", chromedp.Navigate(e.url("workspaces/acme/mappers")), chromedp.WaitVisible(chromedp.ID("attributeKey")))
			check("mappers", "Claim mappers of acme")
			run("reserved name", chromedp.SendKeys(chromedp.ID("attributeKey"), "level"), chromedp.SendKeys(chromedp.ID("claimName"), "sub"),
				chromedp.Submit(chromedp.ID("claimName")), chromedp.WaitVisible(chromedp.ID("claimName-error")))
			msg, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("claimName-error")))
			if err != nil || msg != `claim name "sub" is reserved` {
				t.Errorf("the error next to the claim name: %q (%v)", msg, err)
			}
			check("mappers-invalid", "Claim mappers of acme")
			run("mapper", chromedp.Navigate(e.url("workspaces/acme/mappers/edit?key=dept")), chromedp.WaitVisible(chromedp.ID("claimName")))
			check("mapper", "Mapper of attribute dept")
			run("mapper delete", chromedp.Click(chromedp.CSS(`a.danger-link`)), chromedp.WaitVisible(chromedp.CSS("button.danger")))
			check("mapper-delete", "Delete the mapper of attribute dept")

			// A viewer: the same pages, without a write control.
			signIn(viewer)
			for _, p := range []struct{ path, title string }{
				{"workspaces/acme/settings", "Settings of acme"},
				{"workspaces/acme/groups/1", "Group eng"},
				{"workspaces/acme/mappers", "Claim mappers of acme"},
			} {
				run(p.path, chromedp.Navigate(e.url(p.path)), chromedp.WaitVisible(chromedp.CSS("h1")))
				check("viewer "+p.path, p.title)
				n, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("main form[method=post]").length`))
				if err != nil || n != 0 {
					t.Errorf("viewer %s: %d POST forms (%v)", p.path, n, err)
				}
			}
		},
	}
	for _, name := range []string{"settings", "groups", "mappers"} {
		for _, javascript := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s javascript=%v", name, javascript), func(t *testing.T) {
				journeys[name](t, newConfigJourney(t, axe, javascript))
			})
		}
	}
}

// configJourney is a workspace acme (users alice and bob, a role deploy,
// a mapper of dept, SMTP settings) and a browser signed in to the console
// as an admin.
type configJourney struct {
	e      *env
	ws     *identity.Workspace
	alice  identity.User
	viewer *browser
	bctx   context.Context
	check  func(state, title string)
	run    func(what string, actions ...chromedp.Action[chromedp.Void])
	signIn func(b *browser)
	// javascript says whether the browser runs the pages' script.
	javascript bool
}

func newConfigJourney(t *testing.T, axe string, javascript bool) *configJourney {
	e := newEnvFrom(t, "/console/", nil, time.Now().Truncate(time.Second))
	ws := e.workspace("acme")
	ctx := t.Context()
	alice := e.user(ws, "alice")
	e.user(ws, "bob")
	if _, err := ws.CreateRole(ctx, identity.NewRole{Name: "deploy", Description: "Ships releases"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.SetClaimMapper(ctx, "dept", identity.ClaimMapperSpec{ClaimName: "department"}); err != nil {
		t.Fatal(err)
	}
	s := identity.DefaultSettings()
	s.SMTP = &identity.SMTPSettings{Host: "smtp.example.com", Port: 587, Username: "mailer", Password: "smtp-secret", From: "noreply@example.com"}
	if err := ws.UpdateSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	admin := e.operator("root", console.RoleAdmin)
	viewer := e.operator("watcher", console.RoleViewer)
	bctx := browsertest.New(t, javascript, browserWait)
	signIn := func(b *browser) {
		t.Helper()
		base, _ := url.Parse(e.url(""))
		for _, c := range b.c.Jar.Cookies(base) {
			_, err := chromedp.Call(bctx, network.SetCookie, network.SetCookieParams{Name: c.Name, Value: c.Value, URL: e.url(""),
				Path: e.base, HTTPOnly: new(true), SameSite: network.CookieSameSiteStrict})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(state, title string) {
		t.Helper()
		checkPage(t, bctx, axe, javascript, state, title, *updateScreenshots && javascript)
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, actions...); err != nil {
			if html, herr := chromedp.Run(bctx, chromedp.Evaluate[string](`document.location.href`)); herr == nil {
				t.Logf("at %s", html)
			}
			t.Fatalf("%s: %v", what, err)
		}
	}
	signIn(admin)
	return &configJourney{e: e, ws: ws, alice: alice, viewer: viewer, bctx: bctx, check: check, run: run, signIn: signIn, javascript: javascript}
}
