package console_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"
	"github.com/pquerna/otp/totp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/internal/browsertest"
)

// focusJS describes the focused element (#id, else the tag and its name
// or first text) and says whether it shows a focus indicator (an outline
// or a box shadow) and whether it lies in the page's main landmark.
const focusJS = `(() => {
	const el = document.activeElement;
	if (!el || el === document.body || el === document.documentElement) {
		return {desc: "body", ring: true, main: false};
	}
	let desc;
	const tag = el.tagName.toLowerCase();
	if (el.id) {
		desc = "#" + el.id;
	} else if (tag === "input" || tag === "select" || tag === "textarea") {
		desc = tag + "[name=" + el.name + "]";
	} else {
		desc = tag + " " + (el.firstChild ? el.firstChild.textContent.trim() : "");
	}
	const cs = getComputedStyle(el);
	const ring = (cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== "none";
	const main = document.querySelector("main");
	return {desc: desc, ring: ring, main: !!main && main.contains(el) && el !== main};
})()`

// focused is what focusJS says.
type focused struct {
	Desc string `json:"desc"`
	Ring bool   `json:"ring"`
	Main bool   `json:"main"`
}

// keyboard drives a tab with key events only: no clicks, no focus set
// by a script.
type keyboard struct {
	t   *testing.T
	ctx context.Context
}

// press sends the keys (kb's names: kb.Tab, kb.Enter, "text").
func (k keyboard) press(what, keys string, opts ...chromedp.KeyOption) {
	k.t.Helper()
	if err := chromedp.Do(k.ctx, chromedp.KeyEvent(keys, opts...)); err != nil {
		k.t.Fatalf("%s: %v", what, err)
	}
}

// backTab presses Shift+Tab.
func (k keyboard) backTab(what string) {
	k.t.Helper()
	k.press(what, kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))
}

// focus returns what has the focus.
func (k keyboard) focus() focused {
	k.t.Helper()
	f, err := chromedp.Run(k.ctx, chromedp.Evaluate[focused](focusJS))
	if err != nil {
		k.t.Fatalf("the focus: %v", err)
	}
	return f
}

// at asserts the focus is on want (focusJS's description), showing a
// focus indicator.
func (k keyboard) at(step, want string) {
	k.t.Helper()
	f := k.focus()
	if f.Desc != want {
		k.t.Fatalf("%s: the focus is on %q, want %q", step, f.Desc, want)
	}
	if want != "body" && !f.Ring {
		k.t.Errorf("%s: %s shows no focus indicator", step, want)
	}
}

// tabTo presses Tab (or Shift+Tab when back) n times and asserts the
// focus ends on want.
func (k keyboard) tabTo(step string, n int, want string) {
	k.t.Helper()
	for range n {
		k.press(step, kb.Tab)
	}
	k.at(step, want)
}

// shows waits until the page (loaded whole) makes expr true.
func (k keyboard) shows(step, expr string) {
	k.t.Helper()
	waitFor(k.t, k.ctx, step, expr)
}

