package identity

import (
	"context"

	"github.com/identitylib/identity/store"
)

// MailTest is a test email: it tells its reader that the workspace's
// SMTP settings deliver, and holds no link.
const MailTest MailKind = "test"

// TestEmailJob is the EventType of the deliveries that are test emails
// (see ListEmailJobs). Like EmailVerificationJob it is no event type.
const TestEmailJob EventType = "email.test"

// SendTestEmail queues a test email to the address to, through the
// workspace's SMTP settings as they are when it is sent, and returns the
// id of its delivery (GetDelivery tells whether the server took it, and
// its last error if not): what an administrator does after changing the
// settings. The email names the workspace and holds no link. to must be
// a plain email address (CodeInvalid on "to"); a workspace without SMTP
// settings is CodeConflict. Under the workspace's ThrottlePolicy an
// address gets at most one test email per MailInterval: a request sooner
// is CodeRateLimited. A queued email is recorded in the audit trail
// (email.test_sent, with the address), and sent by the dispatcher of the
// delivery queue like every email.
func (w *Workspace) SendTestEmail(ctx context.Context, to string) (int64, error) {
	var p problems
	checkEmail(&p, "to", to)
	if err := p.err("invalid address"); err != nil {
		return 0, err
	}
	var settings Settings
	err := w.view(ctx, func(tx store.Tx) (err error) {
		settings, err = w.settings(tx)
		return err
	})
	if err != nil {
		return 0, fromStore(err, "workspace")
	}
	if settings.SMTP == nil {
		return 0, errorf(CodeConflict, "workspace %q has no SMTP settings", w.slug)
	}
	retry, err := w.takeMail(ctx, settings.Throttle, MailTest, to)
	if err != nil {
		return 0, err
	}
	if retry > 0 {
		return 0, &Error{Code: CodeRateLimited, RetryAfter: retry,
			Message: "a test email went to this address moments ago: another can follow in " + plural(minutesUp(retry), "minute")}
	}
	var id int64
	err = w.update(ctx, func(tx store.Tx) error {
		settings, err := w.settings(tx)
		if err != nil {
			return err
		}
		if settings.SMTP == nil {
			return errorf(CodeConflict, "workspace %q has no SMTP settings", w.slug)
		}
		id, err = w.enqueueEmailJobID(tx, emailJob{Kind: MailTest, Email: to, Locale: RequestInfoFrom(ctx).Locale})
		if err != nil {
			return err
		}
		return w.audit(ctx, tx, auditEntry{action: AuditTestEmailSent, target: w.asTarget(), changes: auditChanges{}.set("to", nil, to)})
	})
	if err != nil {
		return 0, fromStore(err, "workspace")
	}
	return id, nil
}
