package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

var (
	// otpauthSecret finds the secret of the otpauth:// URI a page shows.
	otpauthSecret = regexp.MustCompile(`otpauth://totp/[^"<\s]*[?&amp;]secret=([A-Z2-7]+)`)
	// pageRecoveryCode finds the recovery codes a page shows.
	pageRecoveryCode = regexp.MustCompile(`<code>([a-z2-7]{5}-[a-z2-7]{5})</code>`)
)

// TestRelyingPartyMFA: under `workspace policy -mfa required`, a relying
// party's code flow takes a user without a factor through enrolment on
// the hosted pages (QR code, secret, first code, ten recovery codes,
// Continue) and ends at the client with a code whose ID token verifies;
// the next sign-in asks for a code, which a recovery code answers once.
func TestRelyingPartyMFA(t *testing.T) {
	skipShort(t)
	ctx := context.Background()
	db, key := newDB(t)
	client := registerRP(t, db, "-name", "Relying Party")
	mustRun(t, "-db", db, "workspace", "policy", "-workspace", "acme", "-mfa", "required")
	p := startServe(t, db)
	uid := createUser(t, p.base, key, "ada")
	rp := newRelyingParty(t, ctx, p.base, client)

	f := newFlow(1)
	enrol := rp.submit(t, rp.get(t, rp.authURL(f)), "ada", "correct horse battery")
	m := otpauthSecret.FindStringSubmatch(enrol.body)
	if m == nil || !strings.Contains(enrol.body, `src="data:image/png;base64,`) {
		t.Fatalf("the enrolment step shows no otpauth URI or QR code (status %d):\n%s", enrol.status, enrol.body)
	}
	code, err := totp.GenerateCode(m[1], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	shown := rp.submit(t, enrol, code, "")
	var codes []string
	for _, m := range pageRecoveryCode.FindAllStringSubmatch(shown.body, -1) {
		codes = append(codes, m[1])
	}
	if len(codes) != 10 {
		t.Fatalf("the page after enrolment shows %d recovery codes, want 10:\n%s", len(codes), shown.body)
	}
	_, id := rp.tokens(t, ctx, f, rp.codeOf(t, rp.submit(t, shown, "", ""), f))
	if id.Subject != fmt.Sprint(uid) {
		t.Errorf("ID token subject %q, want %d", id.Subject, uid)
	}

	// A new browser: password, then the code step, answered with a
	// recovery code.
	rp.browser = newBrowser(t)
	g := newFlow(2)
	step := rp.submit(t, rp.get(t, rp.authURL(g)), "ada", "correct horse battery")
	if !strings.Contains(step.body, `name="code"`) || strings.Contains(step.body, "otpauth://") {
		t.Fatalf("the second sign-in's code step (status %d):\n%s", step.status, step.body)
	}
	rp.tokens(t, ctx, g, rp.codeOf(t, rp.submit(t, step, codes[0], ""), g))

	// The same recovery code again is refused on the page.
	rp.browser = newBrowser(t)
	h := newFlow(3)
	step = rp.submit(t, rp.get(t, rp.authURL(h)), "ada", "correct horse battery")
	again := rp.submit(t, step, codes[0], "")
	if again.location != "" || !strings.Contains(again.body, `name="code"`) {
		t.Errorf("a used recovery code: status %d, Location %q; want the code step again", again.status, again.location)
	}
}