// noTrap presses Tab 60 times from where the focus is and asserts that
// they make one whole pass through the focusable elements of the main
// landmark, exactly want in its order, leave it, and leave the page's
// controls for the browser's (no element on the page has the focus): no
// element keeps the focus. Then it presses Tab until the focus is
// back on the element the first Tab reached, showing that the Tabs
// cycle, and returns with the focus there: as after one Tab.
func (k keyboard) noTrap(page string, want []string) {
	k.t.Helper()
	seq := []focused{k.focus()}
	for range 60 {
		k.press(page+": 60 Tabs", kb.Tab)
		f := k.focus()
		if f.Desc != "body" && !f.Ring {
			k.t.Errorf("%s: %s shows no focus indicator", page, f.Desc)
		}
		seq = append(seq, f)
	}
	// One whole pass through main: from the Tab that enters it to the
	// one that leaves it.
	var pass []string
	left := false
	for i := 1; i < len(seq); i++ {
		if !seq[i].Main || seq[i-1].Main {
			continue
		}
		for j := i; j < len(seq); j++ {
			if !seq[j].Main {
				left = true
				break
			}
			pass = append(pass, seq[j].Desc)
		}
		break
	}
	if !left {
		k.t.Errorf("%s: 60 Tabs made no whole pass through the main landmark: %v", page, seq)
	}
	if !slices.ContainsFunc(seq, func(f focused) bool { return f.Desc == "body" }) {
		k.t.Errorf("%s: 60 Tabs never left the page's controls for the browser's: %v", page, seq)
	}
	if diff := cmp.Diff(want, pass); diff != "" {
		k.t.Errorf("%s: a pass of Tabs through main (-want +got):\n%s", page, diff)
	}
	first := seq[1].Desc
	for i := 0; ; i++ {
		if i == 200 {
			k.t.Fatalf("%s: 200 more Tabs never came back to %s", page, first)
		}
		k.press(page+": back to the start", kb.Tab)
		if k.focus().Desc == first {
			return
		}
	}
}

