package identity_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
	"github.com/identitylib/identity/store"
)

// Verification email through identity.Queue: what an attempt sends, what
// its result leads to, and ConfirmEmail, on the fake clock.

// testSMTP are the SMTP settings of the verification tests.
func testSMTP() identity.SMTPSettings {
	return identity.SMTPSettings{
		Host: "smtp.example.com", Port: 587, Username: "mailer", Password: "smtp-secret",
		From: "noreply@example.com", FromName: "Acme", VerifyURL: "https://app.example.com/verify?token={token}",
	}
}

// setSMTP configures the workspace's SMTP server (nil removes it).
func (e *testEnv) setSMTP(m *identity.SMTPSettings) {
	e.t.Helper()
	err := e.ws.UpdateSettings(e.ctx, identity.Settings{PasswordPolicy: identity.DefaultPasswordPolicy(), SMTP: m})
	if err != nil {
		e.t.Fatalf("UpdateSettings: %v", err)
	}
}

var linkPattern = regexp.MustCompile(`^https://app\.example\.com/verify\?token=(idv_[0-9a-f]{16}_[A-Za-z0-9_-]{43})$`)

// sendMail leases the mail job with the id, begins its attempt and
// records that the server took it; it returns the attempt's token.
func (e *testEnv) sendMail(q *identity.Queue, id int64) string {
	e.t.Helper()
	job := e.leaseOne(q, id)
	att, err := q.Begin(e.ctx, owner, job)
	if err != nil {
		e.t.Fatalf("Begin: %v", err)
	}
	if att.Mail == nil {
		e.t.Fatalf("Begin = %+v, want a mail", att)
	}
	m := linkPattern.FindStringSubmatch(att.Mail.Link)
	if m == nil {
		e.t.Fatalf("link %q does not match %s", att.Mail.Link, linkPattern)
	}
	if out, err := q.Record(e.ctx, owner, job, identity.Result{At: att.At, Status: 250}); err != nil || out.Status != identity.DeliverySucceeded {
		e.t.Fatalf("Record = %+v, %v", out, err)
	}
	return m[1]
}

