package main

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/mailtest"
)

// resetLinkTemplate is the link of the password reset emails of these
// tests, as the page that takes the token would ask for it.
const resetLinkTemplate = "https://app.acme.test/reset?token={token}"

// emailJob is what TestPasswordResetByEmail compares of an email job.
type emailJob struct {
	EventType  identity.EventType
	Status     identity.DeliveryStatus
	LastStatus int
	LastError  string
}

// TestPasswordResetByEmail: password reset emails asked for through the
// library go out from identityd serve, through its dispatcher, to a real
// SMTP server: the user's email carries a link whose token sets a new
// password (the old one stops working, the user's sessions are revoked,
// the token cannot be used twice), and a request for an address no user
// has returns the same result and sends nothing.
func TestPasswordResetByEmail(t *testing.T) {
	db, _ := newDB(t)
	ms := mailtest.NewServer(t, mailtest.Config{})
	mustRun(t, "-db", db, "workspace", "smtp", "-workspace", "acme",
		"-host", "127.0.0.1", "-port", strconv.Itoa(ms.Port), "-tls", "none",
		"-from", "noreply@acme.test", "-from-name", "Acme", "-verify-url", "https://app.acme.test/verify?token={token}")
	var uid int64
	var session identity.Session
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		u, err := ws.CreateUser(ctx, identity.NewUser{
			Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "correct horse battery",
		})
		if err != nil {
			t.Fatal(err)
		}
		uid = u.ID
		created, err := ws.CreateSession(ctx, uid, nil)
		if err != nil {
			t.Fatal(err)
		}
		session = created.Session
		opts := &identity.PasswordResetOptions{Link: resetLinkTemplate}
		known := ws.RequestPasswordReset(ctx, "ada@example.com", opts)
		unknown := ws.RequestPasswordReset(ctx, "nobody@example.com", opts)
		if known != nil || unknown != nil {
			t.Fatalf("RequestPasswordReset: known address %v, unknown address %v; want nil for both", known, unknown)
		}
	})

	// serve sends the verification email of the new user, the reset
	// email, and drops the job of the unknown address unsent.
	p := startServe(t, db)
	ms.WaitMessages(t, 2)
	waitFor(t, p.log, regexp.MustCompile(`msg="email attempt".* event=email.password_reset .*error="no enabled user has this address"`), procWait)
	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t, procWait); code != 0 {
		t.Fatalf("exit status %d after SIGTERM; log:\n%s", code, p.log)
	}

	msgs := ms.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want 2 (verification and reset)", len(msgs))
	}
	var reset mailtest.Parsed
	for _, m := range msgs {
		if diff := cmp.Diff([]string{"ada@example.com"}, m.To); diff != "" {
			t.Errorf("a message to someone else (-want +got):\n%s", diff)
		}
		if parsed := mailtest.Parse(t, m.Data); parsed.Subject == "Reset your password for acme" {
			reset = parsed
		}
	}
	link, err := url.Parse(reset.Link)
	if err != nil || reset.HTMLLink() != reset.Link {
		t.Fatalf("reset email: text link %q, HTML link %q (%v); text part:\n%s", reset.Link, reset.HTMLLink(), err, reset.Plain)
	}
	token := link.Query().Get("token")
	if want := "https://app.acme.test/reset?token=" + token; token == "" || reset.Link != want {
		t.Errorf("link %q, want %q with a token", reset.Link, want)
	}

	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		if _, err := ws.ResetPassword(ctx, token, "a new horse battery"); err != nil {
			t.Fatalf("ResetPassword: %v", err)
		}
		if _, err := ws.Authenticate(ctx, "ada", "correct horse battery"); identity.ErrorCode(err) != identity.CodeUnauthenticated {
			t.Errorf("the old password: %v, want unauthenticated", err)
		}
		if _, err := ws.Authenticate(ctx, "ada", "a new horse battery"); err != nil {
			t.Errorf("the new password: %v", err)
		}
		if s, err := ws.GetSession(ctx, session.ID); err != nil || s.RevokedAt == nil {
			t.Errorf("the session after the reset: %+v (%v), want revoked", s, err)
		}
		if _, err := ws.ResetPassword(ctx, token, "a third horse battery"); identity.ErrorCode(err) != identity.CodeTokenUsed {
			t.Errorf("the token again: %v, want token_used", err)
		}
		jobs, err := listItems(ws.ListEmailJobs(ctx, nil))
		if err != nil {
			t.Fatal(err)
		}
		var got []emailJob
		for _, j := range jobs {
			got = append(got, emailJob{j.EventType, j.Status, j.LastStatus, j.LastError})
		}
		want := []emailJob{
			{identity.EmailVerificationJob, identity.DeliverySucceeded, 250, ""},
			{identity.PasswordResetJob, identity.DeliverySucceeded, 250, ""},
			{identity.PasswordResetJob, identity.DeliveryFailed, 0, "no enabled user has this address"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("email jobs mismatch (-want +got):\n%s", diff)
		}
	})
}
