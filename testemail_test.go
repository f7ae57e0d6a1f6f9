package identity_test

import (
	"net/mail"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/identitytest"
)

// TestSendTestEmail: a test email is a mail job to the address typed,
// audited; its attempt holds the workspace's server, no link and no
// token; without
// SMTP settings it is a conflict, a bad address is invalid, and a second
// one within the mail interval is rate limited.
func TestSendTestEmail(t *testing.T) {
	e := newTestEnv(t, nil)
	_, err := e.ws.SendTestEmail(e.ctx, "admin@example.com")
	identitytest.WantCode(t, err, identity.CodeConflict)
	e.setSMTP(new(testSMTP()))
	_, err = e.ws.SendTestEmail(e.ctx, "Admin <admin@example.com>")
	identitytest.WantFields(t, err, []identity.FieldError{{Field: "to", Rule: identity.RuleFormat}})

	q := e.queue(nil)
	queued := e.clock.Now()
	id, err := e.ws.SendTestEmail(e.ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.ws.GetDelivery(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := identity.Delivery{ID: id, EventID: got.EventID, EventType: identity.TestEmailJob, Status: identity.DeliveryPending,
		NextAttemptAt: queued, CreatedAt: queued} // UserID 0: a test email names an address, as a reset does
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delivery (-want +got):\n%s", diff)
	}
	_, err = e.ws.SendTestEmail(e.ctx, "ada@example.com")
	identitytest.WantCode(t, err, identity.CodeRateLimited)

	job := e.leaseOne(q, id)
	att, err := q.Begin(e.ctx, owner, job)
	if err != nil || att.Mail == nil {
		t.Fatalf("Begin = %+v, %v", att, err)
	}
	server := testSMTP()
	server.TLS = identity.SMTPStartTLS
	wantMail := identity.VerificationMail{Kind: identity.MailTest, Server: server,
		From: mail.Address{Name: "Acme", Address: "noreply@example.com"}, To: mail.Address{Address: "ada@example.com"},
		Date: att.At, Workspace: "acme", Accent: identity.DefaultAccentColor}
	if diff := cmp.Diff(wantMail, *att.Mail); diff != "" {
		t.Errorf("mail (-want +got):\n%s", diff)
	}
	if out, err := q.Record(e.ctx, owner, job, identity.Result{At: att.At, Status: 250}); err != nil || out.Status != identity.DeliverySucceeded {
		t.Errorf("Record = %+v, %v", out, err)
	}

	page, err := e.ws.ListAuditRecords(e.ctx, &identity.AuditFilter{Action: string(identity.AuditTestEmailSent)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 1 {
		t.Fatalf("%d records, want 1", len(page.Records))
	}
	rec := page.Records[0]
	if rec.Target != (identity.AuditTarget{Kind: identity.TargetWorkspace, ID: "acme", Display: "acme"}) ||
		!cmp.Equal(rec.Changes, map[string]identity.AuditChange{"to": {After: "ada@example.com"}}) {
		t.Errorf("record %+v", rec)
	}

	// After the mail interval, another goes; removing SMTP settings drops
	// a queued one unsent.
	e.clock.Advance(identity.DefaultMailInterval)
	id, err = e.ws.SendTestEmail(e.ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	e.setSMTP(nil)
	att, err = q.Begin(e.ctx, owner, e.leaseOne(q, id))
	if err != nil || att.Mail != nil || att.Drop == nil {
		t.Errorf("Begin without SMTP = %+v, %v; want a drop", att, err)
	}
}