// TestVerificationEmail: creating a user queues a mail job; its attempt
// holds the workspace's server and a link with a fresh token valid 24 h;
// the server taking it succeeds the job; the token verifies the email
// once.
func TestVerificationEmail(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setSMTP(new(testSMTP()))
	q := e.queue(nil)
	created := e.clock.Now()
	bob := e.user("bob")
	jobs, err := listItems(e.ws.ListEmailJobs(e.ctx, nil))
	if err != nil || len(jobs) != 1 {
		t.Fatalf("EmailJobs = %+v, %v", jobs, err)
	}
	wantJob := identity.Delivery{ID: 1, EventID: jobs[0].EventID, EventType: "email.verification", Status: "pending",
		UserID: bob.ID, NextAttemptAt: created, CreatedAt: created}
	if diff := cmp.Diff([]identity.Delivery{wantJob}, jobs); diff != "" {
		t.Errorf("EmailJobs (-want +got):\n%s", diff)
	}
	due, err := q.ListDue(e.ctx, q.Now(), 10)
	if diff := cmp.Diff([]identity.DueJob{{Workspace: "acme", ID: 1, Lane: identity.Lane{Workspace: "acme"}, Open: true}}, due); err != nil || diff != "" {
		t.Errorf("Due (%v) (-want +got):\n%s", err, diff)
	}
	e.clock.Advance(time.Second)
	job := e.leaseOne(q, 1)
	if job.Kind != identity.MailJob || job.EventType != identity.EmailVerificationJob || job.Lane() != (identity.Lane{Workspace: "acme"}) {
		t.Errorf("job %+v, lane %+v", job, job.Lane())
	}
	att, err := q.Begin(e.ctx, owner, job)
	if err != nil {
		t.Fatal(err)
	}
	server := testSMTP()
	server.TLS = "starttls"
	want := identity.Attempt{At: q.Now(), Mail: &identity.VerificationMail{Kind: identity.MailVerifyEmail,
		Server: server, From: mail.Address{Name: "Acme", Address: "noreply@example.com"},
		To: mail.Address{Name: "User bob", Address: "bob@example.com"}, Link: att.Mail.Link,
		Lifetime: 24 * time.Hour, Date: q.Now(), Workspace: "acme", Accent: "#1d5fc9",
	}}
	if diff := cmp.Diff(want, att); diff != "" {
		t.Errorf("attempt (-want +got):\n%s", diff)
	}
	m := linkPattern.FindStringSubmatch(att.Mail.Link)
	if m == nil {
		t.Fatalf("link %q", att.Mail.Link)
	}
	token := m[1]
	out, err := q.Record(e.ctx, owner, job, identity.Result{At: att.At, Status: 250})
	if diff := cmp.Diff(identity.Outcome{Status: identity.DeliverySucceeded}, out); err != nil || diff != "" {
		t.Errorf("Record (%v) (-want +got):\n%s", err, diff)
	}
	if jobs, err = listItems(e.ws.ListEmailJobs(e.ctx, nil)); err != nil {
		t.Fatal(err)
	}
	if j := jobs[0]; j.Status != "succeeded" || j.Attempts != 1 || j.LastStatus != 250 || !j.NextAttemptAt.IsZero() {
		t.Errorf("job after success: %+v", j)
	}

	e.clock.Advance(24*time.Hour - time.Microsecond)
	updated := e.hook(identity.EventUserUpdated)
	u, err := e.ws.ConfirmEmail(e.ctx, token)
	if err != nil || !u.EmailVerified || u.ID != bob.ID || u.Version == bob.Version {
		t.Fatalf("ConfirmEmail = %+v, %v", u, err)
	}
	_, err = e.ws.ConfirmEmail(e.ctx, token)
	identitytest.WantCode(t, err, identity.CodeTokenUsed)
	// The confirmation, not the refused second one, emitted user.updated.
	var events []string
	for _, p := range e.payloads(updated) {
		var body struct {
			Type string `json:"type"`
			Data struct {
				Username      string `json:"username"`
				EmailVerified bool   `json:"emailVerified"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(p), &body); err != nil {
			t.Fatal(err)
		}
		events = append(events, fmt.Sprintf("%s %s verified=%v", body.Type, body.Data.Username, body.Data.EmailVerified))
	}
	if diff := cmp.Diff([]string{"user.updated bob verified=true"}, events); diff != "" {
		t.Errorf("events of the confirmations (-want +got):\n%s", diff)
	}
	if got, err := e.ws.GetUser(e.ctx, bob.ID); err != nil || !got.EmailVerified {
		t.Errorf("after a second confirmation: %+v, %v; want the email verified", got, err)
	}
	identitytest.WantCode(t, e.ws.SendVerificationEmail(e.ctx, bob.ID), identity.CodeConflict)
}

// TestVerificationTokenLifetime: a token works until its lifetime (24 h
// by default, SMTPSettings.TokenLifetime) from sending is over.
func TestVerificationTokenLifetime(t *testing.T) {
	tests := []struct {
		setting, lifetime time.Duration
	}{
		{0, 24 * time.Hour},
		{5 * time.Minute, 5 * time.Minute},
		{7 * 24 * time.Hour, 7 * 24 * time.Hour},
	}
	for _, tt := range tests {
		for _, after := range []time.Duration{tt.lifetime - time.Microsecond, tt.lifetime} {
			e := newTestEnv(t, nil)
			m := testSMTP()
			m.TokenLifetime = tt.setting
			e.setSMTP(&m)
			q := e.queue(nil)
			e.user("bob")
			job := e.leaseOne(q, 1)
			att, err := q.Begin(e.ctx, owner, job)
			if err != nil {
				t.Fatal(err)
			}
			if att.Mail.Lifetime != tt.lifetime {
				t.Errorf("TokenLifetime %v: the mail says %v, want %v", tt.setting, att.Mail.Lifetime, tt.lifetime)
			}
			e.clock.Advance(after)
			_, err = e.ws.ConfirmEmail(e.ctx, linkPattern.FindStringSubmatch(att.Mail.Link)[1])
			want := identity.Code("")
			if after == tt.lifetime {
				want = identity.CodeTokenExpired
			}
			if got := identity.ErrorCode(err); got != want {
				t.Errorf("TokenLifetime %v, confirmed after %v: %q (%v), want %q", tt.setting, after, got, err, want)
			}
		}
	}
}

// TestVerificationEmailDropped: a job that is no longer worth sending is
// dropped unsent and fails at once with its reason.
func TestVerificationEmailDropped(t *testing.T) {
	tests := []struct {
		name   string
		change func(e *testEnv, bob identity.User)
		reason string
	}{
		{"SMTP removed", func(e *testEnv, _ identity.User) { e.setSMTP(nil) },
			"SMTP is not configured in the workspace any more"},
		{"email changed", func(e *testEnv, bob identity.User) {
			if _, err := e.ws.UpdateUser(e.ctx, bob.ID, identity.UserUpdate{Email: "robert@example.com", FullName: bob.FullName}); err != nil {
				e.t.Fatal(err)
			}
		}, "email changed: only the newest address gets mail"},
		{"verified by another link", func(e *testEnv, bob identity.User) {
			if err := e.ws.SendVerificationEmail(e.ctx, bob.ID); err != nil {
				e.t.Fatal(err)
			}
			if _, err := e.ws.ConfirmEmail(e.ctx, e.sendMail(e.queue(nil), 2)); err != nil {
				e.t.Fatal(err)
			}
		}, "email verified already"},
		{"unreadable job", func(e *testEnv, _ identity.User) {
			err := e.st.Store.Update(e.ctx, func(tx store.Tx) error {
				d, err := tx.Delivery("acme", 1)
				if err != nil {
					return err
				}
				d.Payload = []byte(`{"kind":"something_else"}`)
				return tx.PutDelivery("acme", d)
			})
			if err != nil {
				e.t.Fatal(err)
			}
		}, "unreadable email job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			e.setSMTP(new(testSMTP()))
			q := e.queue(nil)
			bob := e.user("bob")
			tt.change(e, bob)
			job := e.leaseOne(q, 1)
			att, err := q.Begin(e.ctx, owner, job)
			if err != nil {
				t.Fatal(err)
			}
			if att.Mail != nil || att.Drop == nil || att.Drop.Error() != tt.reason {
				t.Fatalf("Begin = %+v, want dropped: %s", att, tt.reason)
			}
			out, err := q.Record(e.ctx, owner, job, identity.Result{At: att.At, Err: att.Drop, Permanent: true})
			if diff := cmp.Diff(identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 1}, out); err != nil || diff != "" {
				t.Errorf("Record (%v) (-want +got):\n%s", err, diff)
			}
			d, err := e.ws.GetDelivery(e.ctx, 1)
			if err != nil || d.Status != "failed" || d.LastError != tt.reason || d.Attempts != 1 {
				t.Errorf("job %+v, %v", d, err)
			}
		})
	}
}

// TestMailRetries: a failed mail attempt is retried on the webhook
// schedule; a permanent failure (a 5xx reply to the recipient) fails the
// job at once; a failed job can be queued again.
func TestMailRetries(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setSMTP(new(testSMTP()))
	q := e.queue(nil)
	e.user("bob")
	now := q.Now()
	out := e.attempt(q, e.leaseOne(q, 1), identity.Result{Status: 451, Err: errors.New("451 try later")})
	if out.Status != identity.DeliveryPending {
		t.Fatalf("a temporary failure: %+v", out)
	}
	within(t, "first mail retry", out.Next.Sub(now), 5*time.Second)
	e.clock.Set(out.Next)
	out = e.attempt(q, e.leaseOne(q, 1), identity.Result{Status: 550, Err: errors.New("550 no such user"), Permanent: true})
	if diff := cmp.Diff(identity.Outcome{Status: identity.DeliveryFailed, Exhausted: 1}, out); diff != "" {
		t.Errorf("a permanent failure (-want +got):\n%s", diff)
	}
	if err := e.ws.RetryDelivery(e.ctx, 1); err != nil {
		t.Fatal(err)
	}
	jobs, err := listItems(e.ws.ListEmailJobs(e.ctx, nil))
	if err != nil || len(jobs) != 1 || jobs[0].Status != "pending" || jobs[0].Attempts != 0 || jobs[0].LastStatus != 550 {
		t.Errorf("EmailJobs after RetryDelivery = %+v, %v", jobs, err)
	}
	// Eight failed attempts exhaust it, as for webhooks.
	for attempt := 1; attempt <= 8; attempt++ {
		e.clock.Advance(13 * time.Hour)
		out = e.attempt(q, e.leaseOne(q, 1), identity.Result{Status: 421, Err: errors.New("421 closing")})
		if want := attempt == 8; (out.Status == identity.DeliveryFailed) != want {
			t.Fatalf("failure %d: %+v", attempt, out)
		}
	}
}

// TestConfirmEmailRefusals: malformed, unknown, forged, foreign and
// outdated tokens.
func TestConfirmEmailRefusals(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setSMTP(new(testSMTP()))
	q := e.queue(nil)
	bob := e.user("bob")
	token := e.sendMail(q, 1)
	other, err := e.svc.CreateWorkspace(e.ctx, "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	forged := token[:len(token)-1] + "A"
	if strings.HasSuffix(token, "A") {
		forged = token[:len(token)-1] + "B"
	}
	for _, bad := range []string{"", "idv_", token[:len(token)-1], "ids_" + token[4:], forged,
		"idv_0123456789abcdef_" + token[len(token)-43:]} {
		_, err := e.ws.ConfirmEmail(e.ctx, bad)
		identitytest.WantCode(t, err, identity.CodeTokenInvalid)
	}
	_, err = other.ConfirmEmail(e.ctx, token)
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)
	// Sent to an address the user no longer has.
	if _, err := e.ws.UpdateUser(e.ctx, bob.ID, identity.UserUpdate{Email: "robert@example.com", FullName: bob.FullName}); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.ConfirmEmail(e.ctx, token)
	identitytest.WantCode(t, err, identity.CodeTokenInvalid)
	// The new address gets its own link, which works.
	u, err := e.ws.ConfirmEmail(e.ctx, e.sendMail(q, 2))
	if err != nil || !u.EmailVerified || u.Email != "robert@example.com" {
		t.Errorf("ConfirmEmail of the new address = %+v, %v", u, err)
	}
}

// TestSendVerificationEmail: a new link for a user, refused without SMTP
// settings or for a verified email.
func TestSendVerificationEmail(t *testing.T) {
	e := newTestEnv(t, nil)
	identitytest.WantCode(t, e.ws.SendVerificationEmail(e.ctx, e.ada.ID), identity.CodeConflict) // no SMTP
	if jobs, err := listItems(e.ws.ListEmailJobs(e.ctx, nil)); err != nil || len(jobs) != 0 {
		t.Errorf("EmailJobs without SMTP = %+v, %v", jobs, err)
	}
	e.setSMTP(new(testSMTP()))
	identitytest.WantCode(t, e.ws.SendVerificationEmail(e.ctx, 999), identity.CodeNotFound)
	if err := e.ws.SendVerificationEmail(e.ctx, e.ada.ID); err != nil {
		t.Fatal(err)
	}
	jobs, err := listItems(e.ws.ListEmailJobs(e.ctx, nil))
	if err != nil || len(jobs) != 1 || jobs[0].UserID != e.ada.ID {
		t.Errorf("EmailJobs = %+v, %v", jobs, err)
	}
}

// TestVerificationStoreFailures: a failing store makes Begin and
// ConfirmEmail internal errors, and nothing is half-written.
func TestVerificationStoreFailures(t *testing.T) {
	e := newTestEnv(t, nil)
	e.setSMTP(new(testSMTP()))
	q := e.queue(nil)
	bob := e.user("bob")
	job := e.leaseOne(q, 1)
	e.st.breakMethod("PutVerificationToken", errFlaky)
	_, err := q.Begin(e.ctx, owner, job)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.mend()
	e.st.breakMethod("User", errFlaky)
	_, err = q.Begin(e.ctx, owner, job)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.mend()
	if _, err := q.Begin(e.ctx, "dispatcher-2", job); !errors.Is(err, identity.ErrLeaseLost) {
		t.Errorf("Begin by another owner = %v, want ErrLeaseLost", err)
	}
	att, err := q.Begin(e.ctx, owner, job)
	if err != nil {
		t.Fatal(err)
	}
	token := linkPattern.FindStringSubmatch(att.Mail.Link)[1]
	// The user's write failing fails the confirmation and changes nothing.
	e.st.breakMethod("PutUser", errFlaky)
	_, err = e.ws.ConfirmEmail(e.ctx, token)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.mend()
	if u, err := e.ws.GetUser(e.ctx, bob.ID); err != nil || u.EmailVerified {
		t.Errorf("after a failed confirmation: %+v, %v; want the email unverified", u, err)
	}
	e.st.breakMethod("VerificationToken", errFlaky)
	_, err = e.ws.ConfirmEmail(e.ctx, token)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.mend()
	e.st.set(false, true)
	_, err = e.ws.ConfirmEmail(e.ctx, token)
	identitytest.WantCode(t, err, identity.CodeInternal)
	e.st.mend()
	if u, err := e.ws.ConfirmEmail(e.ctx, token); err != nil || !u.EmailVerified {
		t.Errorf("ConfirmEmail after the store recovered = %+v, %v", u, err)
	}
}