// TestBrowserKeyboard walks the console's main journeys in headless
// Chromium with the keyboard alone (Tab, Shift+Tab, Enter, Space, Escape
// and typed keys; no click, no focus set by a script): the sign-in
// through the provider's pages with a second factor, finding a user,
// unlocking them and revoking a session through the confirm dialog, and
// signing out. After each step it asserts which element has the focus,
// that the element shows a focus indicator, and what the page says; on
// each page, 60 Tabs pass through every focusable element of the main
// landmark, in order, and out of it (no keyboard trap).
func TestBrowserKeyboard(t *testing.T) {
	browsertest.Chromium(t)
	e := newEnvFrom(t, "/console/", nil, time.Now().Truncate(time.Second))
	ctx := t.Context()
	ws := e.workspace("acme")
	users := map[string]identity.User{}
	for _, name := range []string{"ada", "lena", "leo"} {
		u, err := ws.CreateUser(ctx, identity.NewUser{Username: name, Email: name + "@example.com", FullName: "User " + name, Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		users[name] = u
	}
	lena := users["lena"]
	// lena: two sessions, then locked by wrong passwords.
	for range 2 {
		if _, err := ws.CreateSession(ctx, lena.ID, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range identity.DefaultLockoutThreshold {
		ws.Authenticate(ctx, lena.Username, "wrong password")
	}
	// The operator kim, with a second factor.
	e.operator("kim", console.RoleAdmin)
	kim, _ := strconv.ParseInt(e.operatorID("kim"), 10, 64)
	en, err := e.ops.BeginTOTPEnrollment(ctx, kim)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := totp.GenerateCode(en.Secret, e.clock.Now())
	if _, err := e.ops.ConfirmTOTPEnrollment(ctx, kim, code); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * time.Second) // the next code, not the one used

	k := keyboard{t, browsertest.New(t, true, browserWait)}
	// The window has the focus, as the one a person types in: a headless
	// tab has none, and shows no focus on the element a page autofocuses.
	if _, err := chromedp.Call(k.ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}

	if !t.Run("sign-in", func(t *testing.T) {
		k.t = t
		if err := chromedp.Do(k.ctx, chromedp.Navigate(e.url(""))); err != nil {
			t.Fatal(err)
		}
		k.shows("the provider's sign-in", `document.querySelector("h1").textContent === "Sign in"`)
		k.at("the sign-in page", "#login")
		k.noTrap("the sign-in page", []string{"#login", "#password", "button Sign in"})
		k.at("after the walk", "#password")
		k.backTab("back to the username")
		k.at("Shift+Tab", "#login")
		k.press("the username", "kim")
		k.tabTo("Tab", 1, "#password")
		k.press("the password", "correct horse battery")
		k.press("Enter", kb.Enter)
		k.shows("the second factor's page", `!!document.getElementById("code")`)
		k.shows("the second factor's page", `document.querySelector("h1").textContent === "Two-step verification"`)
		k.at("the second factor's page", "#code")
		k.noTrap("the second factor's page", []string{"#code", "summary Use a recovery code instead", "button Verify"})
		k.at("after the walk", "summary Use a recovery code instead")
		k.backTab("back to the code")
		k.at("Shift+Tab", "#code")
		code, err := totp.GenerateCode(en.Secret, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		k.press("the code", code)
		k.press("Enter", kb.Enter)
		k.shows("the dashboard", `document.querySelector("h1").textContent === "Dashboard"`)
		k.shows("the dashboard", `document.querySelector(".who strong").textContent === "kim" && document.getElementById("ws-acme") !== null`)
		k.at("the dashboard", "body")
		k.tabTo("the skip link", 1, "a Skip to content")
		k.press("Enter", kb.Enter)
		k.at("the skip link's target", "#main")
		k.noTrap("the dashboard", []string{"a acme", "a operators"})
		k.at("after the walk", "a acme")
		k.press("Enter", kb.Enter)
	}) {
		return
	}
	if !t.Run("find a user", func(t *testing.T) {
		k.t = t
		k.shows("the users page", `document.querySelector("h1").textContent === "Users"`)
		k.shows("the users page", `document.getElementById("results-heading").textContent === "Users 1–3 of 3"`)
		k.at("the users page", "body")
		k.tabTo("the skip link", 1, "a Skip to content")
		k.press("Enter", kb.Enter)
		k.at("the skip link's target", "#main")
		k.tabTo("the search", 1, "#q")
		k.press("a prefix", "le")
		k.shows("the search", `document.getElementById("results-heading").textContent === "Users 1–2 of 2"`)
		k.at("after the search", "#q")
		k.noTrap("the users found", []string{"#q", "input[name=disabled]", "input[name=locked]", "input[name=mfa]",
			"input[name=unverified]", "#key", "#value", "button Search", "a Clear",
			"#select-2", "a lena", "#select-3", "a leo", "#bulk-action",
			"button Apply to selected…", "#search-action", "button Apply to the search…"})
		k.at("after the walk", "input[name=disabled]")
		k.tabTo("the first result", 9, "a lena")
		k.press("Enter", kb.Enter)
		k.shows("lena's page", `document.querySelector("h1").textContent === "User lena"`)
	}) {
		return
	}
	if !t.Run("unlock and revoke", func(t *testing.T) {
		k.t = t
		k.shows("lena's page", `document.querySelector("#security .bad").textContent === "locked"`)
		k.at("lena's page", "body")
		k.tabTo("the skip link", 1, "a Skip to content")
		k.press("Enter", kb.Enter)
		k.at("the skip link's target", "#main")
		k.noTrap("lena's page", []string{"a All users", "#email", "#fullName", "button Save profile",
			"button Disable user", "button Mark email verified",
			"button Send a password reset email", "button Unlock", "#key", "#value",
			"button Set attribute", "#role", "button Assign role", "#groupq",
			"button Find groups", "button Revoke", "button Revoke", "button Revoke every session",
			"#client", "#scopes", "button Preview", "a The trail on its own page", "a Delete lena permanently…"})
		k.at("after the walk", "a All users")
		k.tabTo("unlock", 7, "button Unlock")
		k.press("Space", " ")
		k.shows("unlocked", noticeIs("Account unlocked."))
		k.at("unlocked", "div Account unlocked.")
		if st, err := ws.GetLockState(ctx, lena.ID); err != nil || st.Locked {
			t.Errorf("lena's lock state: %+v, %v; want unlocked", st, err)
		}
		k.noTrap("lena's page unlocked", []string{"a All users", "#email", "#fullName", "button Save profile",
			"button Disable user", "button Mark email verified",
			"button Send a password reset email", "#key", "#value",
			"button Set attribute", "#role", "button Assign role", "#groupq",
			"button Find groups", "button Revoke", "button Revoke", "button Revoke every session",
			"#client", "#scopes", "button Preview", "a The trail on its own page", "a Delete lena permanently…"})
		k.at("after the walk", "a All users")

		// Revoke her first session: the confirm dialog opens with the
		// focus on its confirming button; Escape closes it and gives the
		// focus back; Enter confirms.
		k.tabTo("the first session's Revoke", 14, "button Revoke")
		k.press("Enter", kb.Enter)
		k.shows("the dialog", `document.querySelector("dialog.confirm[open]") !== null`)
		k.shows("the dialog's question", `document.getElementById("confirm-question").textContent.startsWith("Revoke the session of lena started ") &&
			document.getElementById("confirm-yes").textContent === "Revoke"`)
		k.at("the dialog", "#confirm-yes")
		k.press("Escape", kb.Escape)
		k.shows("the dialog closed", `document.querySelector("dialog.confirm[open]") === null`)
		k.at("Escape", "button Revoke")
		if sessions, err := ws.ListSessions(ctx, lena.ID, nil); err != nil || sessions.Items[0].RevokedAt != nil {
			t.Fatalf("Escape revoked the session: %v", err)
		}
		k.press("Enter", kb.Enter)
		k.at("the dialog again", "#confirm-yes")
		k.tabTo("Tab in the dialog", 1, "#confirm-no")
		k.tabTo("Tab in the dialog: it stays there", 1, "#confirm-yes")
		k.tabTo("Tab in the dialog", 1, "#confirm-no")
		k.backTab("Shift+Tab in the dialog")
		k.at("Shift+Tab in the dialog", "#confirm-yes")
		k.press("Enter", kb.Enter)
		k.shows("revoked", noticeIs("Session revoked."))
		k.at("revoked", "div Session revoked.")
		sessions, err := ws.ListSessions(ctx, lena.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		var revoked []bool
		for _, s := range sessions.Items {
			revoked = append(revoked, s.RevokedAt != nil)
		}
		if diff := cmp.Diff([]bool{true, false}, revoked); diff != "" {
			t.Errorf("lena's sessions revoked, oldest first (-want +got):\n%s", diff)
		}
		k.noTrap("lena's page, a session revoked", []string{"a All users", "#email", "#fullName", "button Save profile",
			"button Disable user", "button Mark email verified",
			"button Send a password reset email", "#key", "#value",
			"button Set attribute", "#role", "button Assign role", "#groupq",
			"button Find groups", "button Revoke", "button Revoke every session",
			"#client", "#scopes", "button Preview", "a The trail on its own page", "a Delete lena permanently…"})
		k.at("after the walk", "a All users")
	}) {
		return
	}
	t.Run("sign out", func(t *testing.T) {
		k.t = t
		// Back from main through the navigation to the header's button.
		for _, want := range []string{"a Settings", "a Audit", "a Signing keys", "a API keys & clients", "a Webhooks",
			"a Mappers", "a Roles & groups", "a Users", "a Workspaces", "a Dashboard", "button Sign out"} {
			k.backTab("Shift+Tab")
			k.at("Shift+Tab", want)
		}
		k.press("Enter", kb.Enter)
		// The console's session has ended; the provider asks whether to
		// end the operator's sign-in there too.
		k.shows("the provider's sign-out", `document.querySelector("h1").textContent === "Sign out of operators?"`)
		k.at("the provider's sign-out", "body")
		k.noTrap("the provider's sign-out", []string{"button Sign out", "a Stay signed in"})
		k.at("after the walk", "button Sign out")
		k.press("Enter", kb.Enter)
		// Back at the console, which sends the browser to sign in again.
		k.shows("signed out", `document.querySelector("h1").textContent === "Sign in" && location.pathname === "/t/operators/login"`)
		k.at("signed out", "#login")
	})
}
